"""The schedules whose predicted timeouts differ between two refits of the dev draws
(``exp.py`` outputs of ../../2026-11-29-held-out-9/dev/), with the timeouts measured:

    python timeouts_diff.py OUT_A OUT_B
"""

import glob
import json
import os
import sys


def main(a: str, b: str) -> None:
    for f in sorted(glob.glob(os.path.join(a, "*.json"))):
        with open(f) as fa, open(os.path.join(b, os.path.basename(f))) as fb:
            left, right = json.load(fa), json.load(fb)
        for sa, sb in zip(left["schedules"], right["schedules"]):
            ta, tb = sa["models"]["tcpflow"], sb["models"]["tcpflow"]
            if (ta["rto"] > 0) != (tb["rto"] > 0):
                print(
                    os.path.basename(f)[:-5],
                    sa["label"],
                    f"measured {sa['measured_s']:.3f} s, {sa['timeouts']} timeouts in "
                    f"{sa['reps']} reps;",
                    f"A {ta['makespan_s']:.3f} s ({ta['rto']} rto), "
                    f"B {tb['makespan_s']:.3f} s ({tb['rto']} rto)",
                )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
