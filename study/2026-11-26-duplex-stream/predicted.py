"""The stream rounds of stream.py as `tcpflow` predicts them: GOAL schedules of k messages
of m bytes per flow posted at once, one-way (2i -> 2i+1) and ring (i -> i+1), on 8 ranks,
predicted on a platform (default: the two-rack-8 platform calibrated on 2026-11-26, whose
e_d table is 0.63, 0.91, 0.79, 0.85, 0.95 at 4, 16, 64, 256 KiB, 1 MiB). Prints the
makespans and e = one-way / ring per (m, k).

Usage: python3 predicted.py [PLATFORM]"""

import json
import os
import subprocess
import sys
import tempfile

P = 8
HERE = os.path.dirname(os.path.abspath(__file__))
PLATFORM = os.path.join(HERE, "..", "2026-11-26-advise-two-rack-8", "platform.yaml")


def goal(pattern: str, m: int, k: int) -> str:
    if pattern == "oneway":
        flows = [(2 * i, 2 * i + 1) for i in range(P // 2)]
    else:
        flows = [(i, (i + 1) % P) for i in range(P)]
    out = [f"num_ranks {P}"]
    for r in range(P):
        out.append(f"rank {r} {{")
        j = 0
        for s, d in flows:
            for t in range(k):
                if s == r:
                    out.append(f"s{j}: send {m}b to {d} tag {t}")
                    j += 1
                if d == r:
                    out.append(f"r{j}: recv {m}b from {s} tag {t}")
                    j += 1
        out.append("}")
    return "\n".join(out) + "\n"


def makespan(platform: str, text: str) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".goal") as f:
        f.write(text)
        f.flush()
        cmd = ["commodel", "predict", "--platform", platform, "--json", "--no-messages", f.name]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["makespan_s"]


def main() -> None:
    platform = sys.argv[1] if len(sys.argv) > 1 else PLATFORM
    print(f"{'size':>8} {'k':>3} {'oneway ms':>10} {'ring ms':>10} {'e_d':>6}")
    for m in (4096, 8192, 32768, 131072):
        for k in (1, 4, 16):
            one, ring = (makespan(platform, goal(p, m, k)) for p in ("oneway", "duplex"))
            print(f"{m:>8} {k:>3} {one * 1e3:10.3f} {ring * 1e3:10.3f} {one / ring:6.3f}")


if __name__ == "__main__":
    main()
