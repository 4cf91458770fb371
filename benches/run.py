"""`make bench`: every benchmark in turn (not part of the tests; slow).

python benches/run.py            # engine, file path, 2^16-rank scale cases, contention
                                 # models, PLogP measurement, outputs, sweeps on MPI workers
python benches/run.py engine     # one of them

The file path and scale benchmarks compare with LogGOPSim when ``COMMODEL_LOGGOPSIM_SRC``
names a checkout of spcl/LogGOPSim (as for tests/test_loggopsim_binary.py; ``goal_path.py
--loggopsim``); without it they print ours alone.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# name -> (script, its arguments).
BENCHES = {
    "engine": ("engine", []),
    "goal_path": ("goal_path", []),
    # Issue 42: GOAL files of 2^16 ranks beside LogGOPSim, and tcpflow / maxmin at 2^16
    # on the two racks (docs/benchmarks.md, "Scale"); 2^20 is run by hand (minutes).
    "scale": (
        "goal_path",
        [
            "--ranks",
            "65536",
            "--size",
            "1KiB",
            "--patterns",
            "bcast-binomial",
            "barrier-dissemination",
        ],
    ),
    "scale_contention": (
        "contention",
        ["--ranks", "65536", "--algorithms", "bcast-binomial", "--models", "maxmin", "tcpflow"],
    ),
    "contention": ("contention", []),
    "measure_plogp": ("measure_plogp", []),
    "outputs": ("outputs", []),
    "sweep": ("sweep", []),
}


def main() -> int:
    names = sys.argv[1:] or list(BENCHES)
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        print(f"unknown benchmark {', '.join(unknown)}; one of {', '.join(BENCHES)}")
        return 2
    failed = []
    for name in names:
        script, args = BENCHES[name]
        print(f"\n=== benches/{script}.py {' '.join(args)}".rstrip(), flush=True)
        if subprocess.run([sys.executable, str(HERE / f"{script}.py"), *args]).returncode != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
