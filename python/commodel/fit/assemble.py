"""``commodel fit``: a platform file from the campaigns of a results database.

Each benchmark contributes its section: ``plogp`` -> ``plogp``; ``tree`` -> ``network``
(binary tree); ``lmo`` -> ``lmo``; ``many-to-one`` / ``one-to-many`` -> ``many_to_one``;
``tcp`` -> ``tcp``; ``efficiency`` -> ``tcp.efficiency``; ``wire`` ->
``network.overhead``, ``network.ack``. By default the latest complete campaign of every benchmark is used;
``--campaign ID`` (repeatable) picks campaigns explicitly. The output depends only on the
stored samples, so fitting the same database twice gives the same file.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from ..db import Campaign, ResultsDB
from ..errors import CommodelError
from . import yamlout

# benchmark -> function(db, campaign) -> {section name: section}
FITTERS: dict[str, Callable[[ResultsDB, Campaign], dict[str, Any]]] = {}


def fitter(benchmark: str):
    def wrap(fn):
        FITTERS[benchmark] = fn
        return fn

    return wrap


@fitter("plogp")
def _fit_plogp(db: ResultsDB, camp: Campaign) -> dict[str, Any]:
    from .plogp import adjusted_values, fit_plogp, plogp_section

    fit = fit_plogp(db.samples(camp.id), camp.options, ranks=camp.ranks)
    out: dict[str, Any] = {"plogp": plogp_section(fit)}
    notes = []
    S = rendezvous_threshold(camp.mpi_library)
    if S is not None:
        out["plogp"]["S"] = S
        notes.append(
            f"S = {S}: Open MPI's TCP eager limit (btl_tcp_eager_limit, 64 KiB with its "
            "headers, its default): from 64 KiB a message waits for its receive (rendezvous)"
        )
    if 1 in fit.sizes:
        t1 = fit.table1()
        notes.append(
            "LogP/LogGP (Kielmann Table 1): "
            f"L = {t1['L']:.6g} s, o = {t1['o']:.6g} s, g = {t1['g']:.6g} s, "
            f"G = {t1['G']:.6g} s/B, P = {int(t1['P'])}"
        )
    adjusted = adjusted_values(fit)
    if adjusted:
        notes.append(
            "fitted under the model's constraints (o_s, o_r, g non-decreasing in m: weighted "
            "isotonic regression; no time below 0); measured -> written: " + ", ".join(adjusted)
        )
    if notes:
        out["__comment__"] = "\n".join(notes)
    return out


def rendezvous_threshold(mpi_library: str) -> int | None:
    """PLogP's S for the MPI library a campaign ran with (``Campaign.mpi_library``, as
    ``MPI_Get_library_version`` gives it): Open MPI over TCP sends a message of 64 KiB or
    more by rendezvous (its default ``btl_tcp_eager_limit``, headers included), so S =
    64 KiB - 1; None (every message eager) for other libraries."""
    from ..openmpi import EAGER_LIMIT

    return EAGER_LIMIT - 1 if mpi_library.startswith("Open MPI") else None


def _load_optional_fitters() -> None:
    # each module registers itself with @fitter when imported
    import importlib

    for name in ("tree", "topology", "lmo", "manytoone", "tcp", "efficiency"):
        try:
            importlib.import_module(f"{__package__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{name}":
                raise


def select_campaigns(db: ResultsDB, ids: list[int] | None) -> list[Campaign]:
    camps = db.campaigns()
    if ids:
        chosen = [db.campaign(i) for i in ids]
        seen: dict[str, int] = {}
        for c in chosen:
            if c.benchmark in seen:
                raise CommodelError(
                    f"{db.path}: campaigns {seen[c.benchmark]} and {c.id} both measured "
                    f"{c.benchmark!r}; pick one"
                )
            seen[c.benchmark] = c.id
        return chosen
    latest: dict[str, Campaign] = {}
    for c in camps:
        if c.status == "complete":
            latest[c.benchmark] = c
    if not latest:
        raise CommodelError(
            f"{db.path}: no complete campaign to fit"
            + (
                " (unfinished: "
                + ", ".join(f"{c.id} {c.benchmark} {c.status}" for c in camps)
                + "; finish them with 'measure ... --resume' or pick one with --campaign)"
                if camps
                else ""
            )
        )
    return sorted(latest.values(), key=lambda c: c.id)


def fit_platform(
    db_path: str,
    campaign_ids: list[int] | None = None,
    name: str | None = None,
    buffer: list[int] | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The platform document and its comments (top-level key -> comment); ``buffer``: the
    port buffer capacities (bytes, one value or one per height) the user knows, written as
    ``network.buffer`` (see :func:`add_buffer`)."""
    _load_optional_fitters()
    with ResultsDB(db_path, read_only=True) as db:
        camps = select_campaigns(db, campaign_ids)
        sections: dict[str, Any] = {}
        comments: dict[str, str] = {}
        for camp in camps:
            fn = FITTERS.get(camp.benchmark)
            if fn is None:
                continue  # benchmarks without a platform section (pattern, concurrent)
            try:
                produced = fn(db, camp)
            except CommodelError as exc:
                raise CommodelError(
                    f"{db_path}: campaign {camp.id} ({camp.benchmark}): {exc}"
                ) from exc
            note = produced.pop("__comment__", None)
            for key, sec in produced.items():
                if key in sections:
                    # parts of one section from different benchmarks (many-to-one and
                    # one-to-many) merge; the same part twice is an error
                    if set(sections[key]) & set(sec):
                        raise CommodelError(
                            f"{db_path}: two campaigns give the {key!r} section; pick with "
                            "--campaign"
                        )
                    sections[key].update(sec)
                else:
                    sections[key] = dict(sec)
                comments.setdefault(
                    key,
                    f"from campaign {camp.id} ({camp.benchmark}, {camp.mpi_library.split(',')[0]}, "
                    f"{camp.ranks} ranks on {', '.join(sorted(set(camp.hosts)))}, "
                    f"started {camp.started:%Y-%m-%d %H:%M:%S} UTC)"
                    + (f"\n{note}" if note else ""),
                )
        if not sections:
            raise CommodelError(
                f"{db_path}: the campaigns {[c.id for c in camps]} give no platform section"
            )
        tcp_camps = [c for c in camps if c.benchmark == "tcp"]
        if "plogp" in sections and tcp_camps:
            from .cpu import cpu_section, one_machine

            cores = one_machine(db.samples(tcp_camps[-1].id))
            cpu = cpu_section(cores, sections["plogp"]) if cores is not None else None
            if cpu is not None:
                sections["cpu"], comments["cpu"] = cpu
        hosts = sorted({h for c in camps for h in c.hosts})
        nodes = max(c.ranks for c in camps)
        if "network" in sections:
            nodes = sections["network"]["nodes"]
        if buffer is not None:
            add_buffer(sections, comments, buffer)
        if "plogp" in sections and "network" in sections:
            from .bucket import bucket

            value, note = bucket(sections["plogp"], sections["network"])
            if value is not None:
                sections["network"]["bucket"] = value
            comments["network"] = comments.get("network", "") + "\n" + note
        wire_camps = [c for c in camps if c.benchmark == "wire"]
        if wire_camps and "network" in sections:
            _add_wire(sections, comments, db.samples(wire_camps[-1].id))
        eff_camps = [c for c in camps if c.benchmark == "efficiency"]
        if eff_camps:
            samples = db.samples(eff_camps[-1].id)
            _rebase_efficiency(sections, comments, samples)
            _add_fanin(sections, comments, samples)
    doc: dict[str, Any] = {
        "commodel_platform": 1,
        "name": name or f"measured-{hosts[0] if hosts else 'cluster'}",
        "description": f"fitted by commodel fit from {os.path.basename(db_path)}, campaigns "
        + ", ".join(str(c.id) for c in camps)
        + "; one MPI rank per node as measured",
        "nodes": nodes,
    }
    order = ("loggops", "plogp", "network", "tcp", "lmo", "many_to_one", "cpu")
    for key in order:
        if key in sections:
            doc[key] = sections[key]
    for key in sorted(sections):
        if key not in doc:
            doc[key] = sections[key]
    return doc, comments


