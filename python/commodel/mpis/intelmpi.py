"""Intel MPI (the PyPI wheel ``impi-rt`` 2021.18.1, built on MPICH's CH4 and libfabric), as
its developer reference documents it and as its installed build behaves.

Intel MPI is closed source: no call-by-call check as for Open MPI and MPICH is possible.

* **Algorithms.** ``I_MPI_ADJUST_<COLL>=<id>`` forces preset ``<id>`` (0: Intel's own
  selection). The build accepts more ids than the developer reference lists (``impi_info
  -v I_MPI_ADJUST_ALLREDUCE -e``: ``range: 0-32``; :func:`preset_ranges`); we number the
  documented ones as the reference does and advise only those. Each was run on the emulated
  cluster (one rank per host, P = 4 and 5) and the bytes every rank sent to every other
  rank were read from the kernel's TCP sockets (:mod:`commodel.cluster.sockets`). Where
  they equal, peer by peer, a commodel generator's at every size tried, that generator
  stands for the preset (:data:`ALGORITHMS`); the order of the messages and the waits are
  not seen this way, so the mapping is by traffic, not by calls. The topology-aware and
  shared-memory presets send, with one rank per host, what a flat one sends; they are not
  advised.
* **Default decision.** Intel's selection is a binary tuning file
  (``opt/mpi/etc/tuning_generic_ofi.dat`` with ``I_MPI_FABRICS=ofi``) whose format is not
  documented: :func:`default_algorithm` is 0, unknown, so ``advise`` predicts no default
  and names the predicted best everywhere.
* **Settings** (the "rules file"). ``I_MPI_ADJUST_<COLL>="<id>:<l>-<m>@<p>-<q>;..."``:
  preset ``<id>`` for messages of ``<l>`` to ``<m>`` bytes (inclusive) on ``<p>`` to
  ``<q>`` ranks. The message size is the one commodel uses for the four collectives
  advised (the buffer for allreduce and bcast, one rank's block for allgather, the block to
  each rank for alltoall; the reference's table of message sizes). :func:`adjust_value`
  writes it, :func:`parse_adjust` reads it as the library does: a value it cannot parse,
  a size or rank count above 2^31 - 1, or an id beyond the build's range makes Intel MPI
  print ``Incorrect adjust value`` (or ``Incorrect algorithm``) at ``MPI_Init`` and
  ignore the whole variable. Measured on the emulated cluster (P = 4, allreduce of 1 KiB,
  8 KiB and 1 MiB): ``1:0-65535;2:65536-2147483647`` runs recursive doubling at 1 and
  8 KiB and Rabenseifner at 1 MiB, but with ``@4-4`` (or ``@4``, ``@1-8``) on both items
  Rabenseifner runs at all three sizes, and with the items in the other order recursive
  doubling: a condition that names process counts loses its size range, and the last such
  item wins. So we write size ranges only, one communicator size a file.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import CommodelError
from .mpi import Mpi, decimal

# Per collective: (preset id, the developer reference's name, the commodel generator whose
# per-peer traffic the preset's equals on the emulated cluster, or None). The reference
# (2021.x, "I_MPI_ADJUST Family Environment Variables") numbers them.
ALGORITHMS: dict[str, list[tuple[int, str, str | None]]] = {
    "allreduce": [
        (1, "recursive_doubling", "allreduce-recursive-doubling"),
        (2, "rabenseifner", "allreduce-mpich-reduce-scatter-allgather"),
        (3, "reduce_bcast", None),
        (4, "topology_aware_reduce_bcast", None),
        (5, "binomial_gather_scatter", None),
        (6, "topology_aware_binomial_gather_scatter", None),
        (7, "shumilin_ring", None),
        (8, "ring", "allreduce-mpich-ring"),
        (9, "knomial", None),
        (10, "topology_aware_shm_flat", None),
        (11, "topology_aware_shm_knomial", None),
        (12, "topology_aware_shm_knary", None),
    ],
    "bcast": [
        (1, "binomial", "bcast-mpich-binomial"),
        # scatter + recursive-doubling allgather on 4 ranks, but the binomial tree on 5 (a
        # fallback off a power of two that no generator has)
        (2, "recursive_doubling", None),
        (3, "ring", "bcast-mpich-scatter-ring-allgather"),
        (4, "topology_aware_binomial", None),
        (5, "topology_aware_recursive_doubling", None),
        (6, "topology_aware_ring", None),
        (7, "shumilin", "bcast-pipeline"),
        (8, "knomial", None),
        (9, "topology_aware_shm_flat", None),
        (10, "topology_aware_shm_knomial", None),
        (11, "topology_aware_shm_knary", None),
    ],
    "allgather": [
        (1, "recursive_doubling", "allgather-mpich-recursive-doubling"),
        (2, "bruck", "allgather-bruck"),
        (3, "ring", "allgather-ring"),
        (4, "topology_aware_gatherv_bcast", None),
        (5, "knomial", None),
    ],
    "alltoall": [
        (1, "bruck", "alltoall-modified-bruck"),
        (2, "isend_irecv_waitall", "alltoall-basic-linear"),
        (3, "pairwise", "alltoall-mpich-pairwise"),
        (4, "plum", None),
    ],
}

VAR = "I_MPI_ADJUST_{}"
# set by ``advise --verify`` beside a settings file's variables: the file they came from, so
# that ``measure collective`` records it as the campaign's rules file (and checks that the
# variables in force are the file's)
SETTINGS_FILE_VAR = "COMMODEL_IMPI_SETTINGS_FILE"
# the largest size or rank count a condition may name (Intel reads them as C ints)
INT_MAX = 2**31 - 1


def var_name(collective: str) -> str:
    return VAR.format(collective.upper())


def default_algorithm(collective: str, comm_size: int, size: int) -> int:
    """0: Intel MPI's own selection, which commodel does not know (see the module text)."""
    return 0


