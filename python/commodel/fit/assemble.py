"""``commodel fit``: a platform file from the campaigns of a results database.

Each benchmark contributes its section through the fit module that
:mod:`commodel.measure.registry` binds to it: ``plogp`` -> ``plogp``; ``tree`` ->
``network`` (binary tree); ``lmo`` -> ``lmo``; ``many-to-one`` / ``one-to-many`` ->
``many_to_one``; ``tcp`` -> ``tcp`` (and ``cpu``); ``efficiency`` -> ``tcp.efficiency``;
``wire`` -> ``network.overhead``, ``network.ack``. By default the latest complete campaign of every benchmark is used;
``--campaign ID`` (repeatable) picks campaigns explicitly. The output depends only on the
stored samples, so fitting the same database twice gives the same file.
"""

from __future__ import annotations

import os
import traceback
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from ..db import Campaign, ResultsDB
from ..errors import CommodelError
from ..measure.registry import BY_NAME, UNITS
from . import yamlout


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
    opened: ResultsDB | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The platform document and its comments (top-level key -> comment); ``buffer``: the
    port buffer capacities (bytes, one value or one per height) the user knows, written as
    ``network.buffer`` (see :func:`add_buffer`); ``opened``: the database already open
    (``db_path`` then names it), else ``db_path`` is opened read-only."""
    with ResultsDB(db_path, read_only=True) if opened is None else nullcontext(opened) as db:
        camps = select_campaigns(db, campaign_ids)
        sections: dict[str, Any] = {}
        comments: dict[str, str] = {}
        for camp in camps:
            unit = BY_NAME.get(camp.benchmark)
            fit = unit.hook("sections") if unit is not None else None
            if fit is None:
                continue  # benchmarks without a section of their own (pattern, wire, ...)
            try:
                produced = fit(db, camp)
            except CommodelError as exc:
                if str(exc).startswith(f"{db_path}: campaign {camp.id}"):
                    raise  # named already (ResultsDB.samples)
                raise CommodelError(
                    f"{db_path}: campaign {camp.id} ({camp.benchmark}): {exc}"
                ) from exc
            except (KeyError, TypeError, IndexError, ValueError, ZeroDivisionError) as exc:
                # the database is input too: samples that `measure` does not write (a field
                # missing, a phase without its quantities) end here, named
                where = traceback.extract_tb(exc.__traceback__)[-1]
                raise CommodelError(
                    f"{db_path}: campaign {camp.id} ({camp.benchmark}): its samples are not "
                    f"what `commodel measure {camp.benchmark}` writes ({type(exc).__name__}: "
                    f"{str(exc)[:80]} in {Path(where.filename).name}:{where.lineno}); "
                    "measure it again"
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
        hosts = sorted({h for c in camps for h in c.hosts})
        nodes = max(c.ranks for c in camps)
        if "network" in sections:
            nodes = sections["network"]["nodes"]
        if buffer is not None:
            add_buffer(sections, comments, buffer)
        chosen = {c.benchmark: c for c in camps}
        for stage in ("complete", "through_model"):
            for unit in UNITS:
                camp = chosen.get(unit.name)
                step = unit.hook(stage) if camp is not None else None
                if step is not None:
                    step(sections, comments, db, camp)
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
    _check_fitted(doc, db_path)
    return doc, comments


def _check_fitted(doc: dict[str, Any], db_path: str) -> None:
    """The fitted document loads as ``predict`` would load it, or the error names the field:
    a value no platform may hold (NaN, say) fitted from samples that do not determine it."""
    from ..platform import platform_from_dict

    try:
        platform_from_dict(doc, f"the platform fitted from {db_path}")
    except CommodelError as exc:
        raise CommodelError(
            f"{exc}: the campaigns' samples do not determine it; measure again"
        ) from exc


def add_buffer(sections: dict[str, Any], comments: dict[str, str], buffer: list[int]) -> None:
    """Write the port buffers (bytes; one value, or one per height of the fitted network) as
    ``network.buffer`` and pick ``tcp.rto_rule: buffer`` when there is a ``tcp`` section.
    Given buffers stand for what a ``ports`` campaign would measure (its fit then does
    nothing)."""
    network = sections.get("network")
    if network is None:
        raise CommodelError(
            "--buffer: no network section to add the port buffers to (measure topology first)"
        )
    from .ports import network_heights

    heights = network_heights(network)
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
