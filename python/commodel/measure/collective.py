"""``measure collective``: time Open MPI's own collectives, with its default decision or one
coll/tuned algorithm forced.

Open MPI reads its MCA parameters once, at MPI_Init, so one mpirun measures one algorithm.
``mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_<coll>_algorithm N`` hands
them to every rank as the environment variables ``OMPI_MCA_<name>``; Open MPI's MCA base
takes them from there (before any parameter file). This benchmark reads the same variables
on every rank (:func:`forced_algorithm`), checks that all ranks agree, and records the
algorithm in the campaign's options (``algorithm``: 0 is Open MPI's default decision). The
forced algorithm only acts with dynamic rules on; a rules file
(``coll_tuned_dynamic_rules_filename``) takes precedence over it and is recorded too. Each
rank also reads what Open MPI holds through MPI_T (:func:`mpi_t_forcing`), which catches a
parameter file forcing behind the environment's back. ``measure collective-sweep``
(:func:`sweep`) starts one mpirun per algorithm with the right parameters.

Timing: each repetition starts together (a sleeping barrier, then MPI_Barrier); every rank
times its call, and the sample is the slowest rank's time. Sizes are per rank as the
generators count them (``commodel schedule --list``): bytes to each rank (alltoall), bytes
each rank contributes or gets (allgather, gather, scatter), the whole buffer (bcast,
allreduce; allreduce reduces MPI_BYTE with MPI_BOR, commutative as every algorithm allows);
barrier has one size, 0. Repetitions of a size continue until the 95% confidence interval
of the mean is within ``ci`` of the mean (Zhu section 3.1) or ``max_reps``; with a
``budget`` of B seconds, a size whose interval is still wider goes on past ``max_reps``
until its repetitions have taken B seconds of wall time (rank 0's clock, the
synchronisation included; the first batch, whose wall time holds the warm-up call, and a
resumed batch count the sum of their samples). A cap on the repetitions is what keeps a
1 MiB alltoall affordable; the budget is what lets a 1 KiB bcast, whose samples spread by
25% on a shared machine, reach its interval in about a second.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import CommodelError
from ..mpis import get as get_mpi
from ..mpis.intelmpi import SETTINGS_FILE_VAR
from ..mpis.mpi import decimal
from ..openmpi import SEGSIZE, rule_message_size
from ..report.measure_tables import format_collective_result
from .common import Context, kernel, sync_start
from .concurrent import ci_ok
from .unit import Measurement, fill, option

COLLECTIVES = ("alltoall", "allgather", "allreduce", "bcast", "gather", "scatter", "barrier")


@dataclass(frozen=True)
class Options:
    """``measure collective``'s options (``budget``, ``splits`` and ``round`` are stored in
    the campaign's options only when given: see :func:`validate_options`)."""

    collective: str | None = option(
        None,
        "alltoall, allgather, allreduce, bcast, gather, scatter or barrier",
        metavar="C",
        required=True,
    )
    sizes: list[int] = option(
        [1024 * 2**k for k in range(13)],  # 1 KiB .. 4 MiB
        "sizes per rank as 'commodel schedule --list' counts them (1KiB,2KiB,..,4MiB)",
        kind="sizes",
    )
    root: int = option(0, "root of bcast, gather, scatter (0)", kind="int")
    min_reps: int = option(5, "repetitions before the CI test (5)", kind="int")
    max_reps: int = option(100, "repetition cap per size (100)", kind="int")
    ci: float = option(0.02)
    budget: float = option(
        0.0,
        "a size whose 95%% interval is still wider than 2%% goes on past --max-reps "
        "until its repetitions have taken SECONDS of wall time (cheap sizes reach their "
        "interval; 0: off, the default)",
        kind="float",
        metavar="SECONDS",
    )
    splits: int = option(
        1,
        "gather only: time K MPI_Gather calls of M/K bytes, an MPI_Barrier between "
        "two (the gather-split schedule), instead of one of M (1)",
        kind="int",
        metavar="K",
    )
    traffic: bool = option(
        False,
        "instead of timing, count what one call of each size sends, peer by peer, as Open "
        "MPI 5's pml/monitoring counts it (mpirun --mca pml_monitoring_enable 1): which "
        "algorithm ran (advise --verify)",
        kind="flag",
    )
    round: int = option(
        0,
        "a label kept in the campaign's options, so that the same forcing can be "
        "measured again in another mpirun as a campaign of its own (advise --verify "
        "--rounds; 0)",
        kind="int",
        metavar="N",
    )


# MPICH's variables: the JSON tuning file, and the forced algorithm of a collective.
MPICH_RULES_VAR = "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE"


def mpich_var(collective: str) -> str:
    return f"MPIR_CVAR_{collective.upper()}_INTRA_ALGORITHM"