def adjust_env(collective: str, algorithm: int, rules_file: str | None) -> dict[str, str]:
    """The environment of a run: the settings file's variables (and :data:`SETTINGS_FILE_VAR`
    naming the file), or the forced preset."""
    if rules_file:
        return {**read_settings(rules_file), SETTINGS_FILE_VAR: os.path.abspath(rules_file)}
    if not algorithm:
        return {}
    return {var_name(collective): str(algorithm)}


INTEL_MPI = Mpi(
    name="intel-mpi",
    label="Intel MPI 2021",
    algorithms=ALGORITHMS,
    default_algorithm=default_algorithm,
    run_env=adjust_env,
    rules_format="impi-adjust",
)


# --- the settings: I_MPI_ADJUST_<COLL> values ----------------------------------------------


@dataclass(frozen=True)
class Condition:
    """Messages of ``lo``..``hi`` bytes on ``p_lo``..``p_hi`` ranks, all inclusive (None:
    any)."""

    lo: int | None = None
    hi: int | None = None
    p_lo: int | None = None
    p_hi: int | None = None

    def holds(self, ranks: int, size: int) -> bool:
        if self.lo is not None and not self.lo <= size <= self.hi:
            return False
        return self.p_lo is None or self.p_lo <= ranks <= self.p_hi


def adjust_value(collective: str, picks: dict[int, list[tuple[int, int]]]) -> str:
    """``I_MPI_ADJUST_<COLL>``'s value for ``picks``: for one communicator size P, a list of
    (size m, preset id) from each m on (0 keeps Intel's own selection there). Consecutive
    sizes of one preset are one range ``<id>:<l>-<m>``, the first from 0, the last to
    2^31 - 1. Size ranges only: this build ignores the size range of a condition that also
    names process counts (``@<p>-<q>``; see the module text), so one file holds the
    settings of one P."""
    if len(picks) != 1:
        raise CommodelError(
            f"{var_name(collective)}: settings for one communicator size at a time (got "
            f"{', '.join(map(str, sorted(picks)))}): Intel MPI 2021.18.1 ignores the size "
            "range of a condition that names process counts, so give one --ranks"
        )
    ((_p, rules),) = picks.items()
    merged: list[list[int]] = []
    for size, number in sorted(rules):
        if merged and merged[-1][1] == number:
            continue
        merged.append([size, number])
    if not merged:
        raise CommodelError(f"{collective}: no settings to write")
    items = []
    for i, (size, number) in enumerate(merged):
        start = 0 if i == 0 else size
        end = merged[i + 1][0] - 1 if i + 1 < len(merged) else INT_MAX
        items.append(f"{number}:{start}-{end}")
    return ";".join(items)


