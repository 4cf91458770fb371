#!/bin/bash
# points-1K.txt: bcast and allreduce of 1 KiB, every forced algorithm, predicted / measured
# under the fixed stretch (all), busy sharing, and busy with idle ranks at half a core; after
# run.sh (/tmp/busy) and the idle run (its busy0.5-k0-* directories copied into /tmp/busy).
for c in bcast allreduce; do
  python3 points.py $c 1024 /tmp/busy all-k0,busy-k0,busy0.5-k0 \
    2026-11-27-wire-fit_two-rack-8 2026-11-27-efficiency-groups_two-rack-16
done > points-1K.txt
