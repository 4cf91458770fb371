"""Rebuild the kept draws of the held-out rounds (Parquet, study/scripts/keep_study.py) into
scoreable draw directories with DuckDB databases, for offline dev refits:

    python rebuild.py OUT        # OUT/<round>-<draw>/{cal,pattern,forced}.duckdb, spec, counters
"""

import glob
import os
import shutil
import sys

from commodel.db import ResultsDB

STUDY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def main(out: str) -> None:
    for spec in sorted(glob.glob(os.path.join(STUDY, "*held-out*", "*", "rs*", "spec.yaml"))):
        d = os.path.dirname(spec)
        if not os.path.isdir(os.path.join(d, "cal")) or not os.path.isdir(
            os.path.join(d, "pattern")
        ):
            continue  # calibrations kept without their workload
        rnd = d.split(os.sep)[-3].replace("2026-11-2", "")
        dest = os.path.join(out, f"{rnd}-{os.path.basename(d)}")
        os.makedirs(dest, exist_ok=True)
        for f in ("spec.yaml", "platform.yaml", "counters.json", "measured.json", "score.json"):
            shutil.copy2(os.path.join(d, f), dest)
        for name in ("cal", "pattern", "forced"):
            target = os.path.join(dest, name + ".duckdb")
            if os.path.exists(target):
                continue
            db = ResultsDB(target)
            for t in ("campaigns", "samples", "phase_times"):
                db.con.execute(
                    f"INSERT INTO {t} SELECT * FROM read_parquet(?)",
                    [os.path.join(d, name, t + ".parquet")],
                )
            db.close()
        print(dest)


if __name__ == "__main__":
    main(sys.argv[1])