def forced_algorithm(collective: str, environ: Mapping[str, str] | None = None) -> dict:
    """What the MPI was told about ``collective``: through ``OMPI_MCA_*`` variables (Open
    MPI), or MPICH's ``MPIR_CVAR_<COLL>_INTRA_ALGORITHM`` (a name, numbered as
    :mod:`commodel.mpis.mpich` does) and ``MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE``:
    ``{"algorithm": N (0: default decision), "rules_file": path or None}``."""
    env = os.environ if environ is None else environ
    if env.get(mpich_var(collective)) or env.get(MPICH_RULES_VAR):
        return _mpich_forcing(collective, env)
    if env.get(intel_var(collective)):
        return _intel_forcing(collective, env)
    dynamic = env.get("OMPI_MCA_coll_tuned_use_dynamic_rules", "0").strip().lower()
    dynamic_on = dynamic in ("1", "true", "yes", "enabled")
    name = f"OMPI_MCA_coll_tuned_{collective}_algorithm"
    text = env.get(name, "0").strip()
    # Open MPI 5.0's table: 4.1.4's and allgather 7 (sparbit)
    algs = get_mpi("openmpi-5.0").algorithms[collective]
    number = decimal(text)
    if number is None:  # Open MPI also takes the algorithm's name
        for n, alg, _gen in algs:
            if alg == text or f"{n}" == text:
                number = n
    if number is None:
        raise CommodelError(
            f"{name}={text[:40]!r}: not an algorithm of {collective} (0..{algs[-1][0]} or a name)"
        )
    if number > algs[-1][0]:
        raise CommodelError(f"{name}={number}: {collective} has algorithms 0..{algs[-1][0]}")
    rules = env.get("OMPI_MCA_coll_tuned_dynamic_rules_filename") or None
    if not dynamic_on:
        if number:
            raise CommodelError(
                f"{name}={number} has no effect without coll_tuned_use_dynamic_rules 1; "
                "add --mca coll_tuned_use_dynamic_rules 1"
            )
        rules = None
    return {"algorithm": number, "rules_file": rules}


def _mpich_forcing(collective: str, env: Mapping[str, str]) -> dict:
    """:func:`forced_algorithm` for MPICH."""
    mpich = get_mpi("mpich")
    rules = env.get(MPICH_RULES_VAR) or None
    text = env.get(mpich_var(collective), "auto")
    if collective not in mpich.algorithms:
        if text.strip() not in ("", "auto"):
            raise CommodelError(f"{mpich_var(collective)}: not measured for MPICH")
        return {"algorithm": 0, "rules_file": rules}
    number = mpich.number_of(collective, text)
    if number is None:
        names = ", ".join(a for _n, a, _g in mpich.algorithms[collective])
        raise CommodelError(
            f"{mpich_var(collective)}={text[:40]!r}: not an algorithm of {collective} ({names})"
        )
    return {"algorithm": number, "rules_file": rules}


def intel_var(collective: str) -> str:
    return f"I_MPI_ADJUST_{collective.upper()}"


def _intel_forcing(collective: str, env: Mapping[str, str]) -> dict:
    """:func:`forced_algorithm` for Intel MPI. ``I_MPI_ADJUST_<COLL>=<id>`` forces one preset
    for every size and communicator: recorded as that algorithm. A value with conditions
    (``<id>:<l>-<m>;...``, the settings ``advise --mpi intel-mpi`` writes) is recorded as it
    is (``settings``; algorithm 0), with the file it came from when ``advise --verify`` names
    it (:data:`~commodel.mpis.intelmpi.SETTINGS_FILE_VAR`; the file must set the same value).
    A value Intel MPI would ignore (``Incorrect adjust value`` at MPI_Init) is an error."""
    from ..mpis.intelmpi import parse_adjust, read_settings

    name = intel_var(collective)
    text = env[name]
    path = env.get(SETTINGS_FILE_VAR) or None
    items, problems = parse_adjust(collective, text)
    errors = [message for kind, message in problems if kind == "error"]
    if errors:
        raise CommodelError(f"{name}={text[:60]!r}: {errors[0]}; Intel MPI ignores it")
    if len(items) == 1 and not items[0][1] and not path:  # one preset, no conditions
        return {"algorithm": items[0][0], "rules_file": None}
    if path:
        in_file = read_settings(path).get(name)
        if in_file != text:
            raise CommodelError(
                f"{SETTINGS_FILE_VAR}={path}: the file sets {name}={in_file!r}, the "
                f"environment {text[:60]!r}"
            )
    return {"algorithm": 0, "rules_file": path, "settings": text}


def label_of(collective: str, number: int, environ: Mapping[str, str] | None = None) -> str:
    """The algorithm's name as the MPI of the environment (MPICH's variables set, or Open
    MPI) names it."""
    env = os.environ if environ is None else environ
    if env.get(mpich_var(collective)) or env.get(MPICH_RULES_VAR):
        return get_mpi("mpich").label_of(collective, number)
    if env.get(intel_var(collective)):
        return get_mpi("intel-mpi").label_of(collective, number)
    return get_mpi("openmpi-5.0").label_of(collective, number)


