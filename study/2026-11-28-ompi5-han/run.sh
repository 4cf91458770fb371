#!/bin/bash
# Open MPI 5.0.11 (the PyPI wheel, make mpis) on the emulated two-rack-8 cluster: its default
# collective selection (coll/han outranks coll/tuned across nodes) against HAN off
# (--mca coll ^han, tuned's fixed decision), bcast and allreduce at 64 KiB and 1 MiB on 8 hosts.
# Run as root from the repository root: bash study/2026-11-28-ompi5-han/run.sh OUT_DIR
set -eu
OUT=${1:?OUT_DIR}
mkdir -p "$OUT"
export PATH=$PWD/.venv/bin:$PATH
O5=$PWD/.mpi/openmpi-5.0
commodel cluster up --spec examples/clusters/two-rack-8.yaml --name cmhan > "$OUT/up.log"
trap 'commodel cluster down --name cmhan > /dev/null' EXIT
for coll in bcast allreduce; do
  for variant in default nohan; do
    extra=()
    [ "$variant" = nohan ] && extra=(--mca coll ^han)
    commodel cluster mpirun --name cmhan --mpirun "$O5/bin/mpirun" "${extra[@]}" -- \
      "$O5/bin/python" -m commodel measure collective --collective "$coll" \
      --sizes 65536,1048576 --min-reps 10 --max-reps 20 --db "$OUT/$coll-$variant.duckdb" --quiet \
      2>/dev/null | tee "$OUT/$coll-$variant.txt"
  done
done
