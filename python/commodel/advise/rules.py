"""Open MPI 4.1.4's coll/tuned dynamic rules file: the algorithm table, writer and checker.

The file is read when ``coll_tuned_use_dynamic_rules`` is 1 and
``coll_tuned_dynamic_rules_filename`` names it (``ompi_coll_tuned_read_rules_config_file``
in ``ompi/mca/coll/tuned/coll_tuned_dynamic_file.c``). It is a stream of integers::

    number-of-collectives
    per collective:   collective-id  number-of-communicator-sizes
      per comm size:  communicator-size  number-of-message-rules
        per rule:     message-size  algorithm  faninout  segsize

Each integer is read by ``ompi_coll_base_file_getnext_long`` (``coll_base_util.c``):
``fscanf("%li")`` (C whitespace skipped; an optional sign; ``0x`` hexadecimal, a leading
``0`` octal; saturating at the range of a 64-bit long), and where no number starts, one
character is thrown away; a thrown-away ``#`` skips the rest of its line. So words, dots
and other stray characters between numbers are skipped silently, ``1.5`` reads as ``1`` and
``5``, and ``rule-file-version-2`` reads as ``-2``.

The reader rejects the whole file (a 4.1.4 release build says nothing and falls back to
the fixed decision) when a count, id, size, algorithm, faninout or segsize is missing or
negative, when the number of collectives or a collective id is not below 22 (Open MPI's
COLLCOUNT), or when the first message rule of a communicator size is not at message size
0. It accepts anything else, including unsorted sizes and algorithm numbers the collective
does not have; :func:`check` reports those as problems of its own (``kind`` "error" for
what makes the MPI call fail, "warning" for what only misleads).

Lookup (``ompi_coll_tuned_get_com_rule_ptr`` and
``ompi_coll_tuned_get_target_method_params`` in ``coll_tuned_dynamic_rules.c``): the
communicator sizes are scanned in file order up to the first one larger than the
communicator (the first entry is used even when it is larger); in it, message rules are
scanned up to the first one larger than the message size. Algorithm 0 means "no rule":
the forced algorithm or the fixed decision is used. What "message size" means per
collective is :func:`rule_message_size` (``coll_tuned_decision_dynamic.c``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..errors import CommodelError
from ..mpis.rules_file import read_rules_bytes

# Open MPI's COLLCOUNT (ompi/mca/coll/base/coll_base_functions.h): ids must be below it.
COLLCOUNT = 22

# Collective ids of the COLLTYPE enumeration (coll_base_functions.h) that we advise.
COLLECTIVE_IDS = {
    "allgather": 0,
    "allreduce": 2,
    "alltoall": 3,
    "barrier": 6,
    "bcast": 7,
    "gather": 9,
    "scatter": 15,
}

# Every id the tuned component looks up in the rules file, with its highest algorithm number
# (the cases of ompi_coll_tuned_<coll>_intra_do_this in coll_tuned_<coll>_decision.c).
MAX_ALGORITHM = {
    0: 6,  # allgather
    1: 5,  # allgatherv
    2: 6,  # allreduce
    3: 5,  # alltoall
    4: 2,  # alltoallv
    6: 6,  # barrier
    7: 9,  # bcast
    8: 2,  # exscan
    9: 3,  # gather
    11: 7,  # reduce
    12: 4,  # reduce_scatter
    13: 4,  # reduce_scatter_block
    14: 2,  # scan
    15: 3,  # scatter
}


@dataclass
class MessageRule:
    msg_size: int
    algorithm: int
    faninout: int = 0
    segsize: int = 0
    line: int = 0


@dataclass
class CommRule:
    comm_size: int
    rules: list[MessageRule] = field(default_factory=list)
    line: int = 0


@dataclass
class CollectiveRules:
    collective_id: int
    comm_rules: list[CommRule] = field(default_factory=list)
    line: int = 0


@dataclass
class Problem:
    kind: str  # "error": 4.1.4 ignores the file or the MPI call fails; "warning"
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.field}: {self.message}"


def algorithm_name(collective_id: int, algorithm: int, mpi: str = "openmpi-4.1") -> str:
    """The algorithm's name in ``mpi``'s coll/tuned (``openmpi-4.1`` or ``openmpi-5.0``)."""
    from ..mpis import get

    if algorithm == 0:
        return "no rule (Open MPI's default decision)"
    algorithms = get(mpi).algorithms
    for name, cid in COLLECTIVE_IDS.items():
        if cid == collective_id:
            for number, alg, _gen in algorithms[name]:
                if number == algorithm:
                    return f"{name} {alg}"
    return f"collective {collective_id} algorithm {algorithm}"


# --- writer ----------------------------------------------------------------------------------


def format_rules(tables: list[CollectiveRules], mpi: str = "openmpi-4.1") -> str:
    """The rules file text, one collective, communicator size and rule per line, with
    ``#`` comments naming the algorithms of ``mpi`` (the reader skips them)."""
    reader = "Open MPI 4.1.4 and 5.0" if mpi == "openmpi-4.1" else "Open MPI 5.0"
    out = [
        f"# Open MPI coll/tuned dynamic rules (classic format, read by {reader})",
        "# written by commodel advise; check it with: commodel advise --check-rules FILE"
        + (" --mpi openmpi-5.0" if mpi == "openmpi-5.0" else ""),
        f"{len(tables)}  # number of collectives",
    ]
    for table in tables:
        names = [n for n, cid in COLLECTIVE_IDS.items() if cid == table.collective_id]
        out.append(f"{table.collective_id}  # collective id ({names[0] if names else 'unknown'})")
        out.append(f"{len(table.comm_rules)}  # number of communicator sizes")
        for comm in table.comm_rules:
            out.append(f"{comm.comm_size}  # communicator size")
            out.append(f"{len(comm.rules)}  # number of message sizes")
            for r in comm.rules:
                out.append(
                    f"{r.msg_size} {r.algorithm} {r.faninout} {r.segsize}  "
                    f"# from {r.msg_size} B: "
                    f"{algorithm_name(table.collective_id, r.algorithm, mpi)}"
                )
    return "\n".join(out) + "\n"


