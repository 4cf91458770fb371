#!/bin/bash
# The rounds of rounds.py on dev clusters of the held-out study (issue 38), one at a time:
# the pairwise exchange's steps (shift-s) and, from the largest rack, flows to distinct
# hosts outside it one way (up) and both ways at once (both).
# Usage (root, repository root, venv on PATH, nothing else measuring):
#   bash study/2026-11-30-pairwise-timeouts/dev/run.sh DRAWS OUT
# DRAWS: the rebuilt dev draws (their spec.yaml; ../../2026-11-29-held-out-9/dev/rebuild.py).
set -u
draws=${1:?draws}; out=${2:?output directory}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
run() {  # draw up-flows
  local draw=$1 up=$2 name=ptx
  local both=$up,$(echo "$up" | tr ',' '\n' | awk -F'>' '{print $2">"$1}' | paste -sd,)
  [ -e "$out/$draw.json" ] && return
  commodel cluster up --spec "$draws/$draw/spec.yaml" --name $name > /dev/null || return
  date -u +"%H:%M:%S $draw"
  commodel cluster mpirun --name $name -- python "$here/rounds.py" "$out/$draw.json" \
    --set "up=$up" --set "both=$both"
  commodel cluster down --name $name > /dev/null
}
trap 'commodel cluster down --name ptx >/dev/null 2>&1' EXIT
run 8-held-out-2-rs2026112802x1 "0>4,1>5,2>6"          # racks [4, 3]; timed out
run 9-held-out-6-rs2026112904x0 "0>4,1>5,2>7,3>8"      # racks [4, 3, 1, 3]; timed out
run 9-held-out-4-rs2026112902x1 "1>0,2>4,3>5"          # racks [1, 3, 2]; did not
# the same clusters, the steps back to back (--chain), 30 rounds a size
chain() {  # draw
  local draw=$1 name=ptx
  [ -e "$out/$draw-chain.json" ] && return
  commodel cluster up --spec "$draws/$draw/spec.yaml" --name $name > /dev/null || return
  date -u +"%H:%M:%S $draw chain"
  commodel cluster mpirun --name $name -- python "$here/rounds.py" "$out/$draw-chain.json" \
    --chain --reps 30
  commodel cluster down --name $name > /dev/null
}
chain 8-held-out-2-rs2026112802x1
chain 9-held-out-6-rs2026112904x0
chain 9-held-out-4-rs2026112902x1
