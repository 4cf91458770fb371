"""The other files a user hands commodel, for the fuzzer: LogGOPSim's binary schedules
(``txt2bin``'s layout, docs/formats.md), Open MPI's dynamic rules files (``advise
--check-rules``, the format ``advise --rules`` writes) and results databases (what ``fit``
and ``db`` open). Each is built from its structure with valid values most of the time,
then given faults at the places its reader checks.
"""

from __future__ import annotations

import random
import struct
from typing import Any

from yaml_inputs import pick

ANY = 2**32 - 1
U32_EDGES = [0, 1, 2, 3, 7, 2**31, 2**32 - 2, ANY]
U64_EDGES = [0, 1, 8, 65535, 65536, 2**32, 2**62, 2**63, 2**64 - 1]


# --- GOAL binary --------------------------------------------------------------------------


def _record(deps: int, kind: int, peer: int, size: int, tag: int, cpu: int, nic: int,
            req: tuple[int, int], ireq: tuple[int, int]) -> bytes:  # fmt: skip
    return struct.pack("<IBIQIBBIIII", deps, kind, peer, size, tag, cpu, nic, *req, *ireq)


def goal_binary(rng: random.Random) -> bytes:
    """A binary schedule of 1-4 ranks: a valid random program (matched sends and receives,
    a chain of requires per rank), then faults in the header, the table of sections, a
    record or the dependents, or bytes cut or appended."""
    ranks = rng.randrange(1, 5)
    ops: list[list[tuple]] = [[] for _ in range(ranks)]
    for _ in range(rng.randrange(0, 6)):
        src, dst = rng.randrange(ranks), rng.randrange(ranks)
        size = pick(rng, [0, 1, 1024, 65536, 1 << 20])
        tag = rng.randrange(4)
        if src != dst:
            ops[src].append((1, dst, size, tag))
            ops[dst].append((2, src if rng.random() < 0.8 else ANY, size, tag))
        else:
            ops[src].append((3, 0, rng.randrange(10**6), 0))
    sections = []
    for r in range(ranks):
        n = len(ops[r])
        chain = rng.random() < 0.5  # each op requires the one before
        records, dependents = b"", []
        roots = [0] if chain and n else list(range(n))
        for i, (kind, peer, size, tag) in enumerate(ops[r]):
            req = (1, len(dependents)) if chain and i + 1 < n else (0, 0)
            if req[0]:
                dependents.append(i + 1)
            records += _record(1 if chain and i else 0, kind, peer, size, tag, 0, 0, req, (0, 0))
        section = struct.pack("<II", n, len(roots)) + b"".join(struct.pack("<I", x) for x in roots)
        section += records + b"".join(struct.pack("<I", d) for d in dependents)
        sections.append(bytearray(section))
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        if not sections:
            break
        s = pick(rng, sections)
        if len(s) >= 4:
            at = rng.randrange(0, len(s) - 3)
            width, edges = pick(rng, [(4, U32_EDGES), (8, U64_EDGES), (1, [0, 1, 2, 3, 4, 255])])
            at = min(at, len(s) - width)
            s[at : at + width] = pick(rng, edges).to_bytes(width, "little")
    cookie = pick(rng, [4223] * 8 + [2342, 0, 4224])
    head = struct.pack("<QIBB", cookie, len(sections), 0, 0)
    at = 4 + 2 + 16 * len(sections)
    table = b""
    for s in sections:
        start, end = at, at + len(s)
        if rng.random() < 0.05:
            start, end = pick(rng, U64_EDGES), pick(rng, U64_EDGES)
        table += struct.pack("<QQ", start, end)
        at += len(s)
    data = bytearray(head + table + b"".join(sections))
    if rng.random() < 0.1:
        data[8:12] = pick(rng, U32_EDGES).to_bytes(4, "little")  # the rank count
    if rng.random() < 0.1:
        data = data[: rng.randrange(len(data) + 1)]
    if rng.random() < 0.05:
        data += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
    return bytes(data)


# --- Open MPI rules files ----------------------------------------------------------------


