"""The text ``commodel measure`` prints for the measurements without a fit of their own:
``collective`` (:func:`format_collective_result`) and ``concurrent``
(:func:`format_concurrent_result`). The others print their fit's ``summary``
(``fit/<name>.py``)."""

from __future__ import annotations

from typing import Any

from ..units import format_duration, format_size
from .tables import format_table


def format_collective_result(result: dict[str, Any]) -> str:
    """What ``measure collective`` prints: per size, the repetitions, mean and minimum
    time, and whether the 95% confidence interval came within 2% of the mean."""
    rows = [
        [
            format_size(r["size"]),
            r["reps"],
            format_duration(r["mean_s"]),
            format_duration(r["min_s"]),
            "" if r["converged"] else "CI > 2%",
        ]
        for r in result["results"]
    ]
    head = (
        f"campaign {result['campaign']}: {result['collective']} on {result['ranks']} ranks, "
        f"algorithm {result['algorithm']} ({result['algorithm_name']})"
    )
    if result.get("splits", 1) > 1:
        head += f", as {result['splits']} sub-gathers of M/{result['splits']}"
    if "traffic" in result:  # --traffic: one call per size, counted per peer
        counted = [  # messages None: the kernel counted the bytes, not the messages
            [format_size(t["size"]),
             "-" if any(c is None for row in t["peers"] for c, _ in row)
             else sum(c for row in t["peers"] for c, _ in row),
             format_size(sum(b for row in t["peers"] for _, b in row))]
            for t in result["traffic"]
        ]  # fmt: skip
        return head + ", one call counted\n" + format_table(["size", "messages", "bytes"], counted)
    return head + "\n" + format_table(["size", "reps", "mean", "min", ""], rows)


def format_concurrent_result(result: dict[str, Any]) -> str:
    """What ``measure concurrent`` prints: per pattern and k, each flow's bandwidth, and
    the verdicts on Zhu's fairness and asymmetric property."""
    lines = [
        f"campaign {result['campaign']}: concurrent flows between node X (ranks {result['x']}) "
        f"and node Y (ranks {result['y']})"
        + ("" if result["distinct_hosts"] else " - one host: loopback, no NIC is shared"),
        f"{'pattern':<12} {'k':>2}  per-flow bandwidth [MB/s] (flows in order)",
    ]
    for r in result["results"]:
        bws = " ".join(f"{b / 1e6:8.1f}" for b in r["bandwidth"])
        lines.append(f"{r['pattern']:<12} {r['k']:>2}  {bws}")
    v = result["verdict"]

    def word(x):
        return "not tested (needs k >= 2)" if x is None else ("holds" if x else "does not hold")

    lines.append(f"fairness (Zhu 5.1): {word(v['fairness'])}")
    lines.append(f"asymmetric property (Zhu 5.2): {word(v['asymmetric'])}")
    if v["out_in_ratio"]:
        lines.append(
            "  outgoing / incoming per-flow bandwidth with k in, 1 out: "
            + ", ".join(f"k={k}: {r:.2f}" for k, r in sorted(v["out_in_ratio"].items()))
        )
    return "\n".join(lines)
