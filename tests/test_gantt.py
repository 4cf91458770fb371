"""``predict --gantt``: lanes for overlapping sends, the density view, legend and time unit."""

from __future__ import annotations

import copy
import struct
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import commodel
from commodel.platform import platform_from_dict
from commodel.prediction import Message, Prediction, RankFinish
from commodel.report.gantt import (
    LANES_MAX,
    ROWS_MAX,
    _lanes,
    _occupancy,
    draw_gantt,
    route_level,
    route_levels,
)
from commodel.schedules import collective, parse_goal
from conftest import EXAMPLES, needs_engine

pytest.importorskip("matplotlib")

# rank 0 posts 8 sends of 1000 B to rank 1 at once: under loggops they overlap in time
BURST = (
    "num_ranks 2\nrank 0 {\n"
    + "".join(f"s{t}: send 1000b to 1 tag {t}\n" for t in range(8))
    + "}\nrank 1 {\n"
    + "".join(f"r{t}: recv 1000b from 0 tag {t}\n" for t in range(8))
    + "}\n"
)


def png_size(path: Path) -> tuple[int, int]:
    width, height = struct.unpack(">II", path.read_bytes()[16:24])
    return width, height


def test_lanes_keep_overlapping_intervals_apart() -> None:
    rows = np.array([0, 0, 0, 0, 1])
    start = np.array([0.0, 5.0, 10.0, 12.0, 5.0])
    end = np.array([10.0, 15.0, 20.0, 13.0, 6.0])
    # (10, 20) reuses lane 0, freed at 10; (12, 13) finds lanes 0 and 1 busy
    assert _lanes(rows, start, end).tolist() == [0, 1, 0, 2, 0]


def test_occupancy_is_the_time_weighted_count_per_bin() -> None:
    # span 10 in 5 bins of 2: [1, 6] covers half of bin 0, bins 1 and 2; [9, 10] half of bin 4
    rows = np.array([0, 0, 1])
    got = _occupancy(rows, np.array([1.0, 9.0, 0.0]), np.array([6.0, 10.0, 10.0]), 2, 10.0, 5)
    assert got.tolist() == [[0.5, 1.0, 1.0, 0.0, 0.5], [1.0] * 5]


def test_occupancy_conserves_busy_time() -> None:
    rng = np.random.default_rng(1)
    start = rng.uniform(0, 90, 500)
    end = start + rng.uniform(0, 10, 500)
    rows = rng.integers(0, 7, 500)
    got = _occupancy(rows, start, end, 7, 100.0, 37)
    width = 100.0 / 37
    for r in range(7):
        assert got[r].sum() * width == pytest.approx((end - start)[rows == r].sum(), rel=1e-12)


def test_route_levels_agree_with_route_level_per_pair() -> None:
    tree = platform_from_dict(
        {
            "commodel_platform": 1,
            "name": "t",
            "nodes": 8,
            "ranks_per_node": 2,
            "network": {
                "topology": "binary-tree",
                "nodes": 8,
                "unidirectional": {"b": [1.0, 2.0, 3.0], "d": [0.0, 0.0, 0.0]},
            },
        },
        "t.yaml",
    )
    src, dst = np.divmod(np.arange(256), 16)
    levels, names = route_levels(tree, src, dst)
    assert names == {0: "same node", 1: "tree height 1", 2: "tree height 2", 3: "tree height 3"}
    for a, b, level in zip(src.tolist(), dst.tolist(), levels.tolist()):
        assert route_level(tree, a, b) == (level, names[level])
    assert route_level(tree, 0, 1) == (0, "same node")  # ranks 0 and 1 share node 0
    assert route_level(tree, 0, 15) == (3, "tree height 3")


@needs_engine
def test_bars_view_of_the_plogpt_example_names_every_mark(tmp_path: Path) -> None:
    goal = EXAMPLES / "schedules" / "plogpt-example.goal"
    platform = commodel.load_platform(EXAMPLES / "platforms" / "plogpt-example.yaml")
    prediction = commodel.predict(goal, platform, model="plogpt")
    view = draw_gantt(prediction, str(tmp_path / "g.png"), platform)
    assert (view.kind, view.rows, view.ranks_per_row, view.unit) == ("bars", 4, 1, "s")
    assert view.note == "4 ranks, one row each"
    assert view.legend == (
        "tree height 2",
        "receiving (strip under the row)",
        "rank finishes",
    )
    width, height = png_size(tmp_path / "g.png")
    assert width < 1400 and height < 500