def rules_file(rng: random.Random) -> bytes:
    """An Open MPI coll/tuned dynamic rules file (the classic integer format): collectives,
    communicator sizes, message rules (size, algorithm, faninout, segsize), comments; then
    numbers replaced by edge values (negative, octal, hexadecimal, beyond a long), tokens
    dropped or added, junk text."""
    lines: list[str] = []
    collectives = rng.randrange(0, 5)
    lines.append(f"{collectives} # number of collectives")
    for _ in range(collectives):
        lines.append(f"{rng.randrange(0, 22)} # collective id")
        comms = rng.randrange(0, 4)
        lines.append(f"{comms}")
        size = 0
        for _ in range(comms):
            size += rng.choice([1, 2, 8, 64])
            lines.append(f"{size} # communicator size")
            rules = rng.randrange(0, 4)
            lines.append(f"{rules}")
            msg = 0
            for _ in range(rules):
                lines.append(
                    f"{msg} {rng.randrange(0, 10)} {rng.choice([0, 4])} {rng.choice([0, 8192])}"
                )
                msg += rng.choice([1, 1024, 65536])
    tokens = " \n".join(lines).split(" ")
    for _ in range(rng.choice([0, 0, 1, 2, 3])):
        i = rng.randrange(len(tokens))
        tokens[i] = pick(rng, ["-1", "0x10", "010", "99999999999999999999999", "-99999999999999999999",
                               "+", "-", "#", "x", "", "0", "21", "22", "1e3", "\x00", "\xff",
                               "9223372036854775807", "4294967296", "1\n#"])  # fmt: skip
    data = " ".join(tokens).encode("utf-8", "surrogateescape")
    if rng.random() < 0.1:
        data = data[: rng.randrange(len(data) + 1)]
    return data


# --- results databases ------------------------------------------------------------------

BENCHMARKS = ["plogp", "tree", "tcp", "lmo", "many-to-one", "one-to-many", "efficiency", "wire",
              "pattern", "concurrent", "collective", "x"]  # fmt: skip
PHASES = {
    "plogp": [("g0", "uni", "rtt_n"), ("roundtrip", "uni", "rtt"), ("roundtrip", "uni", "o_s"),
              ("roundtrip", "uni", "o_r"), ("gsat", "uni", "rtt_n"), ("g0", "bi", "rtt_n"),
              ("roundtrip", "bi", "rtt")],
    "many-to-one": [("many-to-one", "flat", "time")],
    "one-to-many": [("one-to-many", "flat", "time")],
}  # fmt: skip
VALUES = [1e-5, 2e-5, 1e-4, 0.2, 0.0, -1e-5, float("nan"), float("inf"), 1e300, 5e-324]
STATUSES = ["complete", "complete", "complete", "running", "failed", "x"]


def results_db(rng: random.Random) -> dict[str, Any]:
    """A results database's contents as a plan: ``schema`` (faults to make in the tables:
    none most of the time), ``campaigns`` (each: benchmark, status, options, ranks, hosts
    and its samples as rows of the samples table)."""
    schema = "ok"
    if rng.random() < 0.05:
        schema = pick(rng, ["meta-only", "no-samples", "no-phase-times", "value-text",
                            "version-2", "no-version", "extra-column", "empty-file"])  # fmt: skip
    campaigns = []
    for _ in range(rng.randrange(0, 3)):
        benchmark = pick(rng, BENCHMARKS)
        ranks = rng.choice([2, 3, 4, 8])
        rows = []
        phases = PHASES.get(benchmark) or [(benchmark, "uni", "time"), ("roundtrip", "uni", "rtt")]
        sizes = [0, 1, 1024, 4096, 65536][: rng.randrange(1, 6)]
        for phase, pattern, quantity in phases:
            if rng.random() < 0.1:
                continue  # a phase or quantity missing
            for m in sizes:
                if rng.random() < 0.05:
                    continue  # one size missing
                for rep in range(rng.randrange(1, 6)):
                    n_msgs = rng.choice([1, 10, 20, 40]) if quantity == "rtt_n" else 1
                    n_ranks = rng.randrange(2, ranks + 1) if benchmark in PHASES else ranks
                    value = (
                        pick(rng, VALUES)
                        if rng.random() < 0.05
                        else 1e-5 * (1 + m / 1e4) * (1 + 0.1 * rep)
                    )
                    rows.append((phase, pattern, quantity, m, n_ranks, n_msgs, rep, value))
        options: dict[str, Any] = {}
        if rng.random() < 0.2:
            options = pick(rng, [{"statistic": "mean"}, {"statistic": "x"}, {"escalation_factor": -1},
                                 {"bidirectional": True}, {"method": "saturation"}, {"receives": 7}])  # fmt: skip
        campaigns.append({"benchmark": benchmark, "status": pick(rng, STATUSES), "options": options,
                          "ranks": ranks, "hosts": [f"h{i}" for i in range(ranks)], "rows": rows})  # fmt: skip
    return {"schema": schema, "campaigns": campaigns}
