"""Alltoall A against B, predicted: the table of ``commodel demo`` and ``make demo``.

On the PlogPT paper's 32-node cluster (built-in platform ``nomura2007``), predict the two
Alltoall algorithms of the paper, A (``alltoall-xor-pairwise``: one partner at a time) and
B (``alltoall-xor-post-all``: every receive posted, then the sends), for message sizes
1 KiB .. 1 MiB, under each model of :data:`DEMO_MODELS`, and say which algorithm is faster.
Adding a model to the comparison is one line: append it to :data:`DEMO_MODELS`. A model
whose sections the platform lacks is skipped and named, as ``predict --model all`` does.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import CommodelError
from .platform import Platform, default_model, load_platform
from .prediction import predict
from .report.tables import format_table
from .schedules import collective
from .units import format_duration, format_size

# The models compared, one group of columns each; tcpflow only on a calibrated platform
# (with tcp.efficiency: elsewhere it is max-min with PLogP's per-message costs).
DEMO_MODELS = ["tcpflow", "plogp", "plogpt", "maxmin"]

# (column label, collective name)
ALGORITHMS = [("A", "alltoall-xor-pairwise"), ("B", "alltoall-xor-post-all")]

DEMO_SIZES = [1024 * 2**k for k in range(11)]  # 1 KiB .. 1 MiB

# Makespans closer than this (relative) are reported as a tie.
TIE = 1e-9


@dataclass(frozen=True)
class DemoRow:
    size: int
    # model -> algorithm label -> makespan in seconds
    makespans: dict[str, dict[str, float]]

    def faster(self, model: str) -> str:
        times = self.makespans[model]
        (label_a, a), (label_b, b) = sorted(times.items())
        if abs(a - b) <= TIE * max(a, b):
            return "tie"
        return f"{label_a} ({b / a:.3f}x)" if a < b else f"{label_b} ({a / b:.3f}x)"


def demo_models(platform: Platform) -> tuple[list[str], dict[str, str]]:
    """The models of :data:`DEMO_MODELS` that ``platform`` can run, and why the others not."""
    from .report.model_comparison import missing_sections

    wanted = [m for m in DEMO_MODELS if m != "tcpflow" or default_model(platform) == "tcpflow"]
    skipped = {m: missing_sections(platform, m) for m in wanted}
    skipped = {m: why for m, why in skipped.items() if why}
    runnable = [m for m in wanted if m not in skipped]
    if not runnable:
        reasons = "; ".join(f"{m}: {why}" for m, why in skipped.items())
        raise CommodelError(
            f"platform {platform.name} can run none of the demo's models ({reasons})"
        )
    return runnable, skipped


def run_demo(
    platform: str | Platform = "nomura2007",
    ranks: int = 32,
    sizes: list[int] | None = None,
    models: list[str] | None = None,
) -> list[DemoRow]:
    """Predict both Alltoall algorithms for every size and model (default: those of
    :data:`DEMO_MODELS` the platform can run)."""
    platform = load_platform(platform)
    models = list(demo_models(platform)[0] if models is None else models)
    rows = []
    for size in DEMO_SIZES if sizes is None else sizes:
        makespans: dict[str, dict[str, float]] = {m: {} for m in models}
        for label, name in ALGORITHMS:
            schedule = collective(name, ranks, size)
            for model in models:
                prediction = predict(schedule, platform, model=model, record_messages=False)
                makespans[model][label] = prediction.makespan_s
        rows.append(DemoRow(size, makespans))
    return rows


def format_demo(
    rows: list[DemoRow], platform: str, ranks: int, skipped: dict[str, str] | None = None
) -> str:
    """The demo table: size, then per model the makespan of A and B and the faster one;
    then the models ``skipped`` and why."""
    models = list(rows[0].makespans) if rows else list(DEMO_MODELS)
    headers = ["size"]
    for model in models:
        headers += [f"A {model}", f"B {model}", f"faster ({model})"]
    body = []
    for row in rows:
        cells = [format_size(row.size)]
        for model in models:
            cells += [format_duration(row.makespans[model][label]) for label, _ in ALGORITHMS]
            cells.append(row.faster(model))
        body.append(cells)
    intro = (
        f"Alltoall on {ranks} ranks of platform {platform}: predicted time of\n"
        f"  A = {ALGORITHMS[0][1]} (PlogPT Fig. 14 Alltoall_A: one partner at a time)\n"
        f"  B = {ALGORITHMS[1][1]} (Alltoall_B: post every receive, then send)\n"
    )
    align = "r" * len(headers)
    notes = "".join(f"skipped {m}: {why}\n" for m, why in (skipped or {}).items())
    return intro + "\n" + format_table(headers, body, align=align) + "\n" + notes