def write_rules(
    tables: list[CollectiveRules], path: str | os.PathLike, mpi: str = "openmpi-4.1"
) -> str:
    text = format_rules(tables, mpi)
    try:
        with open(os.fspath(path), "w", encoding="ascii") as handle:
            handle.write(text)
    except OSError as exc:
        raise CommodelError(f"{os.fspath(path)}: cannot write: {exc.strerror or exc}") from None
    return text


# --- reader ----------------------------------------------------------------------------------

_SPACE = b" \t\n\v\f\r"
_LONG_MAX = 2**63 - 1
_LONG_MIN = -(2**63)


def tokens(data: bytes, follow: list[bool] | None = None) -> list[tuple[int, int]]:
    """Every integer ``ompi_coll_base_file_getnext_long`` would read: ``(value, line)``.
    With ``follow`` (a list), also whether after each one, past spaces and tabs, a digit
    comes next (Open MPI 5.0's ``ompi_coll_base_file_peek_next_char_isdigit``)."""
    out: list[tuple[int, int]] = []
    n = len(data)
    i = 0
    line = 1
    while True:
        while i < n and data[i] in _SPACE:
            if data[i] == 0x0A:
                line += 1
            i += 1
        if i >= n:
            return out
        j = i
        negative = False
        if data[j] in b"+-":
            negative = data[j] == 0x2D
            j += 1
            if j >= n:  # fscanf meets the end after the sign: end of input
                return out
        value = None
        if data[j] == 0x30:  # '0': octal, or hexadecimal after 0x
            j += 1
            base, digits = 8, b"01234567"
            if j < n and data[j] in b"xX":
                j += 1
                base, digits = 16, b"0123456789abcdefABCDEF"
            start = j
            while j < n and data[j] in digits:
                j += 1
            value = int(data[start:j], base) if j > start else 0
        elif data[j] in b"0123456789":
            start = j
            while j < n and data[j] in b"0123456789":
                j += 1
            # a first digit not 0: past 19 digits beyond a long (and int()'s digit limit)
            value = int(data[start:j]) if j - start <= 19 else _LONG_MAX + 1
        if value is not None:
            value = -value if negative else value
            out.append((max(_LONG_MIN, min(_LONG_MAX, value)), line))
            i = j
            if follow is not None:
                k = j
                while k < n and data[k] in b" \t":
                    k += 1
                follow.append(k < n and data[k] in b"0123456789")
            continue
        # no number starts here: the sign (if any) is consumed, one more character thrown away
        trash = data[j]
        i = j + 1
        if trash == 0x0A:
            line += 1
        elif trash == 0x23:  # '#': skip to the end of the line
            end = data.find(b"\n", i)
            if end < 0:
                return out
            i = end + 1
            line += 1


