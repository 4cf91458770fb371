"""The other files a user hands commodel, for the fuzzer: LogGOPSim's binary schedules
(``txt2bin``'s layout, docs/formats.md), Open MPI's dynamic rules files (``advise
--check-rules``, the format ``advise --rules`` writes) and results databases (what ``fit``
and ``db`` open). Each is built from its structure with valid values most of the time,
then given faults at the places its reader checks.
"""

from __future__ import annotations

import json
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
    """A rules file of one of the MPIs commodel writes for: Open MPI 4.1's dynamic rules
    (half), Open MPI 5.0's with its file version and max requests (a fifth), MPICH's JSON
    tuning file (the rest)."""
    kind = rng.random()
    if kind < 0.5:
        return open_mpi_rules(rng, v2=False)
    if kind < 0.7:
        return open_mpi_rules(rng, v2=True)
    return mpich_json(rng)


def open_mpi_rules(rng: random.Random, v2: bool) -> bytes:
    """An Open MPI coll/tuned dynamic rules file (the classic integer format): collectives,
    communicator sizes, message rules (size, algorithm, faninout, segsize; with ``v2``,
    Open MPI 5.0's ``rule-file-version-2`` head and a fifth number, max requests, on some),
    comments; then numbers replaced by edge values (negative, octal, hexadecimal, beyond a
    long), tokens dropped or added, junk text."""
    lines: list[str] = (
        [f"rule-file-version-{pick(rng, [2, 2, 2, 1, 3, 0, 4294967296])}"] if v2 else []
    )
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
                extra = f" {rng.choice([0, 1, 16])}" if v2 and rng.random() < 0.5 else ""
                lines.append(
                    f"{msg} {rng.randrange(0, 10)} {rng.choice([0, 4])} {rng.choice([0, 8192])}"
                    + extra
                )
                msg += rng.choice([1, 1024, 65536])
    tokens = " \n".join(lines).split(" ")
    for _ in range(rng.choice([0, 0, 1, 2, 3])):
        i = rng.randrange(len(tokens))
        tokens[i] = pick(rng, ["-1", "0x10", "010", "99999999999999999999999", "-99999999999999999999",
                               "+", "-", "#", "x", "", "0", "21", "22", "1e3", "\x00", "\xff", "# \udcff",
                               "9223372036854775807", "4294967296", "1\n#"])  # fmt: skip
    data = " ".join(tokens).encode("utf-8", "surrogateescape")
    if rng.random() < 0.1:
        data = data[: rng.randrange(len(data) + 1)]
    return data


# MPICH's JSON tuning file: csel.c's keys (conditions, the yes/no operators, any), with
# numbers at the edges, and the algorithm leaves, real and not
MPICH_COLLECTIVES = ["bcast", "allreduce", "allgather", "alltoall", "reduce", "barrier",
                     "ialltoallw", "x", "", "foo", "any", "Bcast"]  # fmt: skip
MPICH_CONDITIONS = ["comm_size<=", "comm_size<", "avg_msg_size<=", "avg_msg_size<",
                    "total_msg_size<=", "total_msg_size<", "count<=", "comm_avg_ppn<", "k="]  # fmt: skip
MPICH_KEYS = ["comm_type=intra", "comm_type=inter", "comm_size=pow2", "comm_size=node_comm_size",
              "count<pow2", "is_commutative=yes", "is_sendbuf_inplace=no", "is_op_built_in=yes",
              "comm_hierarchy=parent", "composition=alpha", "any", "comm_size=any",
              "avg_msg_size=any", "unknown=1", "comm_size<=x", "comm_size<=-1", ""]  # fmt: skip
MPICH_NAMES = ["binomial", "ring", "brucks", "pairwise", "recursive_doubling", "scatter_ring_allgather",
               "reduce_scatter_allgather", "scattered", "smp", "auto", "nb", "fastest", ""]  # fmt: skip
JSON_VALUES = [[], 1, "x", None, True, {}]  # every JSON type: csel.c reads objects only
JSON_JUNK = ["{", "}", "[", "]", ",", ":", '"', '"\\ud800"', "\udcff", "1e999", "NaN", "-Infinity",
             "null", "[" * 100, '{"a":' * 40, "\x00", "\udcff", "\ufeff", " " * 3]  # fmt: skip


# numbers as csel.c's atoi reads them: the digits up to another character, none (0), past
# an int or a long, signs, Python's int() limit
MPICH_LOOSE_NUMBERS = ["4abc", "", "+2", "-5", " 8", "\t8", "4294967298", "0x10", "any", "<5",
                       "9" * 5000, "-" + "9" * 30, "007", "1e3", "\u0663"]  # fmt: skip


