"""Which dev clusters' pairwise exchange (Alltoall A) timed out, beside what their specs say.

python clusters.py SCORED     # SCORED: the output of ../../2026-11-29-held-out-9/dev/exp.py

Diagnosis only: the specs are the emulator's ground truth and are read here to explain the
measurements, never by calibrate, fit or a model. Per dev draw: its racks, rates, port
buffers and shaping; the most flows that one inter-rack port can carry at once in a pairwise
step, k = max over racks of min(r, n - r) (a step sends each node's message to one peer, so
into a rack of r hosts at most r messages arrive, from at most n - r hosts outside it); k
initial windows (10 segments, 14480 B each) against the backbone port's buffer; and the
Alltoall A sizes whose repetitions the hosts counted timeouts in, with tcpflow's error there.
"""

import glob
import json
import os
import sys

import yaml

IW = 14480


def main(scored: str) -> None:
    rows = []
    for f in sorted(glob.glob(os.path.join(scored, "*.json"))):
        with open(f[:-5] + "/spec.yaml", encoding="utf-8") as fh:
            spec = yaml.safe_load(fh)
        racks = spec["topology"].get("racks")
        if not racks:  # a tree: its racks are not listed in the spec
            continue
        n = spec["hosts"]
        k = max(min(r, n - r) for r in racks) if len(racks) > 1 else 0
        bbp = spec["buffers"]["backbone_port"]
        with open(f, encoding="utf-8") as fh:
            a = [s for s in json.load(fh)["schedules"] if s["label"].startswith("a-")]
        hit = [s for s in a if s["timeouts"] > 0]
        err = [s["models"]["tcpflow"]["makespan_s"] / s["measured_s"] - 1 for s in hit]
        rows.append(
            (
                k * IW / bbp if k else 0.0,
                os.path.basename(f)[:-5],
                racks,
                k,
                bbp,
                spec.get("shaping", "tbf"),
                len(hit),
                sum(s["timeouts"] for s in a),
                err,
            )
        )
    print(
        "k*IW/buffer  draw                            racks            k  backbone port  "
        "shaping    A sizes timed out  timeouts  tcpflow error there"
    )
    for ratio, name, racks, k, bbp, shaping, nhit, total, err in sorted(rows):
        e = " ".join(f"{x:+.2f}" for x in err)
        print(
            f"{ratio:11.2f}  {name[-30:]:30}  {str(racks):15}  {k}  {bbp:13d}  {shaping:9}  "
            f"{nhit:17d}  {total:8d}  {e}"
        )


if __name__ == "__main__":
    main(sys.argv[1])
