#!/bin/bash
# Re-score the 21 advise --verify data sets of ../2026-11-27-margin/margins/sets-*.txt with
# the CPU-work bound of bound_rescore.py, one file per (ALPHA8, ALPHA16) pair, with four
# margins; then the summary (../2026-11-27-busy-cores/summarize.py). About 1 minute a pair
# on 2 cores. Usage (venv active): bash grid.sh OUTDIR "1 1" "2 2.5" "2.5 3" "3 4"
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(mkdir -p "$1" && cd "$1" && pwd); shift
cd "$HERE/.." || exit 1
run() {
  f=$OUT/a$1-$2.txt
  for P in 8 16; do for s in $(cat 2026-11-27-margin/margins/sets-$P.txt); do
    echo "### $s"
    ALPHA8=$1 ALPHA16=$2 python3 "$HERE/bound_rescore.py" --min-gain 0.3/0.05,0.2/0.05,0.15/0.05,0.1/0.05 "$s"
  done; done > "$f" 2>&1
}
export -f run; export OUT HERE
for pair in "$@"; do echo "$pair"; done | xargs -P 2 -L 1 bash -c 'run $0 $1'
for f in "$OUT"/*.txt; do python3 2026-11-27-busy-cores/summarize.py "$f"; done