def spaced(rng: random.Random, key: str) -> str:
    """``key`` with spaces put in now and then (csel.c drops them)."""
    if rng.random() >= 0.08 or not key:
        return key
    chars = list(key)
    for _ in range(rng.randrange(1, 4)):
        chars.insert(rng.randrange(len(chars) + 1), " ")
    return "".join(chars)


def mpich_json(rng: random.Random) -> bytes:
    """An MPICH JSON tuning file: collectives with an intra branch of conditions down to
    algorithm leaves (a few levels; now and then tens or thousands), values not objects,
    then text edits (cuts, junk tokens, bytes not UTF-8)."""
    levels = pick(rng, [2, 3, 4, 6] * 6 + [31, 33, 40, 2000])

    def node(coll: str, depth: int) -> Any:
        if depth >= levels or rng.random() < 0.25:
            if rng.random() < 0.05:
                return pick(rng, JSON_VALUES)
            cap = coll[:1].upper() + coll[1:]
            where = pick(rng, ["intra", "intra", "inter", "allcomm", "x"])
            name = f"MPIR_{pick(rng, [cap, cap, 'Bcast'])}_{where}_{pick(rng, MPICH_NAMES)}"
            # parameters (read as an object for some algorithms), a second leaf after it
            leaf = {
                spaced(rng, f"algorithm={name}"): pick(
                    rng, [{}] * 6 + [{"k=3": pick(rng, JSON_VALUES)}]
                )
            }
            if rng.random() < 0.05:
                second = f"algorithm=MPIR_{cap}_intra_{pick(rng, ['tree', 'ring', 'k_brucks'])}"
                leaf[second] = pick(rng, JSON_VALUES)
            return leaf
        out: dict[str, Any] = {}
        wide = depth < 5  # below that one key and its `any` (a deep tree stays small)
        for _ in range(rng.randrange(1, 4) if wide else 1):
            if rng.random() < 0.6:
                key = pick(rng, MPICH_CONDITIONS) + str(
                    pick(rng, [0, 1, 4, 64, 1024, 2**31, 2**63, 10**30])
                    if rng.random() < 0.9
                    else pick(rng, MPICH_LOOSE_NUMBERS)
                )
            else:
                key = pick(rng, MPICH_KEYS)
            out[spaced(rng, key)] = node(coll, depth + 1)
        if rng.random() < (0.7 if wide else 0.1):
            out[spaced(rng, pick(rng, ["any", "comm_size=any", "avg_msg_size=any"]))] = node(
                coll, depth + 1
            )
        return out

    if levels > 100:  # nested far deeper than any real file (and Python's JSON reader)
        text = '{"collective=bcast": ' + '{"comm_size<=4": ' * levels + "{}" + "}" * (levels + 1)
    else:
        tree: dict[str, Any] = {}
        for _ in range(pick(rng, [1, 1, 2, 3, 4, 0])):
            coll = pick(rng, MPICH_COLLECTIVES)
            top = pick(rng, ["comm_type=intra", "comm_type=intra", "comm_type=inter", "any"])
            tree[spaced(rng, f"collective={coll}")] = {spaced(rng, top): node(coll, 2)}
        text = json.dumps(tree, indent=pick(rng, [None, 1]))
    return edit_text(rng, text, [0, 0, 0, 0, 1, 2], JSON_JUNK, 12)


def edit_text(rng: random.Random, text: str, edits: list[int], junk: list[str], cut: int) -> bytes:
    """``text`` after ``pick(edits)`` edits (a ``junk`` token put in, up to ``cut`` - 1
    characters cut out, or the rest cut off), as bytes (surrogates: bytes not UTF-8)."""
    for _ in range(rng.choice(edits)):
        at = rng.randrange(len(text) + 1)
        edit = rng.randrange(3)
        if edit == 0:
            text = text[:at] + pick(rng, junk) + text[at:]
        elif edit == 1:
            text = text[:at] + text[at + rng.randrange(1, cut) :]
        else:
            text = text[:at]
    return text.encode("utf-8", "surrogateescape")


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


# --- Intel MPI's settings: I_MPI_ADJUST_<COLL> ---------------------------------------------

INTEL_COLLECTIVES = ["ALLREDUCE", "BCAST", "ALLGATHER", "ALLTOALL", "ALLREDUCE", "BCAST",
                     "REDUCE", "BARRIER", "ALLTOALLV", "IALLREDUCE", "X", "", "allreduce"]  # fmt: skip
