"""Add up rescore_advice.py's rows per margin: (a) and (b) failures, picks within 5%.
Usage: python3 summarize.py rescore-8.txt rescore-16.txt"""
import collections
import sys

for path in sys.argv[1:]:
    total = collections.defaultdict(lambda: [0, 0, 0, 0, []])
    for section in open(path).read().split("### ")[1:]:
        name = section.split("\n")[0].strip()
        for line in section.splitlines():
            cols = [x.strip() for x in line.strip().strip("|").split("|")]
            if len(cols) != 9 or cols[3] in ("min-gain", "measured rules run") or cols[0][0] == "-":
                continue
            coll, _, _, margin, _, _, a, b, c = cols
            t = total[margin]
            if a != "met":
                t[0] += len(a.split()) // 2
                t[4].append(f"{name}: {coll} {a}")
            if not b.startswith("met"):
                t[1] += len(b.split("(")[0].split())
            x, y = c.split("/")
            t[2] += int(x)
            t[3] += int(y)
    for margin, t in total.items():
        print(f"{path} {margin:32s} (a) {t[0]:2d} (b) {t[1]:2d} within 5% {t[2]}/{t[3]}")
        for f in t[4]:
            print("    ", f)