@dataclass
class ParseResult:
    tables: list[CollectiveRules]
    problems: list[Problem]

    @property
    def accepted(self) -> bool:
        """True if Open MPI 4.1.4 reads the file (it may still hold runtime errors)."""
        return not any(p.field.startswith("reader") for p in self.problems)

    @property
    def ok(self) -> bool:
        return not any(p.kind == "error" for p in self.problems)


class _Stream:
    def __init__(self, toks: list[tuple[int, int]]):
        self.toks = toks
        self.pos = 0

    def last_line(self) -> int:
        return self.toks[-1][1] if self.toks else 1

    def next(self, what: str) -> tuple[int, int]:
        """The next value; raises _Reject when missing or negative (the reader's checks)."""
        if self.pos >= len(self.toks):
            raise _Reject(self.last_line(), what, "missing (the file ends here)")
        value, line = self.toks[self.pos]
        self.pos += 1
        if value < 0:
            raise _Reject(line, what, f"{value} is negative")
        return value, line


class _Reject(Exception):
    def __init__(self, line: int, what: str, why: str):
        super().__init__(why)
        self.line, self.what, self.why = line, what, why


# What Open MPI 5.0 changed in the rules (coll_tuned_dynamic_file.c, the algorithm tables):
# allgather 7 sparbit, allgatherv 6 sparbit.
MAX_ALGORITHM_50 = {**MAX_ALGORITHM, 0: 7, 1: 6}
_VERSION = re.compile(rb"rule-file-version-")
_LABEL = {"openmpi-4.1": "Open MPI 4.1.4", "openmpi-5.0": "Open MPI 5.0"}


def parse_rules(data: bytes, version: str = "openmpi-4.1") -> ParseResult:
    """Read rules the way Open MPI 4.1.4 (``version`` "openmpi-4.1") or 5.0 does, then check
    what it would silently misuse. Open MPI 5.0 first tries ``fscanf("rule-file-version-%u")``
    at the start of the file (a file format version; 1 without it), and from version 2 reads
    a fifth number of a rule, its max requests, when a digit follows the segsize on its line
    (past spaces and tabs)."""
    label = _LABEL.get(version, version)
    file_version = 1
    if version == "openmpi-5.0":
        head = _VERSION.match(data)
        if head:
            digits = re.match(rb"\s*(\d+)", data[head.end() :])
            skip = head.end() + (digits.end() if digits else 0)
            file_version = int(digits.group(1)) if digits else 1
            # the header's line stays one line (its newline is read next)
            data = b" " * skip + data[skip:]
    follow: list[bool] = []
    toks = tokens(data, follow)
    s = _Stream(toks)
    tables: list[CollectiveRules] = []
    problems: list[Problem] = []
    try:
        count, _ = s.next("number of collectives")
        if count > COLLCOUNT:
            raise _Reject(toks[0][1], "number of collectives", f"{count} is more than {COLLCOUNT}")
        for c in range(count):
            where = f"collective #{c + 1}"
            cid, cline = s.next(f"{where}: collective id")
            if cid >= COLLCOUNT:
                raise _Reject(cline, f"{where}: collective id", f"{cid} is not below {COLLCOUNT}")
            table = CollectiveRules(cid, line=cline)
            ncs, _ = s.next(f"{where} (id {cid}): number of communicator sizes")
            for k in range(ncs):
                cwhere = f"collective id {cid}, communicator size #{k + 1}"
                cs, csline = s.next(f"{cwhere}: communicator size")
                comm = CommRule(cs, line=csline)
                nms, _ = s.next(f"{cwhere} ({cs}): number of message sizes")
                for m in range(nms):
                    rwhere = f"collective id {cid}, communicator size {cs}, rule #{m + 1}"
                    ms, mline = s.next(f"{rwhere}: message size")
                    alg, _ = s.next(f"{rwhere}: algorithm")
                    fan, _ = s.next(f"{rwhere}: faninout")
                    seg, _ = s.next(f"{rwhere}: segsize")
                    if file_version > 1 and follow[s.pos - 1]:
                        s.next(f"{rwhere}: max requests")
                    if m == 0 and ms != 0:
                        raise _Reject(
                            mline,
                            f"{rwhere}: message size",
                            f"the first rule of a communicator size must be at message size 0, "
                            f"got {ms}",
                        )
                    comm.rules.append(MessageRule(ms, alg, fan, seg, mline))
                table.comm_rules.append(comm)
            tables.append(table)
    except _Reject as rej:
        problems.append(
            Problem(
                "error",
                rej.line,
                "reader: " + rej.what,
                f"{rej.why}; {label} ignores the whole file without a message and "
                "uses its fixed decision",
            )
        )
        return ParseResult([], problems)
    if s.pos < len(toks):
        problems.append(
            Problem(
                "warning",
                toks[s.pos][1],
                "trailing numbers",
                f"{len(toks) - s.pos} numbers after the last collective are never read",
            )
        )
    problems += _semantic_problems(tables, version)
    return ParseResult(tables, problems)