_NUMBER = r"([0-9]+)"  # ASCII digits: Intel MPI takes no other (see mpi.decimal)
_COND = re.compile(rf"{_NUMBER}(?:-{_NUMBER})?(?:@{_NUMBER}(?:-{_NUMBER})?)?")


def parse_adjust(
    collective: str, value: str, max_id: int | None = None
) -> tuple[list[tuple[int, list[Condition]]], list[tuple[str, str]]]:
    """``value`` read as Intel MPI reads ``I_MPI_ADJUST_<COLL>``: the (preset, conditions)
    items in order, and problems as (kind, message). An "error" is a value the library
    ignores whole; a "warning" a range that selects nothing, or an id the reference does
    not document. ``max_id``: the build's largest preset (:func:`preset_ranges`)."""
    problems: list[tuple[str, str]] = []
    items: list[tuple[int, list[Condition]]] = []
    documented = {n for n, _a, _g in ALGORITHMS.get(collective, [])}
    for text in value.split(";"):
        if not text.strip():
            continue  # Intel takes an empty item (a trailing ';')
        head, _, conds = text.strip().partition(":")
        number = decimal(head)
        if number is None:
            problems.append(("error", f"{text[:40]!r}: {head[:20]!r} is not a preset id"))
            continue
        if number > INT_MAX:
            problems.append(("error", f"preset {head[:20]}...: above 2^31 - 1"))
        elif max_id is not None and number > max_id:
            problems.append(("error", f"preset {number} is beyond this build's 0-{max_id} "
                             "(Intel MPI: 'Incorrect algorithm', the variable is ignored)"))  # fmt: skip
        elif number and number not in documented:
            problems.append(("warning", f"preset {number}: not in the developer reference"))
        conditions = []
        for cond in conds.split(",") if conds else []:
            match = _COND.fullmatch(cond.strip())
            if not match:
                problems.append(("error", f"{text[:40]!r}: condition {cond[:30]!r} is not "
                                 "<l>[-<m>][@<p>[-<q>]]"))  # fmt: skip
                continue
            lo, hi, p_lo, p_hi = (None if g is None else decimal(g) for g in match.groups())
            hi = lo if hi is None else hi
            p_hi = p_lo if p_hi is None else p_hi
            big = [x for x in (lo, hi, p_lo, p_hi) if x is not None and x > INT_MAX]
            if big:
                problems.append(("error", f"{cond[:40]!r}: {big[0]} is above 2^31 - 1"))
                continue
            if hi < lo or (p_lo is not None and p_hi < p_lo):
                problems.append(("warning", f"{cond[:40]!r}: an empty range, it selects nothing"))
            if p_lo is not None:
                problems.append(("warning", f"{cond[:40]!r}: with a process range this build "
                                 "ignores the size range: the last such preset runs at every "
                                 "size (measured)"))  # fmt: skip
            conditions.append(Condition(lo, hi, p_lo, p_hi))
        items.append((number, conditions))
    if any(kind == "error" for kind, _ in problems):
        problems.append(("error", f"Intel MPI ignores {var_name(collective)} whole "
                         "('Incorrect adjust value' at MPI_Init)"))  # fmt: skip
    return items, problems


def lookup(items: list[tuple[int, list[Condition]]], ranks: int, size: int) -> int:
    """The preset the settings select for a call (the first item whose conditions hold, an
    item without conditions holding always; 0: Intel's own selection)."""
    for number, conditions in items:
        if not conditions or any(c.holds(ranks, size) for c in conditions):
            return number
    return 0


