"""Dev draws whose calibration lacks what a smaller calibration would not have measured,
to fit and score again (README.md):

python truncate.py SRC DST LIMIT              # plogp, efficiency, chain above LIMIT bytes
PARTS=plogp,efficiency python truncate.py ... # those parts only
ALLTOALL=1 python truncate.py SRC DST LIMIT   # the efficiency all-to-all rounds only
"""

import glob
import os
import shutil
import sys

import duckdb

src, dst, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
alltoall = bool(os.environ.get("ALLTOALL"))
parts = ("efficiency",) if alltoall else tuple(
    os.environ.get("PARTS", "plogp,efficiency,chain").split(",")
)
for d in sorted(glob.glob(os.path.join(src, "*"))):
    out = os.path.join(dst, os.path.basename(d))
    os.makedirs(out, exist_ok=True)
    for f in ("pattern.duckdb", "forced.duckdb", "counters.json", "measured.json", "spec.yaml"):
        if not os.path.exists(os.path.join(out, f)):
            os.symlink(os.path.join(d, f), os.path.join(out, f))
    shutil.copy(os.path.join(d, "cal.duckdb"), os.path.join(out, "cal.duckdb"))
    con = duckdb.connect(os.path.join(out, "cal.duckdb"))
    ids = [i for i, b in con.execute("SELECT id, benchmark FROM campaigns").fetchall() if b in parts]
    where = " AND pattern = 'alltoall'" if alltoall else ""
    con.execute(
        f"DELETE FROM samples WHERE campaign IN ({','.join(map(str, ids))})"
        f" AND size_bytes > {limit}{where}"
    )
    con.close()