@needs_engine
def test_rto_marks_are_in_the_legend(tmp_path: Path) -> None:
    """Alltoall B at 32 KiB on nomura2007 pays RTOs (PlogPT eq. 24): hatching and crosses."""
    schedule = collective("alltoall-xor-post-all", ranks=8, size=32768)
    platform = commodel.load_platform("nomura2007")
    prediction = commodel.predict(schedule, platform, model="plogpt")
    assert prediction.rto_events
    view = draw_gantt(prediction, str(tmp_path / "g.png"), platform)
    assert view.unit == "ms"  # a 203 ms run is not drawn in seconds
    assert "delayed by an RTO" in view.legend
    assert "RTO starts (sender's row)" in view.legend
    assert [t for t in view.legend if t.startswith("tree height")] == [
        f"tree height {h}" for h in (1, 2, 3)
    ]


@needs_engine
def test_overlapping_sends_get_lanes(tmp_path: Path) -> None:
    platform = commodel.load_platform("loggopsim-default")
    prediction = commodel.predict(parse_goal(BURST), platform, model="loggops")
    starts = prediction.messages.column("start_s")
    ends = prediction.messages.column("end_s")
    assert (starts[1:] < ends[:-1]).all()  # each send overlaps the previous one
    # and send 6 starts 8 ns before send 4 ends: a third lane
    assert round((ends[4] - starts[6]) * 1e12) == 8000
    assert _lanes(np.zeros(8, dtype=np.int64), starts, ends).tolist() == [0, 1, 0, 1, 0, 1, 2, 0]
    view = draw_gantt(prediction, str(tmp_path / "g.png"), platform)
    assert (view.kind, view.rows, view.unit) == ("bars", 2, "us")


def test_more_sends_at_once_than_lanes_is_a_density_row_per_rank(tmp_path: Path) -> None:
    messages = [Message(0, 1, 8, t, 0.0, 1e-3, False) for t in range(LANES_MAX + 1)]
    ranks = [RankFinish(0, 1e-3, 10**9), RankFinish(1, 1e-3, 10**9)]
    prediction = Prediction("hockney", 1e-3, ranks, messages, makespan_ps=10**9)
    view = draw_gantt(prediction, str(tmp_path / "g.png"))
    assert (view.kind, view.rows, view.ranks_per_row, view.unit) == ("density", 2, 1, "ms")
    assert view.note == "2 ranks; more sends at once than lanes for bars: density view"
    view = draw_gantt(replace(prediction, messages=messages[1:]), str(tmp_path / "g.png"))
    assert view.kind == "bars"


@needs_engine
def test_many_ranks_are_grouped_into_rows(tmp_path: Path) -> None:
    ranks = 2 * ROWS_MAX + 3
    schedule = collective("bcast-binomial", ranks=ranks, size=1024)
    prediction = commodel.predict(schedule, "loggopsim-default", model="loggops")
    view = draw_gantt(prediction, str(tmp_path / "g.png"))
    assert (view.kind, view.ranks_per_row, view.rows) == ("density", 3, 44)
    assert view.note == f"{ranks} ranks in 44 rows of 3: density view"
    assert "last rank of the row finishes" in view.legend
    width, height = png_size(tmp_path / "g.png")
    assert width < 1400 and height < 900


@needs_engine
def test_64_ranks_fit_a_screen(tmp_path: Path) -> None:
    schedule = collective("alltoall-xor-pairwise", ranks=64, size=1024)
    prediction = commodel.predict(schedule, "loggopsim-default", model="plogp")
    view = draw_gantt(prediction, str(tmp_path / "g.png"))
    assert (view.kind, view.rows) == ("bars", 64)
    assert png_size(tmp_path / "g.png")[1] <= 1150


@needs_engine
def test_a_run_without_messages_still_draws(tmp_path: Path) -> None:
    prediction = commodel.predict(
        EXAMPLES / "schedules" / "loggops-example.goal", "loggopsim-default", record_messages=False
    )
    view = draw_gantt(prediction, str(tmp_path / "g.png"))
    assert view.kind == "bars" and view.legend == ("rank finishes",)


def test_route_levels_of_racks() -> None:
    from test_platform_network import RACKS

    platform = platform_from_dict(copy.deepcopy(RACKS), "r.yaml")
    levels, names = route_levels(platform, np.array([0, 0, 5]), np.array([3, 4, 5]))
    assert levels.tolist() == [1, 2, 0]
    assert names == {0: "same node", 1: "within a rack", 2: "across the backbone"}