def _model_doc(sections: dict[str, Any]) -> dict[str, Any]:
    """A platform document of the sections fitted so far (with ``network``), for the fits
    that go through the model."""
    return {
        "commodel_platform": 1,
        "name": "fit",
        **sections,
        "nodes": sections["network"]["nodes"],
    }


def _add_wire(sections: dict[str, Any], comments: dict[str, str], samples: list) -> None:
    """``network.overhead`` h and ``network.ack`` a from the wire campaign's counts
    (:mod:`commodel.fit.wire`), with a comment; nothing but the comment where it cannot
    give them."""
    from .wire import wire_bytes

    h, a, note = wire_bytes(samples)
    if h is not None:
        sections["network"]["overhead"] = h
        sections["network"]["ack"] = a
    comments["network"] = comments.get("network", "") + "\n" + note


def _rebase_efficiency(sections: dict[str, Any], comments: dict[str, str], samples: list) -> None:
    """``tcp.efficiency`` taken against ``tcpflow``'s own one-way time where the platform has
    what the model needs (``plogp``, ``network``; :func:`commodel.fit.efficiency.rebase_efficiency`)."""
    from .efficiency import model_oneway, rebase_efficiency

    eff = sections.get("tcp", {}).get("efficiency")
    if eff is None or "plogp" not in sections or "network" not in sections:
        return
    table, note = rebase_efficiency(eff, samples, model_oneway(_model_doc(sections), samples))
    sections["tcp"]["efficiency"] = table
    comments["tcp"] = comments.get("tcp", "") + "\n" + note