# --- the settings file --------------------------------------------------------------------------


def settings_text(collective: str, value: str, header: str = "") -> str:
    """The file ``advise`` writes: comment lines, then ``export I_MPI_ADJUST_<COLL>=...``
    (a shell reads it with ``. FILE``; hydra passes the environment to every rank)."""
    lines = [f"# {line}" for line in header.splitlines()]
    lines.append(f"export {var_name(collective)}={shlex.quote(value)}")
    return "\n".join(lines) + "\n"


_LINE = re.compile(r"(?:export\s+)?(I_MPI_ADJUST_[A-Z_]+)=(.*)")


def parse_settings(text: str, where: str = "settings") -> tuple[dict[str, str], list[str]]:
    """The variables of a settings file (comments and blank lines skipped, the value
    unquoted as a shell does), and errors naming the line."""
    env: dict[str, str] = {}
    errors = []
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _LINE.fullmatch(stripped)
        if not match:
            errors.append(f"{where}:{lineno}: not 'export I_MPI_ADJUST_<COLL>=VALUE'")
            continue
        try:
            words = shlex.split(match.group(2))
        except ValueError as exc:
            errors.append(f"{where}:{lineno}: {exc}")
            continue
        if len(words) != 1:
            errors.append(f"{where}:{lineno}: the value must be one word (quote it)")
            continue
        if match.group(1) in env:
            errors.append(f"{where}:{lineno}: {match.group(1)} set twice")
        env[match.group(1)] = words[0]
    return env, errors


def read_settings(path: str | os.PathLike) -> dict[str, str]:
    """The variables of the settings file at ``path``; an error names the line at fault."""
    from .rules_file import read_rules_bytes

    try:
        text = read_rules_bytes(str(path)).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CommodelError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    env, errors = parse_settings(text, str(path))
    if errors:
        raise CommodelError(errors[0])
    return env


def check_settings(
    data: bytes, where: str, ranges: dict[str, int] | None = None
) -> list[tuple[str, str]]:
    """Problems Intel MPI would have with a settings file, as (kind, message)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [("error", f"not UTF-8 text ({exc.reason} at byte {exc.start})")]
    env, errors = parse_settings(text, where)
    problems = [("error", e) for e in errors]
    if not env and not errors:
        problems.append(("error", "no I_MPI_ADJUST_<COLL> variable in it"))
    for name, value in env.items():
        coll = name.removeprefix("I_MPI_ADJUST_").lower()
        max_id = (ranges or {}).get(coll)
        _items, found = parse_adjust(coll, value, max_id)
        problems += [(kind, f"{name}: {message}") for kind, message in found]
    return problems


# --- the installed build --------------------------------------------------------------------------


def impi_info(prefix: str | os.PathLike) -> Path:
    return Path(prefix) / "bin" / "impi_info"


def preset_ranges(prefix: str | os.PathLike) -> dict[str, int]:
    """Per collective we advise, the largest preset id the build accepts (``impi_info -v
    I_MPI_ADJUST_<COLL> -e``: ``range: 0-N``)."""
    out: dict[str, int] = {}
    env = {**os.environ, "LD_LIBRARY_PATH": str(Path(prefix) / "lib")}
    for coll in ALGORITHMS:
        try:
            text = subprocess.run(
                [str(impi_info(prefix)), "-v", var_name(coll), "-e"],
                capture_output=True, text=True, timeout=60, check=False, env=env,
            ).stdout  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CommodelError(f"cannot run {impi_info(prefix)}: {exc}") from None
        match = re.search(r"range:\s*0-(\d+)", text)
        if match:
            out[coll] = int(match.group(1))
    return out


def installed_prefix() -> Path | None:
    """The Intel MPI of the ``impi_info`` on PATH, else of ``make mpis``'s ``.mpi/intel-mpi``."""
    import shutil

    from .mpi import installed_prefix as made

    found = shutil.which("impi_info")
    prefix = Path(found).resolve().parent.parent if found else made("intel-mpi")
    if prefix is None or not impi_info(prefix).exists():
        return None
    return prefix
