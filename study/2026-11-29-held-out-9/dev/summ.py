"""The targets' tallies (tcpflow) over exp.py outputs: python summ.py OUT [OUT ...]."""

import glob
import json
import os
import sys

from commodel.study.report import Scores, score

for out in sys.argv[1:]:
    tot = Scores()
    for f in sorted(glob.glob(os.path.join(out, "*.json"))):
        with open(f) as fh:
            tot.merge(score(json.load(fh), "tcpflow"))
    print(
        f"{out}: alltoall {tot.alltoall.text()} (20%: {tot.alltoall_20.text()}) random "
        f"{tot.random.text()} forced {tot.forced.text()} order {tot.order.text()} intervals "
        f"{tot.coverage.text()} timeouts tp {tot.tp} fp {tot.fp} fn {tot.fn}"
    )
