"""`make bench`: every benchmark in turn (not part of the tests; slow).

python benches/run.py            # engine, file path, contention models, PLogP measurement, outputs,
                                 # sweeps on MPI workers
python benches/run.py engine     # one of them
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHES = ["engine", "goal_path", "contention", "measure_plogp", "outputs", "sweep"]


def main() -> int:
    names = sys.argv[1:] or BENCHES
    failed = []
    for name in names:
        print(f"\n=== benches/{name}.py", flush=True)
        if subprocess.run([sys.executable, str(HERE / f"{name}.py")]).returncode != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
