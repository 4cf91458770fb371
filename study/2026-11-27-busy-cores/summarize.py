"""Per variant file: the median over the data sets of the model's error on the gain below
16 KiB, at 16-32 KiB and from 32 KiB, then ../2026-11-27-margin/margins/summarize.py's (a)
and (b) failures and picks within 5% of the best per margin.
Usage: python3 summarize.py DIR/*.txt"""
import os
import statistics
import subprocess
import sys

MARGINS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "2026-11-27-margin", "margins", "summarize.py")
BANDS = ("below 16 KiB", "16-32 KiB", "from 32 KiB")
for path in sys.argv[1:]:
    errors = {b: [] for b in BANDS}
    for line in open(path):
        if line.startswith("model error on the gain over the default, "):
            band = line.split(", ")[1].split(":")[0]
            if band in errors:
                errors[band].append(float(line.split("median ")[1].split()[0]))
    print(f"{path}  error on the gain: " + "  ".join(f"{b} {statistics.median(v):.3f}" for b, v in errors.items()))
    sys.stdout.flush()
    subprocess.run([sys.executable, MARGINS, path], check=True)