def _semantic_problems(
    tables: list[CollectiveRules], version: str = "openmpi-4.1"
) -> list[Problem]:
    maxima = MAX_ALGORITHM_50 if version == "openmpi-5.0" else MAX_ALGORITHM
    label = _LABEL.get(version, version)
    out: list[Problem] = []
    seen: dict[int, int] = {}
    for t in tables:
        if t.collective_id in seen:
            out.append(
                Problem(
                    "warning",
                    t.line,
                    f"collective id {t.collective_id}",
                    f"appears again (first at line {seen[t.collective_id]}); Open MPI keeps "
                    "only this later table",
                )
            )
        seen[t.collective_id] = t.line
        top = maxima.get(t.collective_id)
        if top is None:
            out.append(
                Problem(
                    "warning",
                    t.line,
                    f"collective id {t.collective_id}",
                    "coll/tuned never looks up rules for this collective",
                )
            )
        for i, comm in enumerate(t.comm_rules):
            if i and comm.comm_size <= t.comm_rules[i - 1].comm_size:
                out.append(
                    Problem(
                        "warning",
                        comm.line,
                        f"collective id {t.collective_id}: communicator size",
                        f"{comm.comm_size} is not above the previous "
                        f"{t.comm_rules[i - 1].comm_size}; the lookup scans in file order and "
                        "stops at the first larger size",
                    )
                )
            for j, r in enumerate(comm.rules):
                where = f"collective id {t.collective_id}, communicator size {comm.comm_size}"
                if j and r.msg_size <= comm.rules[j - 1].msg_size:
                    out.append(
                        Problem(
                            "warning",
                            r.line,
                            f"{where}: message size",
                            f"{r.msg_size} is not above the previous "
                            f"{comm.rules[j - 1].msg_size}; the lookup stops at the first "
                            "larger size, so this rule or later ones are never used",
                        )
                    )
                if top is not None and r.algorithm > top:
                    out.append(
                        Problem(
                            "error",
                            r.line,
                            f"{where}: algorithm",
                            f"{r.algorithm} is not an algorithm of this collective (0..{top}); "
                            f"{label} reads the file, then the MPI call fails with "
                            "MPI_ERR_ARG",
                        )
                    )
    return out


def read_rules(path: str | os.PathLike, version: str = "openmpi-4.1") -> ParseResult:
    return parse_rules(read_rules_bytes(path), version)


def collective_table(tables: list[CollectiveRules], collective_id: int):
    """The collective's table Open MPI 4.1.4 uses, or None: with a repeated id, the later
    table replaces the earlier."""
    return next((t for t in reversed(tables) if t.collective_id == collective_id), None)


def comm_rule(tables: list[CollectiveRules], collective_id: int, comm_size: int):
    """The communicator size's rules Open MPI 4.1.4 uses, or None (no table)."""
    table = collective_table(tables, collective_id)
    if table is None or not table.comm_rules:
        return None
    best = table.comm_rules[0]
    for comm in table.comm_rules:
        if comm.comm_size > comm_size:
            break
        best = comm
    return best


def message_rule(comm: CommRule | None, msg_size: int) -> MessageRule | None:
    """The message rule Open MPI 4.1.4 uses in ``comm`` at ``msg_size`` (None: none)."""
    if comm is None or not comm.rules:
        return None
    chosen = comm.rules[0]
    for r in comm.rules:
        if r.msg_size > msg_size:
            break
        chosen = r
    return chosen


def lookup(tables: list[CollectiveRules], collective_id: int, comm_size: int, msg_size: int):
    """The (algorithm, faninout, segsize) Open MPI 4.1.4 picks, or None (no rule: alg 0)."""
    chosen = message_rule(comm_rule(tables, collective_id, comm_size), msg_size)
    if chosen is None or chosen.algorithm == 0:
        return None
    return chosen.algorithm, chosen.faninout, chosen.segsize