def _add_fanin(sections: dict[str, Any], comments: dict[str, str], samples: list) -> None:
    """``tcp.efficiency.fanin`` from the efficiency campaign's all-to-all rounds, fitted
    through ``tcpflow`` with the other sections (:mod:`commodel.fit.fanin`); with a comment
    why not where the rounds or the sections it needs are missing."""
    from .fanin import alltoall_spans, fanin_section

    n, spans = alltoall_spans(samples)
    if not spans:
        return
    lacking = [k for k in ("plogp", "network") if k not in sections]
    if lacking or "efficiency" not in sections.get("tcp", {}):
        comments["tcp"] = comments.get("tcp", "") + (
            "\nfanin not fitted: it is fitted through tcpflow, which needs the "
            + ", ".join(lacking or ["tcp.efficiency"])
            + " section"
        )
        return
    table, note = fanin_section(_model_doc(sections), n, spans)
    sections["tcp"]["efficiency"]["fanin"] = table
    comments["tcp"] = comments.get("tcp", "") + "\n" + note


def add_buffer(sections: dict[str, Any], comments: dict[str, str], buffer: list[int]) -> None:
    """Write the port buffers (bytes; one value, or one per height of the fitted network) as
    ``network.buffer`` and pick ``tcp.rto_rule: buffer`` when there is a ``tcp`` section.
    Nothing measures a switch's buffers from the hosts: they come from the user (``--buffer``,
    e.g. the cluster spec's ``buffers``)."""
    network = sections.get("network")
    if network is None:
        raise CommodelError(
            "--buffer: no network section to add the port buffers to (measure tree first)"
        )
    heights = (
        len(network["unidirectional"]["b"])
        if "unidirectional" in network
        else (1 if network["topology"] == "crossbar" else 2)
    )
    if len(buffer) not in (1, heights) or min(buffer) <= 0:
        raise CommodelError(
            f"--buffer: needs one size > 0 bytes or one per height h = 1..{heights} of the "
            f"fitted network, got {','.join(str(b) for b in buffer[:8])}"
        )
    network["buffer"] = buffer[0] if len(buffer) == 1 else list(buffer)
    note = "buffer: port buffer capacities given with --buffer (bytes), not measured"
    comments["network"] = comments.get("network", "") + "\n" + note
    if "tcp" in sections:
        sections["tcp"]["rto_rule"] = "buffer"
        comments["tcp"] = comments.get("tcp", "") + "\nrto_rule buffer: --buffer was given"


def fit_to_text(
    db_path: str,
    campaign_ids: list[int] | None = None,
    name: str | None = None,
    buffer: list[int] | None = None,
) -> str:
    doc, comments = fit_platform(db_path, campaign_ids, name, buffer)
    header = "# commodel platform file written by `commodel fit`; units: seconds, bytes, bytes/s\n"
    return header + yamlout.dump(doc, comments)