def mpi_t_forcing(collective: str) -> dict | None:
    """What Open MPI itself holds, read through the MPI tool interface (MPI_T control
    variables ``coll_tuned_use_dynamic_rules``, ``coll_tuned_<coll>_algorithm``,
    ``coll_tuned_dynamic_rules_filename``), in :func:`forced_algorithm`'s form; None where
    the MPI library offers no MPI_T or lacks the variables. mpi4py has no MPI_T interface,
    so the C functions are called through ctypes in the already loaded MPI library."""
    import ctypes

    from ..mpis.library import loaded_libmpi

    if os.environ.get(mpich_var(collective)) or os.environ.get(MPICH_RULES_VAR):
        return None  # MPICH: its CVARs are read from the environment
    if os.environ.get(intel_var(collective)):
        return None  # Intel MPI: read from the environment too
    try:
        lib = loaded_libmpi()
        if lib is None:
            return None
        init, get_index = lib.MPI_T_init_thread, lib.MPI_T_cvar_get_index
        alloc, read, free = (
            lib.MPI_T_cvar_handle_alloc,
            lib.MPI_T_cvar_read,
            lib.MPI_T_cvar_handle_free,
        )
    except (OSError, AttributeError):
        return None
    provided = ctypes.c_int()
    if init(0, ctypes.byref(provided)) != 0:
        return None
    values = {}
    try:
        for key, name in (
            ("dynamic", "coll_tuned_use_dynamic_rules"),
            ("algorithm", f"coll_tuned_{collective}_algorithm"),
            ("rules_file", "coll_tuned_dynamic_rules_filename"),
        ):
            index, count, handle = ctypes.c_int(), ctypes.c_int(), ctypes.c_void_p()
            if get_index(name.encode(), ctypes.byref(index)) != 0:
                return None
            if alloc(index, None, ctypes.byref(handle), ctypes.byref(count)) != 0:
                return None
            buf = ctypes.create_string_buffer(max(count.value, 8) + 8)
            rc = read(handle, buf)
            free(ctypes.byref(handle))
            if rc != 0:
                return None
            if key == "rules_file":
                values[key] = buf.value.decode(errors="replace") or None
            elif key == "dynamic":
                values[key] = buf.raw[0] != 0
            else:
                values[key] = int.from_bytes(buf.raw[:4], "little", signed=True)
    finally:
        lib.MPI_T_finalize()
    if not values["dynamic"]:
        return {"algorithm": 0, "rules_file": None}
    return {"algorithm": values["algorithm"], "rules_file": values["rules_file"]}


