#!/bin/bash
# Re-score offline the advise --verify data sets of 2026-11-26-final, -27-buckets, -budget,
# -scaled-bucket, -later-of-two (both clusters) and -sit-out (two-rack-16), each platform
# refit from its cal.duckdb with the current fit, with network.overhead h and network.ack a
# set by hand to each pair of H_A (bytes), with scripts/rescore_advice.py --min-gain 0.2/0.05.
# Writes rescore-h<H>a<A>.txt here. Usage (the venv active): bash rescore.sh ["0 0" "53 110" ...]
set -u
HERE=$PWD
TOP=$(git rev-parse --show-toplevel)
W=$(mktemp -d)
trap 'rm -rf $W' EXIT
cd $TOP/study
for d in 2026-11-26-final 2026-11-27-buckets 2026-11-27-budget 2026-11-27-scaled-bucket \
         2026-11-27-later-of-two 2026-11-27-sit-out; do
  for s in $d/two-rack-*; do
    o=$W/${d#2026-}-${s##*/}; mkdir -p $o
    case $s in *16) BUF=32KiB,32KiB,32KiB,128KiB ;; *) BUF=32KiB,32KiB,128KiB ;; esac
    ln -s $PWD/$s/*-samples.csv $o/
    commodel fit --db $s/cal.duckdb --buffer $BUF -o $o/fit.yaml > $o/fit.log 2>&1 || exit 1
  done
done
for ha in "$@"; do
  set -- $ha
  for o in $W/*/; do
    python3 -c "import sys, yaml; p = yaml.safe_load(open(sys.argv[1])); \
p['network'].update({k: int(v) for k, v in (('overhead', sys.argv[2]), ('ack', sys.argv[3])) if int(v)}); \
yaml.safe_dump(p, open(sys.argv[4], 'w'))" $o/fit.yaml $1 $2 $o/platform.yaml
  done
  python3 $TOP/scripts/rescore_advice.py --min-gain 0.2/0.05 $W/*/ > $HERE/rescore-h$1a$2.txt 2>&1
  echo "h=$1 a=$2: $(grep -c '' $HERE/rescore-h$1a$2.txt) lines"
done
