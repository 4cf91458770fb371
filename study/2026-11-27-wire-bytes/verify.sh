#!/bin/bash
# Live check of the hand-set wire bytes on two-rack-8: calibrate as ../2026-11-26-final/run.sh
# does, set network.overhead 65 and network.ack 13 (counted by txbytes.sh) in a copy of the
# platform, and advise --verify allreduce with it (--rounds 2 --max-reps 8 --budget 1),
# into verify-8/. Usage (root, the venv active, from this directory): bash verify.sh
set -u
N=wbv8
mkdir -p verify-8 && cd verify-8 || exit 1
trap 'commodel cluster down --name $N >/dev/null 2>&1' EXIT
commodel cluster up --spec ../../../examples/clusters/two-rack-8.yaml --name $N || exit 1
date -u +"%H:%M:%S calibrate"
commodel cluster mpirun --name $N -- "$(command -v python3)" -m commodel calibrate --db cal.duckdb \
  --parts tcp,plogp,tree,efficiency --buffer 32KiB,32KiB,128KiB -o fitted.yaml > calibrate.log 2>&1
echo "exit $?"
python3 -c "import yaml; p = yaml.safe_load(open('fitted.yaml')); \
p['network'].update(overhead=65, ack=13); yaml.safe_dump(p, open('platform.yaml', 'w'))"
date -u +"%H:%M:%S start allreduce"
commodel advise --platform platform.yaml --collective allreduce --ranks 8 --sizes 1KiB..1MiB \
  --rules allreduce.rules --verify verify-allreduce.duckdb --mpirun "commodel cluster mpirun --name $N --" \
  --max-reps 8 --budget 1 --rounds 2 --quiet --plot allreduce-verify.png -o allreduce-verify.txt > allreduce.log 2>&1
echo "exit $?"
date -u +"%H:%M:%S done"