def validate_options(
    opts: dict[str, Any], environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The campaign's options; the forced algorithm comes from ``environ`` (os.environ)."""
    out = fill(Options, opts, "measure collective")
    if out["collective"] not in COLLECTIVES:
        raise CommodelError(
            f"measure collective: --collective must be one of {', '.join(COLLECTIVES)}, got "
            f"{str(out['collective'])[:40]!r}"
        )
    if out["collective"] == "barrier":
        out["sizes"] = [0]
    sizes = [int(s) for s in out["sizes"]]
    if not sizes or any(s < 0 for s in sizes):
        raise CommodelError(f"--sizes: expected sizes >= 0, got {sizes[:8]}")
    out["sizes"] = sizes
    if int(out["max_reps"]) < int(out["min_reps"]):
        raise CommodelError(f"--max-reps must be >= {out['min_reps']}, got {out['max_reps']}")
    budget = out.pop("budget", 0.0) or 0.0
    if not (isinstance(budget, (int, float)) and math.isfinite(budget) and budget >= 0):
        raise CommodelError(f"--budget: expected seconds >= 0, got {str(budget)[:40]!r}")
    if budget > 0:  # recorded only when given, so that campaigns without it keep their options
        out["budget"] = float(budget)
    splits = int(out.pop("splits", 1) or 1)
    if splits < 1 or (splits > 1 and out["collective"] != "gather"):
        raise CommodelError(f"--splits {splits}: only gather splits, into K >= 1 sub-gathers")
    if splits > 1:  # recorded only when split, so that plain campaigns keep their options
        out["splits"] = splits
        # sub-gathers apart: campaigns from before the barrier (back to back) are not resumed
        out["split_sync"] = "barrier"
    if out.pop("traffic", False):  # recorded only when asked, as budget
        out["traffic"] = True
    rnd = int(out.pop("round", 0) or 0)
    if rnd < 0:
        raise CommodelError(f"--round {rnd}: expected a round number >= 0")
    if rnd > 0:  # a repeated campaign of the same forcing (advise --verify --rounds)
        out["round"] = rnd
    forced = forced_algorithm(out["collective"], environ)
    out["algorithm"] = forced["algorithm"]
    out["rules_file"] = forced["rules_file"]
    if "settings" in forced:  # Intel MPI's I_MPI_ADJUST_<COLL> with conditions
        out["settings"] = forced["settings"]
    return out


def _prepare(ctx: Context, p: dict) -> dict:
    p = dict(p)
    coll, m, n = p["collective"], int(p["size"]), ctx.size
    if not 0 <= int(p["root"]) < n:
        raise CommodelError(f"--root {p['root']} is not a rank of the {n} started")
    if label_of(coll, int(p["algorithm"])) == "two_proc" and n != 2:
        raise CommodelError(
            f"{coll} algorithm {p['algorithm']} (two_proc) runs on 2 ranks only, not {n} "
            "(Open MPI returns MPI_ERR_UNSUPPORTED_OPERATION)"
        )
    send_bytes = {"alltoall": m * n, "scatter": m * n}.get(coll, m)
    recv_bytes = {"alltoall": m * n, "allgather": m * n, "gather": m * n}.get(coll, m)
    p["sbuf"] = ctx.buffer(send_bytes, "send")
    p["rbuf"] = ctx.buffer(recv_bytes, "recv")
    if "collective_comm" not in ctx.cache:
        ctx.cache["collective_comm"] = ctx.comm.Dup()
    p["comm"] = ctx.cache["collective_comm"]
    return p


def split_sizes(m: int, k: int) -> list[int]:
    """The sizes of k sub-gathers of m bytes: m // k each, the remainder added to the last
    (as the ``gather-split`` generator cuts)."""
    base = m // k
    return [base] * (k - 1) + [m - base * (k - 1)]


def _call(MPI: Any, comm: Any, coll: str, m: int, root: int, sbuf: Any, rbuf: Any) -> None:
    B = MPI.BYTE
    if coll == "alltoall":
        comm.Alltoall([sbuf, m, B], [rbuf, m, B])
    elif coll == "allgather":
        comm.Allgather([sbuf, m, B], [rbuf, m, B])
    elif coll == "allreduce":
        comm.Allreduce([sbuf, m, B], [rbuf, m, B], op=MPI.BOR)
    elif coll == "bcast":
        comm.Bcast([sbuf, m, B], root=root)
    elif coll == "gather":
        comm.Gather([sbuf, m, B], [rbuf, m, B] if comm.Get_rank() == root else None, root=root)
    elif coll == "scatter":
        comm.Scatter([sbuf, m, B] if comm.Get_rank() == root else None, [rbuf, m, B], root=root)
    else:
        comm.Barrier()


@kernel("collective.environment")
def _k_environment(ctx: Context, p: dict) -> dict:
    """This rank's forcing: from the environment, and from MPI_T where available."""
    return {"env": forced_algorithm(p["collective"]), "mpi_t": mpi_t_forcing(p["collective"])}


@kernel("collective.run", _prepare)
def _k_run(ctx: Context, p: dict) -> list[float]:
    MPI, comm = ctx.MPI, p["comm"]
    coll, m, root = p["collective"], int(p["size"]), int(p["root"])
    parts = split_sizes(m, int(p.get("splits", 1)))
    n = comm.Get_size()
    sbuf, rbuf = memoryview(p["sbuf"]), memoryview(p["rbuf"])
    # sub-gather j: bytes offset .. offset + m_j of each rank, into its own part of rbuf
    views = []
    offset = 0
    for part in parts:
        views.append((part, sbuf[offset:], rbuf[offset * n :]))
        offset += part
    # with warmup, one untimed call first: the first call of a size pays what later ones do
    # not (Open MPI's TCP connections are opened at the first message between two ranks,
    # the buffers' pages are touched for the first time): 1.6 ms against 30 us at 1 KiB
    # on loopback
    warm = 1 if p.get("warmup") else 0
    out = []
    for _ in range(warm + int(p["reps"])):
        sync_start(comm)
        t0 = MPI.Wtime()
        for j, (part, sview, rview) in enumerate(views):
            if j:  # a split: keep the sub-gathers apart (docs/advise.md, "Gather split")
                comm.Barrier()
            _call(MPI, comm, coll, part, root, sview, rview)
        out.append(MPI.Wtime() - t0)
    return out[warm:]


@kernel("collective.traffic", _prepare)
def _k_traffic(ctx: Context, p: dict) -> list[tuple[int | None, int]] | None:
    """One untimed call, then one call between two readings of Open MPI's per-peer counters:
    this rank's (messages, bytes) to every rank. Without them (another MPI), on the emulated
    cluster with one rank a host, the kernel's TCP byte counts (messages None, the MPI's
    headers included; :func:`commodel.cluster.sockets.call_bytes`); else None."""
    from ..cluster.sockets import call_bytes
    from .traffic import open_counters

    MPI, comm = ctx.MPI, p["comm"]
    coll, m, root = p["collective"], int(p["size"]), int(p["root"])
    counters = ctx.cache.get("traffic_counters")
    if counters is None:
        counters = ctx.cache["traffic_counters"] = open_counters(MPI) or False
    _call(MPI, comm, coll, m, root, p["sbuf"], p["rbuf"])
    if not counters:
        sent = call_bytes(comm, lambda: _call(MPI, comm, coll, m, root, p["sbuf"], p["rbuf"]))
        return None if sent is None else [(None, b) for b in sent]
    sync_start(comm)
    before = counters.read()
    _call(MPI, comm, coll, m, root, p["sbuf"], p["rbuf"])
    after = counters.read()
    return [(after[0][i] - before[0][i], after[1][i] - before[1][i]) for i in range(ctx.size)]


def _counted_by(peers: list) -> str:
    """Who counted a rank's traffic: the MPI library, or the kernel (messages not known)."""
    return "kernel tcp bytes_acked" if any(x[0] is None for x in peers) else "pml/monitoring"


def _traffic_sizes(ctx: Context, opts: dict[str, Any]) -> list[dict[str, Any]]:
    """``--traffic``: per size, every rank's messages and bytes to each peer in one call,
    stored as one sample a rank (quantity ``traffic``, ``extra.peers``: [[messages, bytes],
    ...] by world rank)."""
    coll, alg = opts["collective"], int(opts["algorithm"])
    out = []
    for m in opts["sizes"]:

        def rows(outs, m=m):
            missing = [r for r, o in enumerate(outs) if o is None]
            if missing:
                raise CommodelError(
                    f"--traffic: rank {missing[0]} has no per-peer counters (Open MPI 5 "
                    "with --mca pml_monitoring_enable 1 and, where the PML is restricted, --mca pml "
                    "ob1,monitoring on the mpirun line; another MPI: one rank a host of the "
                    "emulated cluster, whose kernel counts the bytes of each TCP connection)"
                )
            return [
                {"phase": "collective", "pattern": coll, "quantity": "traffic",
                 "size_bytes": m, "n_ranks": ctx.size, "repetition": 0, "value_s": 0.0,
                 "src": r, "extra": {"algorithm": alg, "peers": [list(x) for x in o],
                                     "counted_by": _counted_by(o)}}
                for r, o in enumerate(outs)
            ]  # fmt: skip

        res = ctx.step(
            f"collective/{coll}/a={alg}/m={m}/traffic",
            "collective.traffic",
            {"collective": coll, "algorithm": alg, "size": m, "root": opts["root"]},
            rows=rows,
            replay=lambda stored: [
                [tuple(x) for x in r["extra"]["peers"]]
                for r in sorted(stored, key=lambda r: r["src"])
            ],
        )
        out.append({"size": m, "peers": res.per_rank})
        ctx.progress.advance(1, f"{coll} traffic {m} B")
    return out


def traffic_of(db_path: str, campaign: int) -> dict[int, list[list[tuple[int | None, int]]]]:
    """A ``--traffic`` campaign's matrices: size -> [src][dst] = (messages, bytes); messages
    None where the kernel counted the bytes (:func:`_k_traffic`)."""
    from ..db import ResultsDB

    out: dict[int, dict[int, list[tuple[int, int]]]] = {}
    with ResultsDB(db_path, read_only=True) as db:
        for r in db.samples(campaign):
            if r.get("quantity") == "traffic":
                peers = [(None if a is None else int(a), int(b)) for a, b in r["extra"]["peers"]]
                out.setdefault(int(r["size_bytes"]), {})[int(r["src"])] = peers
    return {m: [rows[src] for src in sorted(rows)] for m, rows in out.items()}


def batch_reps(times: list[float], spent: float, opts: dict[str, Any]) -> int:
    """The repetitions of a size's next batch after ``times`` (its samples so far, s) took
    ``spent`` seconds of wall time; 0 when the size is done. The first batch is
    ``min_reps``, each later one half as many as there are; done when the 95% interval is
    within ``ci`` of the mean (from ``min_reps`` on), or at ``max_reps``, or past it once
    the ``budget`` (s, 0: none) is spent; past ``max_reps`` a batch holds about what is
    left of the budget at the pace so far."""
    n, lo, cap = len(times), int(opts["min_reps"]), int(opts["max_reps"])
    budget = float(opts.get("budget", 0.0))
    if n == 0:
        return min(lo, cap)
    if n >= lo and ci_ok(times, float(opts["ci"])):
        return 0
    if n < cap:
        return min(max(1, n // 2), cap - n)
    if not 0 < spent < budget:
        return 0
    return max(1, min(n // 2, math.ceil((budget - spent) * n / spent)))


def procedure(opts: dict[str, Any]):
    coll, alg = opts["collective"], int(opts["algorithm"])
    label = label_of(coll, alg)

    def run(ctx: Context) -> dict[str, Any]:
        # every rank must have been started with the same forcing
        every = ctx.step(
            "collective/environment",
            "collective.environment",
            {"collective": coll},
            rows=lambda outs: [],
        ).per_rank
        mine = {"algorithm": alg, "rules_file": opts["rules_file"]}
        if "settings" in opts:
            mine["settings"] = opts["settings"]
        for r, theirs in enumerate(every):
            if theirs["env"] != mine:
                raise CommodelError(
                    f"rank {r} ({ctx.hosts[r]}) was started with {coll} algorithm "
                    f"{theirs['env']['algorithm']} (rules file {theirs['env']['rules_file']}) "
                    f"but rank 0 with {alg} ({opts['rules_file']}); give the --mca options to "
                    "mpirun, not to one rank"
                )
            held = theirs["mpi_t"]
            if held is not None and held != mine:
                raise CommodelError(
                    f"rank {r} ({ctx.hosts[r]}): Open MPI holds {coll} algorithm "
                    f"{held['algorithm']} (rules file {held['rules_file']}), the OMPI_MCA_ "
                    f"environment says {alg} ({opts['rules_file']}); an MCA parameter file "
                    "(e.g. ~/.openmpi/mca-params.conf) sets it? Force it on the mpirun line"
                )
        checked = "MPI_T" if all(t["mpi_t"] is not None for t in every) else "environment"
        sizes = opts["sizes"]
        if opts.get("traffic"):
            ctx.progress.grow(len(sizes))
            with ctx.phase("collective"):
                counted = _traffic_sizes(ctx, opts)
            return {"campaign": ctx.campaign, "collective": coll, "algorithm": alg,
                    "algorithm_name": label, "splits": 1, "ranks": ctx.size,
                    "results": [], "traffic": counted}  # fmt: skip
        ctx.progress.grow(len(sizes) * int(opts["min_reps"]))
        results = []
        with ctx.phase("collective"):
            for m in sizes:
                times: list[float] = []
                batch = 0
                spent = 0.0  # wall time of this size's batches, s
                while reps := batch_reps(times, spent, opts):
                    first = len(times)
                    began = time.monotonic()

                    def rows(outs, m=m, first=first):
                        extra = {
                            "algorithm": alg,
                            "algorithm_name": label,
                            "rules_file": opts["rules_file"],
                            "rule_message_size": rule_message_size(coll, m, ctx.size),
                            "checked_by": checked,
                        }
                        return [
                            {
                                "phase": "collective",
                                "pattern": coll,
                                "quantity": "time",
                                "size_bytes": m,
                                "n_ranks": ctx.size,
                                "repetition": first + k,
                                "value_s": max(outs[r][k] for r in range(ctx.size)),
                                "extra": extra,
                            }
                            for k in range(len(outs[0]))
                        ]

                    res = ctx.step(
                        f"collective/{coll}/a={alg}/m={m}/b={batch}",
                        "collective.run",
                        {
                            "collective": coll,
                            "algorithm": alg,
                            "size": m,
                            "root": opts["root"],
                            "reps": reps,
                            "splits": opts.get("splits", 1),
                            "warmup": batch == 0,
                        },
                        rows=rows,
                        replay=lambda stored: [[r["value_s"] for r in stored]],
                    )
                    if res.replayed:
                        new = res.per_rank[0]
                    else:
                        new = [
                            max(res.per_rank[r][k] for r in range(ctx.size)) for k in range(reps)
                        ]
                    times += new
                    # the first batch's wall time holds the warm-up call, which opens the
                    # connections (over a second on 16 ranks): it counts its samples
                    spent += time.monotonic() - began if batch and not res.replayed else sum(new)
                    ctx.progress.advance(reps, f"{coll} {label} {m} B reps {len(times)}")
                    batch += 1
                results.append(
                    {
                        "size": m,
                        "reps": len(times),
                        "mean_s": sum(times) / len(times),
                        "min_s": min(times),
                        "converged": ci_ok(times, float(opts["ci"])),
                    }
                )
        return {
            "campaign": ctx.campaign,
            "collective": coll,
            "algorithm": alg,
            "algorithm_name": label,
            "splits": int(opts.get("splits", 1)),
            "ranks": ctx.size,
            "results": results,
        }

    return run


# --- the driver: one mpirun per algorithm -----------------------------------------------------


def sweep_algorithms(collective: str, ranks: int, mpi: str = "openmpi-4.1") -> list[int]:
    """0 (the MPI's default decision), then every algorithm of ``collective`` that runs on
    ``ranks`` ranks (``two_proc`` only on 2: Open MPI 4.1.4 returns
    MPI_ERR_UNSUPPORTED_OPERATION otherwise). MPICH and Intel MPI: the algorithms with a
    generator."""
    algs = get_mpi(mpi).algorithms[collective]
    if mpi in ("mpich", "intel-mpi"):
        return [0] + [n for n, _a, g in algs if g]
    return [0] + [n for n, a, _g in algs if a != "two_proc" or ranks == 2]


def launch_argv(mpirun: list[str] | None, ranks: int, mca: list[tuple[str, str]]) -> list[str]:
    """The launcher, ``-n P`` and the ``--mca`` options, ready for the command. A prefix that
    ends with ``--`` (``commodel cluster mpirun --``) gets the options before the ``--``."""
    prefix = list(mpirun or ["mpirun"])
    tail = []
    if prefix and prefix[-1] == "--":
        prefix, tail = prefix[:-1], ["--"]
    opts = ["-n", str(ranks)]
    for key, value in mca:
        opts += ["--mca", key, value]
    return prefix + opts + tail


def run_mca(
    collective: str, algorithm: int, rules_file: str | None = None, mpi: str = "openmpi-4.1"
) -> dict[str, str]:
    """The environment of a run: for Open MPI 4.1 its MCA parameters (as ``OMPI_MCA_``
    variables): none for the default decision, dynamic rules with the algorithm forced, or
    dynamic rules with a rules file; for the others their :attr:`Mpi.run_env`."""
    if mpi != "openmpi-4.1":
        return get_mpi(mpi).run_env(collective, algorithm, rules_file)
    if rules_file:
        return {
            "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
            "OMPI_MCA_coll_tuned_dynamic_rules_filename": rules_file,
        }
    if algorithm:
        return {
            "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
            f"OMPI_MCA_coll_tuned_{collective}_algorithm": str(algorithm),
            **forced_segment_mca(collective, algorithm),
        }
    return {}


def forced_segment_mca(collective: str, algorithm: int) -> dict[str, str]:
    """The segment size that makes a forced run segment as our generator (and the rules file
    ``advise`` writes) does: a forced algorithm takes it from
    ``coll_tuned_<coll>_algorithm_segmentsize``, 0 (unsegmented) by default, where a rule
    gives it in its segsize column (``openmpi.SEGSIZE``: bcast pipeline 8 KiB, gather
    linear_sync 1 KiB). Fan-outs need nothing: the forced defaults are the generators'."""
    seg = SEGSIZE.get((collective, algorithm))
    if not seg:
        return {}
    return {f"OMPI_MCA_coll_tuned_{collective}_algorithm_segmentsize": str(seg)}


def _command(
    collective: str,
    ranks: int,
    forced: dict[str, str],
    measure_args: list[str],
    mpirun: list[str] | None,
    python: str | None,
) -> list[str]:
    import sys

    mca = [(k.removeprefix("OMPI_MCA_"), v) for k, v in forced.items() if k.startswith("OMPI_")]
    argv = launch_argv(mpirun, ranks, mca)
    others = [(k, v) for k, v in forced.items() if not k.startswith("OMPI_")]
    if others:  # MPICH's hydra: -genv NAME VALUE, before a trailing `--` as the options
        at = len(argv) - 1 if argv[-1] == "--" else len(argv)
        argv[at:at] = [x for k, v in others for x in ("-genv", k, v)]
    argv += [python or sys.executable, "-m", "commodel", "measure", "collective"]
    return argv + ["--collective", collective] + list(measure_args)


def _measure_args(db_path: str, opts: dict[str, Any], quiet: bool) -> list[str]:
    out = ["--db", db_path, "--sizes", ",".join(str(m) for m in opts["sizes"])]
    for key in ("root", "min_reps", "max_reps", "budget", "splits", "round"):
        if key in opts:
            out += ["--" + key.replace("_", "-"), str(opts[key])]
    if opts.get("traffic"):
        out.append("--traffic")
    return out + (["--quiet"] if quiet else [])


@dataclass(frozen=True)
class SweepRun:
    """One mpirun of a sweep: ``key`` names it in the results (an algorithm number, 0 the
    default decision, or a word such as ``"rules"``); ``algorithm``/``rules_file`` its
    forcing; ``given`` options that differ from the sweep's (e.g. ``splits``, ``sizes``)."""

    key: int | str | tuple[int | str, int]  # (key, round) for rounds after the first
    algorithm: int = 0
    rules_file: str | None = None
    given: tuple[tuple[str, Any], ...] = ()


def run_forcing(collective: str, run: SweepRun, traffic: bool, mpi: str) -> dict[str, str]:
    """The environment of one run's ranks (:func:`run_mca`); a ``--traffic`` run under Open
    MPI 5 also turns its per-peer counters on (another MPI's bytes are the kernel's)."""
    forced = run_mca(collective, run.algorithm, run.rules_file, mpi)
    if traffic and mpi == "openmpi-5.0":
        from .traffic import MONITORING_MCA

        forced = {**forced, **{"OMPI_MCA_" + k: v for k, v in MONITORING_MCA}}
    return forced


def sweep_campaigns(
    db_path: str,
    given: dict[str, Any],
    ranks: int,
    mpirun: list[str],
    runs: list[SweepRun],
    quiet: bool = False,
    python: str | None = None,
    mpi: str = "openmpi-4.1",
) -> tuple[dict[Any, int], list[str]]:
    """Run ``runs`` one after the other, one mpirun each; a complete campaign with the same
    options (they record the forcing) is kept, an unfinished one resumed. Returns the
    campaign of each run key and the runs that failed (``"key name (exit N)"``)."""
    import subprocess

    from ..children import die_with_parent
    from ..db import ResultsDB, options_json

    coll = given["collective"]
    # the children see only the forcing on their mpirun line
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("OMPI_MCA_coll_tuned_")
        and k not in (MPICH_RULES_VAR, mpich_var(coll), intel_var(coll), "OMPI_MCA_coll")
        and k != SETTINGS_FILE_VAR
    }
    campaigns: dict[Any, int] = {}
    failed = []
    for run in runs:
        mine = {**given, **dict(run.given)}
        forced = run_forcing(coll, run, bool(mine.get("traffic")), mpi)
        opts = validate_options(mine, environ=forced)
        expected = options_json(opts)
        argv = _command(coll, ranks, forced, _measure_args(db_path, opts, quiet), mpirun, python)
        key = f"{run.key[0]}@{run.key[1]}" if isinstance(run.key, tuple) else run.key
        name = f"{key} {label_of(coll, run.algorithm, forced)}"
        if run.rules_file:
            name = f"{key} (rules file {run.rules_file})"
        with ResultsDB(db_path) as db:
            same = [
                c
                for c in db.campaigns()
                if c.benchmark == "collective"
                and c.ranks == ranks
                and options_json(c.options) == expected
            ]
        done = [c for c in same if c.status == "complete"]
        if done:
            print(f"{coll} {name}: campaign {done[-1].id} is complete, kept")
            campaigns[run.key] = done[-1].id
            continue
        if same:
            argv = argv + ["--resume", str(same[-1].id)]
        print(f"{coll} {name}: {' '.join(argv)}", flush=True)
        try:
            rc = subprocess.run(argv, env=env, preexec_fn=die_with_parent).returncode
        except OSError as exc:
            raise CommodelError(f"cannot start {argv[0]!r} for {coll} {name}: {exc}") from None
        if rc != 0:
            failed.append(f"{name} (exit {rc})")
            continue
        with ResultsDB(db_path) as db:
            ids = [
                c.id
                for c in db.campaigns()
                if c.benchmark == "collective" and options_json(c.options) == expected
            ]
        if ids:
            campaigns[run.key] = ids[-1]
    return campaigns, failed


def campaign_samples(db_path: str, campaign: int) -> dict[int, list[float]]:
    """The time samples of a campaign per size (seconds)."""
    from ..db import ResultsDB

    per_size: dict[int, list[float]] = {}
    with ResultsDB(db_path) as db:
        for row in db.samples(campaign):
            per_size.setdefault(int(row["size_bytes"]), []).append(float(row["value_s"]))
    return per_size


def sweep(
    db_path: str,
    given: dict[str, Any],
    ranks: int,
    mpirun: list[str],
    algorithms: list[int] | None = None,
    quiet: bool = False,
    python: str | None = None,
    mpi: str = "openmpi-4.1",
) -> int:
    """One mpirun per algorithm of ``mpi`` (:func:`sweep_campaigns`); keep complete
    campaigns with the same options, resume unfinished ones; print the mean times. Returns
    the exit code."""
    from ..report.tables import format_table
    from ..units import format_duration, format_size

    coll = given["collective"]
    plain = validate_options(given, environ={})
    get_mpi(mpi).check_collective(coll)
    chosen = algorithms if algorithms is not None else sweep_algorithms(coll, ranks, mpi)
    runs = [SweepRun(alg, alg) for alg in chosen]
    campaigns, failed = sweep_campaigns(db_path, given, ranks, mpirun, runs, quiet, python, mpi)
    means: dict[int, dict[int, float]] = {}
    for alg, cid in campaigns.items():
        per_size = campaign_samples(db_path, cid)
        means[int(alg)] = {m: sum(v) / len(v) for m, v in per_size.items()}
    algs = sorted(means)
    rows = []
    for m in plain["sizes"]:
        cells = [format_duration(means[a][m]) if m in means[a] else "-" for a in algs]
        rows.append([format_size(m)] + cells)
    heads = ["size"] + [f"{a} {get_mpi(mpi).label_of(coll, a)}" for a in algs]
    print(f"{coll} on {ranks} ranks: mean time per algorithm (campaigns in {db_path})")
    print(format_table(heads, rows))
    if failed:
        raise CommodelError(
            f"measure collective-sweep: {coll} algorithms failed: {', '.join(failed)}; "
            "rerun the same command to resume them"
        )
    return 0


MEASUREMENT = Measurement(
    name="collective",
    help="time an Open MPI collective over sizes (its default or a forced algorithm)",
    description="Time MPI_Alltoall, Allgather, Allreduce, Bcast, Gather, Scatter or "
    "Barrier over a size range; repeated until the 95% confidence interval is within 2% "
    "of the mean (or --max-reps). The algorithm is whatever mpirun's MCA parameters force "
    "(--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_<coll>_algorithm N), recorded "
    "from the OMPI_MCA_ environment; 'measure collective-sweep' runs every algorithm.",
    options=Options,
    validate=validate_options,
    procedure=procedure,
    summary=format_collective_result,
)
