"""The medians of exchange.log and token.log beside model.log: one table row per pattern.
Usage: python3 table.py [SUFFIX] (-16: the two-rack-16 logs)"""
import re
import statistics
import sys

sfx = sys.argv[1] if len(sys.argv) > 1 else ""

meas = {}
for line in open(f"exchange{sfx}.log"):
    d = dict(re.findall(r"(\w+) ([\d.]+)", line))
    meas.setdefault(("exchange", d["ranks"], d["pairs"], d["size"]), []).append(float(d["step_us"]))
for line in open(f"token{sfx}.log"):
    d = dict(re.findall(r"(\w+) ([\d.]+)", line))
    meas.setdefault(("token", d["ranks"], "-", d["size"]), []).append(float(d["hop_us"]))
model = {}
for line in open(f"model{sfx}.log"):
    kind = line.split()[0]
    d = dict(re.findall(r"(\w+) ([\d.]+)", line))
    key = (kind, d["ranks"], d.get("pairs", "-"), d["size"])
    with_cpu = float(d.get("step_us") or d["hop_us"])
    model[key] = (with_cpu, float(re.search(r"without cpu ([\d.]+)", line).group(1)))
print("| pattern | ranks | pairs | size (B) | measured (us, median of 3) | runs | model | model without cpu |")
print("|---|---:|---:|---:|---:|---|---:|---:|")
for key, xs in meas.items():
    a, b = model[key]
    runs = ", ".join(f"{x:.1f}" for x in xs)
    print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {statistics.median(xs):.1f} | {runs} | {a:.1f} | {b:.1f} |")