# numbers at the edges: the build's ranges (0-32, 0-22, 0-6, 0-18), a C int's and a long's
# ends, beyond Python's int() limit; signs, other bases, digits that are not ASCII
INTEL_NUMBERS = ["0", "1", "2", "3", "8", "12", "18", "22", "32", "33", "65535", "2147483647",
                 "2147483648", "4294967296", "9223372036854775808", "1" + "0" * 30, "9" * 5000,
                 "-1", "+1", "007", "0x10", "1e3", "1.5", "", " 1", "1 ", "\u00b2", "\u0663",
                 "\uff11", "\u2167"]  # fmt: skip
INTEL_JUNK = [";", ":", "@", "-", ",", "'", '"', "\\", "$", "#", "=", " ", "\t", "\x00", "\udcff",
              "\u2028", "\x0b", "\r", "\n", "export", "I_MPI_ADJUST_", "$(x)", "`x`", "${X}"]  # fmt: skip


def _intel_number(rng: random.Random) -> str:
    if rng.random() < 0.7:
        return str(pick(rng, [0, 1, 2, 1023, 1024, 4096, 65535, 65536, 1 << 20, 2**31 - 1]))
    return pick(rng, INTEL_NUMBERS)


def intel_value(rng: random.Random) -> str:
    """``I_MPI_ADJUST_<COLL>``'s value: items ``<id>[:<l>[-<m>][@<p>[-<q>]],...]`` joined by
    ``;``, as advise writes them (ranges that tile the sizes) or any way at all."""
    items = []
    if rng.random() < 0.4:  # as advise writes: consecutive ranges up to 2^31 - 1
        start = 0
        for _ in range(rng.randrange(1, 5)):
            end = start + pick(rng, [0, 1, 1023, 65535, 1 << 20])
            items.append(f"{rng.randrange(0, 13)}:{start}-{end}")
            start = end + 1
        items.append(f"{rng.randrange(0, 13)}:{start}-2147483647")
    else:
        for _ in range(rng.randrange(0, 5)):
            head = _intel_number(rng) if rng.random() < 0.9 else pick(rng, ["ring", "x", "auto"])
            conds = []
            for _ in range(rng.choice([0, 1, 1, 2, 3])):
                cond = _intel_number(rng)
                if rng.random() < 0.7:
                    cond += "-" + _intel_number(rng)
                if rng.random() < 0.3:
                    cond += "@" + _intel_number(rng)
                    if rng.random() < 0.5:
                        cond += "-" + _intel_number(rng)
                conds.append(cond)
            items.append(head + (":" + ",".join(conds) if conds or rng.random() < 0.1 else ""))
    value = ";".join(items) + (";" if rng.random() < 0.1 else "")
    return value


def intel_settings(rng: random.Random) -> bytes:
    """An Intel MPI settings file as ``advise --mpi intel-mpi --rules`` writes it (comments,
    then ``export I_MPI_ADJUST_<COLL>='<value>'``) or otherwise: several variables, one set
    twice, other collectives, no ``export``, quoted every way a shell quotes (or not
    closed), other lines; then junk tokens, cuts and bytes not UTF-8."""
    lines = [f"# {pick(rng, ['advised by commodel', 'P = 4', '', 'é', '#'])}"
             for _ in range(rng.randrange(0, 3))]  # fmt: skip
    for _ in range(pick(rng, [1, 1, 1, 2, 3, 0])):
        name = "I_MPI_ADJUST_" + pick(rng, INTEL_COLLECTIVES)
        value = intel_value(rng)
        quote = pick(rng, ["'", "'", '"', "", "$'", "'\"", "'''"])
        close = {"$'": "'", "'\"": "'\"", "'''": "'"}.get(quote, quote)
        if rng.random() < 0.05:
            close = ""  # not closed
        export = pick(rng, ["export ", "export ", "", "export  ", "declare -x ", "\texport "])
        lines.append(f"{export}{name}={quote}{value}{close}")
        if rng.random() < 0.05:
            lines.append(lines[-1])  # set twice
    if rng.random() < 0.1:
        lines.append(
            pick(rng, ["I_MPI_FABRICS=ofi", "unset I_MPI_ADJUST_BCAST", "x", "=", "export"])
        )
    text = pick(rng, ["\n", "\n", "\r\n", "\n\n"]).join(lines) + pick(rng, ["\n", "", "\n\n"])
    return edit_text(rng, text, [0, 0, 0, 1, 2], INTEL_JUNK, 8)
