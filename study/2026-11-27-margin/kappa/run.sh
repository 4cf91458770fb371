#!/bin/bash
# kappa = 0, 10, 20, 30 us more CPU work a message on a shared machine (half on the send, half
# on the receive), re-scored with the margin of that day (20% below 16 KiB, 5% from it).
# From this directory; writes /tmp/kappa and summary.txt.
set -u
TOP=$(git rev-parse --show-toplevel)
python3 variants.py 0,10,20,30 /tmp/kappa > /dev/null
for v in /tmp/kappa/k*; do
  for d in $v/*/; do
    echo "### $(basename $v)/$(basename $d)"
    python3 $TOP/scripts/rescore_advice.py --min-gain 0.2/0.05/16384 $d
  done > $v.txt
done
python3 ../margins/summarize.py /tmp/kappa/k{0,10,20,30}-{8,16}.txt > summary.txt
