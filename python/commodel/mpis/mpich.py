"""MPICH 5.0 (the PyPI wheel ``mpich`` 5.0.2, ``ch4:ucx,ofi``), as read from its 5.0.x
sources and the installed build.

* **Algorithms** are the values of ``MPIR_CVAR_<COLL>_INTRA_ALGORITHM`` that ``mpivars``
  lists for the build (:func:`cvar_algorithms`), which force one with the environment
  variable of that name. We number them in that order (0: ``auto``, MPICH's selection)
  and leave out ``nb``, ``smp`` and ``ccl`` (not point-to-point algorithms over the
  whole communicator). Each algorithm with a generator (:data:`ALGORITHMS`) makes, rank by
  rank, the calls MPICH's source makes (read in its 5.0.x branch at commit f5694eb9;
  ``crates/commodel-engine/tests/collectives_mpich_trace.rs`` transcribes them and compares
  them message by message, wait by wait, over P = 2..17 and uneven sizes). Where one of Open
  MPI's does (allreduce recursive_doubling; allgather brucks, ring; alltoall brucks), that
  generator; elsewhere an MPICH one, ``<coll>-mpich-<algorithm>``: allreduce ring (blocks
  of ceil(size/P) bytes, sent in 32 KiB chunks by the allgatherv) and
  reduce_scatter_allgather (p' blocks, whole buffers folded), bcast binomial (the in-order
  tree, blocking sends, largest subtree first), the scatter + allgather bcasts (which run
  below P bytes too), alltoall pairwise (xor pairs on a power of two) and scattered (32
  peers at a time, ``MPIR_CVAR_ALLTOALL_THROTTLE``'s default). A forced algorithm whose
  restriction fails falls back to MPICH's own selection, and so does its generator:
  allgather recursive_doubling off a power of two (brucks below 81920 bytes gathered, then
  ring), reduce_scatter_allgather below p' bytes (recursive_doubling). The other
  algorithms have no generator yet.
* **Selection.** Without forcing, ``MPIR_<Coll>_allcomm_auto`` searches a JSON decision
  tree (``MPIR_Csel_search`` in ``src/mpi/coll/src/csel.c``): the one compiled into the
  library (``maint/tuning/coll/mpir/generic.json``), or the file named by
  ``MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE``, which replaces it whole, every
  collective. Each object's keys are tried in order and the first that holds is followed
  down to an ``algorithm=MPIR_<Coll>_intra_<name>`` leaf (:func:`select`). Two readings of
  csel.c matter: ``comm_size<N`` holds for P <= N (the source compares with ``<=``), and a
  collective the file lacks has no selection, which a release build does not catch. So
  the file :func:`rules_json` writes is the installed library's own tree
  (:func:`builtin_tree`) with the advised collective's intra-communicator branch replaced
  by our rules, MPICH's own branch kept after them for the communicator sizes not advised.
* **Default decision** (:data:`DEFAULT`): that tree's branches for allreduce, bcast,
  allgather and alltoall, transcribed; a test checks them against the tree compiled into
  the installed library. Message sizes as csel computes them: ``avg_msg_size`` is the
  buffer (bcast, allreduce) or the bytes to each rank (alltoall), ``total_msg_size`` of
  allgather the bytes each rank ends with (P x size); ``count`` counts MPI_BYTE elements.
  We take the communicator as flat (one rank per host): ``comm_hierarchy=parent`` does
  not hold.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from ..errors import CommodelError
from .mpi import Mpi

# Per collective, MPICH's CVAR value (our number = position + 1) and the commodel generator
# that makes its calls (None: none yet; collectives_mpich_trace.rs checks each against
# MPICH's source).
_CVAR_ALGORITHMS: dict[str, list[tuple[str, str | None]]] = {
    "allreduce": [
        ("recursive_doubling", "allreduce-recursive-doubling"),
        ("recursive_multiplying", None),
        ("reduce_scatter_allgather", "allreduce-mpich-reduce-scatter-allgather"),
        ("tree", None),
        ("recexch", None),
        ("ring", "allreduce-mpich-ring"),
        ("k_reduce_scatter_allgather", None),
    ],
    "bcast": [
        ("binomial", "bcast-mpich-binomial"),
        (
            "scatter_recursive_doubling_allgather",
            "bcast-mpich-scatter-recursive-doubling-allgather",
        ),
        ("scatter_ring_allgather", "bcast-mpich-scatter-ring-allgather"),
        ("pipelined_tree", None),
        ("tree", None),
    ],
    "allgather": [
        ("brucks", "allgather-bruck"),
        ("k_brucks", None),
        ("recursive_doubling", "allgather-mpich-recursive-doubling"),
        ("ring", "allgather-ring"),
        ("recexch_doubling", None),
        ("recexch_halving", None),
    ],
    "alltoall": [
        ("brucks", "alltoall-modified-bruck"),
        ("k_brucks", None),
        ("pairwise", "alltoall-mpich-pairwise"),
        ("pairwise_sendrecv_replace", None),
        ("scattered", "alltoall-mpich-scattered"),
    ],
}

ALGORITHMS = {
    coll: [(i + 1, name, gen) for i, (name, gen) in enumerate(algs)]
    for coll, algs in _CVAR_ALGORITHMS.items()
}

# CVAR values that are not an algorithm over the whole communicator (left out).
NOT_ALGORITHMS = ("auto", "nb", "smp", "ccl")

_ANY = "any"

# MPICH 5.0's default selection for intra-communicators (maint/tuning/coll/mpir/generic.json
# of 5.0.x), transcribed: each branch a list of (condition, subtree or algorithm name).
DEFAULT: dict[str, list] = {
    "bcast": [
        ("comm_size<8", [
            ("comm_hierarchy=parent", [("avg_msg_size<=0", "smp"), (_ANY, "binomial")]),
            (_ANY, [(_ANY, "binomial")]),
        ]),
        ("comm_size=pow2", [
            ("comm_hierarchy=parent", [
                ("avg_msg_size<=0", "smp"),
                ("avg_msg_size<=12288", "binomial"),
                ("avg_msg_size<=524288", "scatter_recursive_doubling_allgather"),
                (_ANY, "scatter_ring_allgather"),
            ]),
            (_ANY, [
                ("avg_msg_size<=12288", "binomial"),
                ("avg_msg_size<=524288", "scatter_recursive_doubling_allgather"),
                (_ANY, "scatter_ring_allgather"),
            ]),
        ]),
        (_ANY, [
            ("comm_hierarchy=parent", [
                ("avg_msg_size<=0", "smp"),
                ("avg_msg_size<=12288", "binomial"),
                (_ANY, "scatter_ring_allgather"),
            ]),
            (_ANY, [("avg_msg_size<=12288", "binomial"), (_ANY, "scatter_ring_allgather")]),
        ]),
    ],
    "allreduce": [
        ("avg_msg_size<=0", [
            ("is_commutative=yes", "smp"),
            ("is_commutative=no", "recursive_doubling"),
        ]),
        ("avg_msg_size<=8", "recursive_doubling"),
        (_ANY, [
            ("is_op_built_in=no", "recursive_doubling"),
            ("is_op_built_in=yes", [
                ("count<pow2", "recursive_doubling"),
                (_ANY, "reduce_scatter_allgather"),
            ]),
        ]),
    ],
    "allgather": [
        ("comm_size=pow2", [
            ("total_msg_size<524288", "recursive_doubling"),
            (_ANY, "ring"),
        ]),
        (_ANY, [("total_msg_size<81920", "brucks"), (_ANY, "ring")]),
    ],
    "alltoall": [
        ("is_sendbuf_inplace=yes", "pairwise_sendrecv_replace"),
        ("is_sendbuf_inplace=no", [
            ("comm_size<8", [("avg_msg_size<=32768", "scattered"), (_ANY, "pairwise")]),
            (_ANY, [
                ("avg_msg_size<=256", "brucks"),
                ("avg_msg_size<=32768", "scattered"),
                (_ANY, "pairwise"),
            ]),
        ]),
    ],
}  # fmt: skip

# The collective's name in csel's keys and MPIR function names.
_CSEL_NAME = {"allreduce": "Allreduce", "bcast": "Bcast", "allgather": "Allgather",
              "alltoall": "Alltoall"}  # fmt: skip


def _holds(key: str, coll: str, p: int, size: int, parent: bool = False) -> bool:
    """Whether csel's condition ``key`` holds for a call of ``coll`` on ``p`` ranks with
    ``size`` bytes (commodel's convention; MPI_BYTE, MPI_BOR, not in place)."""
    if _is_any(key) or key in ("comm_type=intra", "is_commutative=yes", "is_op_built_in=yes",
               "is_sendbuf_inplace=no", "is_block_regular=yes"):  # fmt: skip
        return True
    if key in ("comm_type=inter", "is_commutative=no", "is_op_built_in=no",
               "is_sendbuf_inplace=yes", "is_block_regular=no", "comm_size=node_comm_size"):  # fmt: skip
        return False
    if key == "comm_hierarchy=parent":
        return parent
    if key.startswith("comm_hierarchy="):
        return not parent
    if key == "comm_size=pow2":
        return p & (p - 1) == 0
    if key == "count<pow2":
        return size < 1 << (p.bit_length() - 1)
    match = re.fullmatch(r"(comm_size|avg_msg_size|total_msg_size|count)(<=|<)(-?\d+)", key)
    if not match:
        raise CommodelError(f"unknown csel key {key!r}")
    what, op, value = match.group(1), match.group(2), int(match.group(3))
    if what == "comm_size":
        return p <= value  # csel.c compares COMM_SIZE_LT with <= as well
    x = size
    if what == "total_msg_size":
        x = size * p  # every collective we advise: per-rank bytes times P
    elif what == "avg_msg_size" and coll == "allgather":
        raise CommodelError("avg_msg_size is not defined for allgather (MPICH aborts)")
    return x <= value if op == "<=" else x < value


def select(tree: list, coll: str, p: int, size: int) -> str:
    """The algorithm a transcribed tree (:data:`DEFAULT`'s form) selects."""
    node: Any = tree
    while not isinstance(node, str):
        for key, sub in node:
            if _holds(key, coll, p, size):
                node = sub
                break
        else:
            raise CommodelError(f"{coll}: no selection at P={p}, {size} B")
    return node


def default_algorithm(collective: str, comm_size: int, size: int) -> int:
    """The number of the algorithm MPICH's default selection runs (0 where it is one we
    left out, e.g. ``smp``)."""
    name = select(DEFAULT[collective], collective, comm_size, size)
    for n, alg, _gen in ALGORITHMS[collective]:
        if alg == name:
            return n
    return 0


def cvar_env(collective: str, algorithm: int, rules_file: str | None) -> dict[str, str]:
    """The environment of a run: the JSON tuning file, or the forced algorithm by name."""
    if rules_file:
        return {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": rules_file}
    if not algorithm:
        return {}
    name = MPICH.label_of(collective, algorithm)
    return {f"MPIR_CVAR_{collective.upper()}_INTRA_ALGORITHM": name}


MPICH = Mpi(
    name="mpich",
    label="MPICH 5.0",
    algorithms=ALGORITHMS,
    default_algorithm=default_algorithm,
    run_env=cvar_env,
    rules_format="mpich-json",
)


# --- the installed build ----------------------------------------------------------------------


def cvar_algorithms(mpivars: str) -> dict[str, list[str]]:
    """Per collective we advise, the algorithm values ``mpivars`` lists for
    ``MPIR_CVAR_<COLL>_INTRA_ALGORITHM`` (``auto`` and the ones we leave out dropped)."""
    try:
        text = subprocess.run(
            [mpivars], capture_output=True, text=True, timeout=60, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CommodelError(f"cannot run {mpivars}: {exc}") from None
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        head = re.match(r"\tMPIR_CVAR_([A-Z]+)_INTRA_ALGORITHM\s*=", line)
        if head:
            current = head.group(1).lower() if head.group(1).lower() in ALGORITHMS else None
            if current:
                out[current] = []
            continue
        if line.startswith("\t"):
            current = None
            continue
        value = re.match(r"(\w+)\s+- ", line)
        if current and value and value.group(1) not in NOT_ALGORITHMS:
            out[current].append(value.group(1))
    return out


def libmpi_path(prefix: str | os.PathLike | None = None) -> Path:
    """MPICH's library: under ``prefix`` (an installation such as ``.mpi/mpich``), else
    the one mpi4py has loaded."""
    if prefix is not None:
        return Path(prefix) / "lib" / "libmpi.so.12"
    from .library import loaded_libmpi_path

    path = loaded_libmpi_path()
    if path is None:
        raise CommodelError("no MPICH library loaded (give the installation's prefix)")
    return Path(path)


def installed_library() -> Path:
    """The MPICH library of the ``mpichversion`` on PATH, else of ``make mpis``'s
    ``.mpi/mpich``."""
    import shutil

    from .mpi import installed_prefix

    found = shutil.which("mpichversion")
    prefix = Path(found).resolve().parent.parent if found else installed_prefix("mpich")
    if prefix is None or not (prefix / "lib" / "libmpi.so.12").exists():
        raise CommodelError(
            "no MPICH installation found: put its bin/ on PATH (e.g. a venv with "
            "'pip install mpich'), or run 'make mpis'"
        )
    return prefix / "lib" / "libmpi.so.12"


def builtin_tree(library: str | os.PathLike) -> dict:
    """The selection tree compiled into an MPICH library (``MPII_coll_generic_json``: the
    JSON text in its read-only data that selects every collective)."""
    data = Path(library).read_bytes()
    for match in re.finditer(rb'\{\s*"collective=bcast"', data):
        end = data.find(b"\0", match.start())
        try:
            tree = json.loads(data[match.start() : end].decode())
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        if isinstance(tree, dict) and "collective=ialltoallw" in tree:
            return tree
    raise CommodelError(f"{library}: no MPICH selection tree found in it")


def as_pairs(node: Any) -> Any:
    """A JSON selection object as :data:`DEFAULT`'s lists of (key, subtree), an
    ``algorithm=MPIR_<Coll>_intra_<name>`` leaf as ``name``."""
    if isinstance(node, dict):
        if len(node) == 1:
            (key,) = node
            leaf = re.fullmatch(
                r"algorithm=MPIR_[A-Za-z]+_(?:intra|allcomm|inter)_(\w+)", key.replace(" ", "")
            )
            if leaf:
                return leaf.group(1)
        pairs = []
        for key, sub in node.items():
            read = read_key(key)[0] or key
            pairs.append((_ANY if _is_any(read) else read, as_pairs(sub)))
        return pairs
    return node


def _is_any(key: str) -> bool:
    """csel.c's ``key_is_any``: ``any`` or a key ending in ``=any``."""
    return key == _ANY or key.endswith("=any")


def intra_branch(tree: dict, collective: str) -> Any:
    """The intra-communicator branch of ``collective`` in a JSON tree, as pairs."""
    top = _first(tree, f"collective={collective}")
    intra = _first(top, "comm_type=intra") if isinstance(top, dict) else None
    return None if intra is None else as_pairs(intra)


def _first(node: dict, key: str) -> Any:
    """The value of the first key of ``node`` that csel.c reads as ``key``, or None."""
    return next((sub for k, sub in node.items() if read_key(k)[0] == key), None)


# --- the rules file: a JSON tuning file ---------------------------------------------------------

_SIZE_KEY = {"allgather": "total_msg_size", "allreduce": "avg_msg_size",
             "bcast": "avg_msg_size", "alltoall": "avg_msg_size"}  # fmt: skip


def _json_node(pairs: Any, collective: str) -> Any:
    if isinstance(pairs, str):
        name = f"MPIR_{_CSEL_NAME[collective]}_intra_{pairs}"
        return {f"algorithm={name}": {}}
    return {key: _json_node(sub, collective) for key, sub in pairs}


def rules_json(collective: str, picks: dict[int, list[tuple[int, int]]], builtin: dict) -> dict:
    """The JSON tuning file: ``builtin`` (the library's tree) with ``collective``'s
    intra-communicator branch replaced by, per communicator size P in ``picks`` (a list of
    (size m, algorithm number) from each m on), ``comm_size<=P`` and message-size
    conditions (``avg_msg_size`` or, for allgather, ``total_msg_size`` = P x m), MPICH's
    own branch after them for larger communicators."""
    if f"collective={collective}" not in builtin:
        raise CommodelError(f"the MPICH tree has no collective={collective}")
    key = _SIZE_KEY[collective]
    branch: list = []
    for p in sorted(picks):
        rules = sorted(picks[p])
        per_size: list = []
        for size, number in rules:
            name = MPICH.label_of(collective, number)
            if per_size and per_size[-1][1] == name:
                continue
            per_size.append([size, name])
        conds = []
        for i, (_size, name) in enumerate(per_size):
            nxt = per_size[i + 1][0] if i + 1 < len(per_size) else None
            bound = None if nxt is None else (nxt * p if key == "total_msg_size" else nxt)
            conds.append((f"{key}<{bound}" if bound is not None else f"{key}=any", name))
        branch.append((f"comm_size<={p}", conds))
    branch.append(("comm_size=any", intra_branch(builtin, collective)))
    tree = dict(builtin)
    top = dict(tree[f"collective={collective}"])
    top["comm_type=intra"] = _json_node(branch, collective)
    tree[f"collective={collective}"] = top
    return tree


def check_json(data: bytes, builtin: dict | None = None) -> list[tuple[str, str]]:
    """Problems MPICH would have with a JSON tuning file, as (kind, message): "error" for
    what MPICH refuses or runs into (not JSON, a key csel.c does not parse, a collective it
    does not know, a leaf naming no algorithm of its collective), "warning" for a key MPICH
    reads otherwise than it is written (:func:`read_key`: spaces dropped, a number read by
    C's ``atoi``) and for a collective of ``builtin`` the file lacks (a call of it finds no
    selection). Each message names the JSON path of the key, keys as written."""
    try:
        tree = json.loads(data.decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return [("error", f"not JSON: {exc}; MPICH fails at MPI_Init")]
    except RecursionError:  # nested beyond Python's own reader, far beyond json-c's
        tree = None
    depth = json_depth(tree) if tree is not None else None
    if depth is None or depth > JSON_C_DEPTH:
        levels = f"{depth} levels" if depth else "deeper than Python's JSON reader goes"
        return [("error", f"nested {levels}: json-c, which MPICH reads the file with, parses "
                 f"at most {JSON_C_DEPTH} levels (its default), so MPICH has no selection at "
                 "all")]  # fmt: skip
    if not isinstance(tree, dict):
        return [("error", "the top level is not a JSON object")]
    problems: list[tuple[str, str]] = []

    def walk(node: dict, where: str, coll: str | None) -> None:
        problems.extend(("error", m) for m in _values_not_objects(node, where))
        keys = list(node)
        read = {key: read_key(key) for key in keys}
        leaves = [key for key in keys if _is_leaf(key)]
        if leaves:
            # a leaf: the container's reader takes the whole object and asserts on the first
            # key that names no algorithm (csel_container.c: "unrecognized key")
            others = [key for key in keys if key not in leaves]
            if others:
                problems.append(("error", f"{where}: {others[0]!r} beside an algorithm key: "
                                 "MPICH reads the object as one leaf and asserts (unrecognized "
                                 "key)"))  # fmt: skip
            for key in leaves:
                as_read, how = read[key]
                if how:
                    problems.append(("warning", f"{where} > {key}: MPICH reads the key as "
                                     f"{as_read!r} ({how})"))  # fmt: skip
                problems.extend(("error", m) for m in _leaf_problems(key, where, coll))
            return
        for i, key in enumerate(keys):
            # csel.c's validate_tree, at MPI_Init: an `any` ends its object, a condition
            # that is not yes/no has a key after it, every condition leads somewhere
            as_read, how = read[key]
            if how:
                problems.append(("warning", f"{where} > {key}: MPICH reads the key as "
                                 f"{as_read or key.replace(' ', '')!r} ({how})"))  # fmt: skip
            last = i + 1 == len(keys)
            if as_read is None:
                pass  # reported below
            elif _is_any(as_read) and not last:
                problems.append(("error", f"{where}: {key!r} is not the last key, "
                                 "so MPICH aborts at MPI_Init (non-NULL failure path)"))  # fmt: skip
            elif last and not _is_any(as_read) and not _is_yes_no(as_read):
                problems.append(("error", f"{where}: {key!r} is the last key, so MPICH "
                                 "aborts at MPI_Init (NULL failure path)"))  # fmt: skip
            if node[key] == {}:
                problems.append(("error", f"{where}: {key!r} leads nowhere (NULL success path)"))
        for key, sub in node.items():
            ckey = key.replace(" ", "")
            collective = ckey[len("collective=") :] if ckey.startswith("collective=") else None
            if read[key][0] is None:
                if collective is not None:
                    problems.append(("error", f"{where} > {key}: MPICH has no collective "
                                     f"{collective[:40]!r} (csel.c asserts at MPI_Init)"))  # fmt: skip
                else:
                    problems.append(("error", f"{where}: unknown key {key!r} (MPICH asserts)"))
            if isinstance(sub, dict):  # else reported above
                walk(sub, key if collective is not None else f"{where} > {key}",
                     coll if collective is None else collective)  # fmt: skip

    walk(tree, "top", None)
    if builtin:
        present = {read_key(k)[0] for k in tree}
        missing = [k for k in builtin if k not in present]
        if missing:
            problems.append((
                "warning",
                f"{len(missing)} collectives have no selection (e.g. {missing[0]}): MPICH "
                "fails when the program calls one",
            ))  # fmt: skip
    return problems


def _is_leaf(key: str) -> bool:
    """An algorithm or composition key (csel.c hands its whole object to the container's
    reader), spaces dropped as csel.c drops them."""
    return key.replace(" ", "").startswith(("algorithm=", "composition="))


def _leaf_problems(key: str, where: str, coll: str | None) -> list[str]:
    """An ``algorithm=MPIR_<Coll>_<intra|inter|allcomm>_<name>`` key that names no
    algorithm of the collective ``coll`` it is under."""
    fn = key.replace(" ", "").split("=", 1)[1]
    head = f"MPIR_{(coll or '').capitalize()}_"
    leaf = re.fullmatch(r"(intra|inter|allcomm)_(\w+)", fn[len(head) :])
    if not (coll and fn.startswith(head) and leaf):
        return [f"{where}: {key}: not an algorithm of {coll}"]
    if coll in ALGORITHMS and leaf.group(1) == "intra":
        known = [a for _n, a, _g in ALGORITHMS[coll]] + list(NOT_ALGORITHMS)
        if leaf.group(2) not in known:
            return [f"{where}: {key}: MPICH has no such {coll}"]
    return []


# The algorithms whose leaf object MPICH reads parameters from (csel_container.c's
# parse_container_params, 5.0.x: the ones with a case there; every other leaf's object is
# not looked into).
_WITH_PARAMETERS = frozenset(
    "MPIR_" + name for name in (
        "Bcast_intra_tree", "Bcast_intra_pipelined_tree", "Allreduce_intra_recursive_multiplying",
        "Allreduce_intra_tree", "Allreduce_intra_recexch", "Allreduce_intra_ccl",
        "Allreduce_intra_k_reduce_scatter_allgather", "Allgather_intra_k_brucks",
        "Allgather_intra_recexch_doubling", "Allgather_intra_recexch_halving",
        "Alltoall_intra_k_brucks", "Barrier_intra_k_dissemination", "Barrier_intra_recexch",
        "Ibcast_intra_tsp_tree", "Ibcast_intra_tsp_ring", "Ibcast_intra_tsp_scatterv_recexch_allgatherv",
        "Ireduce_intra_tsp_tree", "Ireduce_intra_tsp_ring", "Iallreduce_intra_tsp_tree",
        "Iallreduce_intra_tsp_recexch_single_buffer", "Iallreduce_intra_tsp_recexch_multiple_buffer",
        "Iallreduce_intra_tsp_recexch_reduce_scatter_recexch_allgatherv",
    )
)  # fmt: skip

_JSON_TYPE = {list: "an array", str: "a string", int: "a number", float: "a number",
              bool: "a boolean", type(None): "null"}  # fmt: skip


def _values_not_objects(node: dict, where: str) -> list[str]:
    """The values of ``node`` (an object at JSON path ``where``) that MPICH needs to be
    objects and are not. csel.c's parse_json_tree asserts that each value it reads is an
    object, a leaf's (``algorithm=...``: {}) too: the values of every key up to the first
    ``algorithm=`` or ``composition=`` key, which hands the whole object to the container's
    reader. That reader takes the object's last key's value for the algorithm's parameters,
    read as an object when the algorithm has any (:data:`_WITH_PARAMETERS`; json-c then
    dereferences a NULL table: MPI_Init crashes)."""
    out = []
    keys = list(node)
    leaf = next((i for i, k in enumerate(keys) if _is_leaf(k)), None)
    for key in keys if leaf is None else keys[: leaf + 1]:
        if not isinstance(node[key], dict):
            out.append(f"{where} > {key}: {_JSON_TYPE[type(node[key])]} where csel.c "
                       "asserts an object ({}), so MPICH aborts at MPI_Init")  # fmt: skip
    last = keys[-1] if keys else ""
    if (leaf is not None and leaf + 1 < len(keys) and not isinstance(node[last], dict)
            and last.replace(" ", "").removeprefix("algorithm=") in _WITH_PARAMETERS):  # fmt: skip
        out.append(f"{where} > {last}: {_JSON_TYPE[type(node[last])]} where MPICH reads "
                   "the algorithm's parameters from an object, so MPI_Init crashes")  # fmt: skip
    return out


# json_tokener_parse's depth (json-c's JSON_TOKENER_DEFAULT_DEPTH): csel.c parses the file
# with it, and a deeper file parses to NULL, which csel.c takes for an empty tree.
JSON_C_DEPTH = 32


def json_depth(value: Any) -> int:
    """Levels of a parsed JSON value (a scalar or an empty object is 1), counted without
    recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(node, dict):
            stack.extend((sub, level + 1) for sub in node.values())
        elif isinstance(node, list):
            stack.extend((sub, level + 1) for sub in node)
    return deepest


def _is_yes_no(key: str) -> bool:
    """The conditions csel.c lets end an object (its boolean operators)."""
    return key.startswith(("collective=", "comm_type=", "comm_hierarchy=", "is_"))


# csel.c's keys (parse_json_tree, 5.0.x), in the order it tries them: fixed texts, a
# collective's name, a condition with a number (the longer prefix first), then `any`.
_FIXED_KEYS = frozenset((
    "is_multi_threaded=yes", "is_multi_threaded=no", "comm_type=intra", "comm_type=inter",
    "comm_size=pow2", "comm_size=node_comm_size", "count<pow2", "is_commutative=yes",
    "is_commutative=no", "is_sendbuf_inplace=yes", "is_sendbuf_inplace=no", "is_op_built_in=yes",
    "is_op_built_in=no", "is_block_regular=yes", "is_block_regular=no",
    "is_node_consecutive=yes", "is_node_consecutive=no", "comm_hierarchy=parent",
    "comm_hierarchy=node_roots", "comm_hierarchy=node", "comm_hierarchy=flat",
))  # fmt: skip
_BLOCKING = ["allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", "alltoallw",
             "barrier", "bcast", "exscan", "gather", "gatherv", "neighbor_allgather",
             "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv",
             "neighbor_alltoallw", "reduce", "reduce_scatter", "reduce_scatter_block", "scan",
             "scatter", "scatterv"]  # fmt: skip
COLLECTIVES = frozenset(_BLOCKING + ["i" + name for name in _BLOCKING])  # and each nonblocking
_NUMBER_KEYS = ("comm_size<=", "comm_size<", "count<=", "avg_msg_size<=", "avg_msg_size<",
                "total_msg_size<=", "total_msg_size<", "comm_avg_ppn<=", "comm_avg_ppn<")  # fmt: skip


def read_key(key: str) -> tuple[str | None, str]:
    """A key of a tuning file as csel.c's parse_json_tree reads it: (the key it reads,
    written as we write keys, or None for one it asserts on; how that differs from ``key``,
    "" when it does not). csel.c drops the spaces of a key (``MPL_strdup_no_spaces``), then
    compares it with its fixed keys and prefixes in its order; a condition's number is C's
    ``atoi`` of what follows the prefix (:func:`c_atoi`), and a key ending in ``=any`` is
    `any` only if no prefix took it first (``comm_size<=any`` is ``comm_size<=0``)."""
    ckey = key.replace(" ", "")
    how = ["csel.c drops the spaces of a key"] if ckey != key else []
    if _is_leaf(ckey) or ckey in _FIXED_KEYS:
        return ckey, "; ".join(how)
    if ckey.startswith("collective="):
        return (ckey if ckey[len("collective=") :] in COLLECTIVES else None), "; ".join(how)
    for prefix in _NUMBER_KEYS:
        if ckey.startswith(prefix):
            text = ckey[len(prefix) :]
            value, note = c_atoi(text)
            if note:
                how.append(note)
            elif str(value) != text:
                how.append(f"atoi reads {text[:24]!r} as {value}")
            return f"{prefix}{value}", "; ".join(how)
    return (ckey if _is_any(ckey) else None), "; ".join(how)


INT_MIN, INT_MAX = -(2**31), 2**31 - 1
_LONG_MAX = 2**63 - 1


def c_atoi(text: str) -> tuple[int, str]:
    """C's ``atoi(text)`` as glibc has it on a 64-bit machine, ``(int) strtol(text, NULL,
    10)``: leading white space, a sign and decimal digits, the rest ignored; beyond a long
    ``LONG_MAX`` or ``LONG_MIN``, then the low 32 bits as a signed int. Returns the value
    and what in ``text`` it did not read as written ("" when it read all of it)."""
    match = re.match(r"[ \t\n\v\f\r]*([+-]?)([0-9]*)", text)
    assert match is not None  # the pattern matches the empty text
    sign, digits = match.groups()
    notes = []
    if not digits:
        notes.append(f"no number in {text[:24]!r}: atoi reads 0")
    elif match.end() < len(text):
        notes.append(f"atoi stops at {text[match.end() :][:24]!r}")
    significant = digits.lstrip("0")
    # beyond 19 digits a long overflows (and Python's int() has a limit on digits)
    exact = int(sign + (significant or "0")) if len(significant) <= 19 else None
    if exact is None:
        wide = -_LONG_MAX - 1 if sign == "-" else _LONG_MAX
    else:
        wide = max(-_LONG_MAX - 1, min(_LONG_MAX, exact))
    value = (wide - INT_MIN) % 2**32 + INT_MIN
    if value != exact and digits:
        shown = sign + (significant[:20] + "..." if len(significant) > 20 else significant)
        notes.append(f"{shown} does not fit in a C int: atoi reads {value}")
    return value, "; ".join(notes)


def lookup_json(tree: dict, collective: str, p: int, size: int) -> str:
    """The algorithm a JSON tuning file selects for a call (csel's search on our reading)."""
    branch = intra_branch(tree, collective)
    if branch is None:
        raise CommodelError(f"no selection for {collective}")
    return select(branch, collective, p, size)
