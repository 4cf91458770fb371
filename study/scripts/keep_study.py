"""Copy what a `commodel study` directory's evidence needs into the repository.

    python study/scripts/keep_study.py STUDY_DIR DEST_DIR

Per draw: the spec, the platforms (``platform.yaml`` as calibrated, ``refit.yaml`` where
``study score --refit`` wrote one), the calibration and forced-run logs, the timeout
counters, the measured summary and the scores; the three results databases as Parquet
(``commodel db export``: campaigns, samples, phase_times), about 0.5 MB a draw instead of
10 MB of DuckDB. The schedules are not kept: ``commodel study`` writes them again from the
draw's host count (python/commodel/study/workload.py). Then the study's README.md and
study.json.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

KEEP = (
    "spec.yaml",
    "platform.yaml",
    "refit.yaml",
    "calibrate.log",
    "forced.log",
    "counters.json",
    "measured.json",
    "score.json",
)
DATABASES = ("cal", "pattern", "forced")


def main(src: str, dest: str) -> None:
    os.makedirs(dest, exist_ok=True)
    for name in ("README.md", "study.json"):
        shutil.copy2(os.path.join(src, name), os.path.join(dest, name))
    for draw in sorted(os.listdir(src)):
        here = os.path.join(src, draw)
        if not os.path.isdir(here):
            continue
        out = os.path.join(dest, draw)
        os.makedirs(out, exist_ok=True)
        for name in KEEP:
            if os.path.exists(os.path.join(here, name)):
                shutil.copy2(os.path.join(here, name), os.path.join(out, name))
        for db in DATABASES:
            path = os.path.join(here, f"{db}.duckdb")
            if os.path.exists(path):
                subprocess.run(
                    [sys.executable, "-m", "commodel", "db", "export", "--db", path,
                     "--parquet", os.path.join(out, db)],
                    check=True, stdout=subprocess.DEVNULL,
                )  # fmt: skip


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
