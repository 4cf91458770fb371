"""C_i and t_i of every run (LABEL.yaml): per run the eight C_i, their mean and median, and
the mean t_i. Usage: python3 summary.py LABEL..."""
import re
import statistics
import sys

for f in sys.argv[1:]:
    rows = [line.split() for line in open(f + ".yaml") if re.match(r"\s+\d+ h\d+\s", line)]
    c = [float(r[2]) for r in rows]
    t = [float(r[3]) for r in rows]
    print(
        f"{f:8s} C_i (us): " + " ".join(f"{x:4.1f}" for x in c)
        + f"   mean {statistics.mean(c):.2f}, median {statistics.median(c):.2f}, max {max(c):.1f};"
        + f" t_i mean {statistics.mean(t):.2f} ns/B"
    )
