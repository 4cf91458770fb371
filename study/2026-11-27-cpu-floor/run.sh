#!/bin/bash
# On two-rack-8, one rank a host (pairs inside a rack: 0-1, 2-3 in rack 0, 4-5, 6-7 in
# rack 1), three runs of each:
#   exchange: K pairs at work among P ranks, the others idle (exchange.py), 64 B and 1 KiB
#             (RUNS P:K ...);
#   token:    a token around the ring of P ranks (token_ring.py), 64 B and 1 KiB.
# Root, venv active. PARTS="exchange token" by default; writes PART.log. SPEC=two-rack-16
# (with RUNS, TOKEN_RANKS up to 16) writes PART-16.log.
set -u
cd "$(dirname "$0")" || exit 1
PY=$(command -v python3)
SPEC=${SPEC:-two-rack-8}
SUFFIX=$([ $SPEC = two-rack-8 ] || echo -${SPEC##*-})
commodel cluster up --spec ../../examples/clusters/$SPEC.yaml --name cmfloor >/dev/null || exit 1
trap 'commodel cluster down --name cmfloor >/dev/null' EXIT
for part in ${PARTS:-exchange token}; do
  for m in ${SIZES:-64 1024}; do
    if [ $part = exchange ]; then
      for pk in ${RUNS:-2:1 4:1 4:2 6:3 8:1 8:2 8:3 8:4}; do
        for rep in 1 2 3; do
          commodel cluster mpirun --name cmfloor --hosts ${pk%%:*} -- \
            "$PY" exchange.py ${pk##*:} $m ${STEPS:-4000} 2>/dev/null | grep '^ranks'
        done
      done
    else
      for p in ${TOKEN_RANKS:-2 4 6 8}; do
        for rep in 1 2 3; do
          commodel cluster mpirun --name cmfloor --hosts $p -- \
            "$PY" token_ring.py $m ${ROUNDS:-1000} 2>/dev/null | grep '^ranks'
        done
      done
    fi
  done > $part$SUFFIX.log
done
