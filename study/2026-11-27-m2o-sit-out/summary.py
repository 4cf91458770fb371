"""Median and mean time per (n, M) of every run (LABEL.csv). Usage: python3 summary.py LABEL..."""
import csv
import statistics
import sys

runs = {}
for label in sys.argv[1:]:
    cells = {}
    for r in csv.DictReader(open(label + ".csv")):
        cells.setdefault((int(r["n_ranks"]), int(r["size_bytes"])), []).append(float(r["value_s"]))
    runs[label] = cells
keys = sorted(next(iter(runs.values())))
print("median (us) | " + " | ".join(f"n={n} {m // 1024}K" for n, m in keys))
for label, cells in runs.items():
    print(f"{label:11s} | " + " | ".join(f"{statistics.median(cells[k]) * 1e6:8.0f}" for k in keys))
