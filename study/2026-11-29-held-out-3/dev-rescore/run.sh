#!/bin/bash
# Score study directories again with two checkouts of commodel, each refitting every
# platform from the draw's cal.duckdb (`commodel study score --refit`), then compare.
#   bash run.sh BEFORE_PYTHON AFTER_PYTHON STUDY_DIR...
# BEFORE/AFTER_PYTHON: the python of a venv with commodel at the commit before / after the
# change (here 0765cbd and ffc9592). Each STUDY_DIR is copied to before/ and after/ here.
set -eu
before=$1; after=$2; shift 2
for d in "$@"; do
  name=$(basename "$d")
  for side in before after; do rm -rf "$side/$name"; mkdir -p "$side"; cp -a "$d" "$side/$name"; done
  "$before" -m commodel study score --refit "before/$name"
  "$after" -m commodel study score --refit "after/$name"
done
python3 "$(dirname "$0")/compare.py" after
