#!/bin/bash
# Every margin of docs/advise.md's table re-scored on the 21 verify data sets of two-rack-8
# and two-rack-16 since 2026-11-26 (the directories with platform.yaml, samples CSVs and a
# cpu section), one section per data set; summarize.py adds them up. From this directory.
TOP=$(git rev-parse --show-toplevel)
G=0.2/0.05/16384,0.2/0.05,0.25/0.05,0.3/0.05,0.3/0.05/16384,0.3/0.05/65536
for P in 8 16; do
  : > rescore-$P.txt
  for d in $(cat sets-$P.txt); do
    echo "### $d" >> rescore-$P.txt
    python3 $TOP/scripts/rescore_advice.py --min-gain $G $TOP/study/$d >> rescore-$P.txt
  done
done
