#!/bin/bash
# Every variant of variants.py (SHARINGS, KAPPAS) re-scored with three margins (30%, 20% and
# 10% below 32 KiB, 5% from it); writes $DIR/*.txt and $SUMMARY. From this directory, with
# busy-sharing.patch applied to 98b9185 and the package rebuilt (`make install`).
#   bash run.sh                                               # summary.txt (all, busy)
#   SHARINGS=busy0.1,busy0.2,busy0.35,busy0.5 KAPPAS=0,10,20 SUMMARY=summary-idle.txt bash run.sh
set -u
TOP=$(git rev-parse --show-toplevel)
SHARINGS=${SHARINGS:-all,busy}
KAPPAS=${KAPPAS:-0,10,20,30,40}
DIR=${DIR:-/tmp/busy}
SUMMARY=${SUMMARY:-summary.txt}
rm -rf $DIR; mkdir -p $DIR
python3 variants.py $SHARINGS $KAPPAS $DIR
score() {
  for d in $1/*/; do
    echo "### $(basename $d)"
    python3 $TOP/scripts/rescore_advice.py --min-gain 0.3/0.05,0.2/0.05,0.1/0.05 $d
  done > $1.txt
}
export -f score
export TOP
ls -d $DIR/*/ | sed 's:/$::' | xargs -P 2 -I{} bash -c 'score {}'
python3 summarize.py $DIR/*.txt > $SUMMARY
