"""Platform files: built-ins, validation errors that name file and field, engine params."""

from __future__ import annotations

import copy
import filecmp
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from commodel.errors import CommodelError, ModelError, PlatformError
from commodel.platform import (
    BUILTIN_DIR,
    builtin_platforms,
    load_platform,
    model_names,
    platform_from_dict,
)
from conftest import EXAMPLES

BASE: dict[str, Any] = {
    "commodel_platform": 1,
    "name": "test",
    "nodes": 4,
    "loggops": {"L": 5e-6, "o": 1.5e-6, "g": 1e-6, "G": 8e-9, "O": 0.0, "S": 65535},
    "plogp": {
        "L": 5e-5,
        "sizes": [0, 1024, 65536],
        "o_s": [2e-6, 4e-6, 4e-5],
        "o_r": [2e-6, 5e-6, 6e-5],
        "g": [5e-6, 1.2e-5, 6e-4],
        "S": None,
    },
    "hockney": {"alpha": 5e-5, "beta": 8.5e-9},
}


def write(tmp_path: Path, data: Any, name: str = "x.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


def changed(path: str, value: Any) -> dict[str, Any]:
    """BASE with the field at dotted ``path`` (``plogp.g.2``) set to ``value``."""
    data = copy.deepcopy(BASE)
    *parents, last = path.split(".")
    node: Any = data
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return data


def error_of(tmp_path: Path, data: Any) -> str:
    path = write(tmp_path, data)
    with pytest.raises(PlatformError) as info:
        load_platform(path)
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    return message


# --- built-ins ---------------------------------------------------------------------------


def test_builtins_are_listed() -> None:
    assert builtin_platforms() == ["loggopsim-default", "nomura2007"]


@pytest.mark.parametrize("name", ["loggopsim-default", "nomura2007"])
def test_builtin_and_example_are_the_same_file(name: str) -> None:
    example = EXAMPLES / "platforms" / f"{name}.yaml"
    assert filecmp.cmp(example, BUILTIN_DIR / f"{name}.yaml", shallow=False)
    assert load_platform(name).sections == load_platform(example).sections


@pytest.mark.parametrize("name", ["loggopsim-default", "nomura2007"])
def test_builtins_carry_every_contention_free_model(name: str) -> None:
    platform = load_platform(name)
    for model in ("loggops", "plogp", "hockney"):
        assert platform.engine_params(model)


def test_loggopsim_default_params_exact() -> None:
    platform = load_platform("loggopsim-default")
    assert platform.engine_params("loggops") == {
        "L": 5_000_000,
        "o": 1_500_000,
        "g": 1_000_000,
        "G": 8_000,
        "O": 0,
        "S": 65535,
    }


def test_loggopsim_default_derived_sections_match_loggp() -> None:
    """plogp g(m) = g + (m-1) G and hockney alpha + beta m = o + (m-1) G + L + o."""
    platform = load_platform("loggopsim-default")
    lg = platform.engine_params("loggops")
    pl = platform.engine_params("plogp")
    for m, g in zip(pl["sizes"], pl["g"]):
        assert g == lg["g"] + (m - 1) * lg["G"]
    assert pl["L"] == lg["L"]
    assert set(pl["o_s"]) == {lg["o"]} and set(pl["o_r"]) == {lg["o"]}
    h = platform.engine_params("hockney")
    for m in (1, 8, 65536):
        one_message = lg["o"] + (m - 1) * lg["G"] + lg["L"] + lg["o"]
        assert h["alpha"] + h["beta"] * m == pytest.approx(one_message, abs=1e-6)


def test_nomura2007_network_is_table_ii() -> None:
    net = load_platform("nomura2007").network
    uni_mbps = [936.4, 935.6, 936.1, 934.1, 625.0]
    bi_mbps = [580.2, 580.1, 576.0, 579.2, 485.0]
    for h in range(1, 6):
        scale = 2 ** (h - 1) * 1e6 / 8
        assert net.unidirectional.b[h - 1] == pytest.approx(uni_mbps[h - 1] * scale, rel=1e-12)
        assert net.bidirectional.b[h - 1] == pytest.approx(bi_mbps[h - 1] * scale, rel=1e-12)
    assert net.unidirectional.d == pytest.approx([500e-6, 517e-6, 535e-6, 527e-6, 543e-6])
    # the table's bidirectional column is 2 d(h)
    two_d = [502e-6, 902e-6, 913e-6, 910e-6, 909e-6]
    assert [2 * d for d in net.bidirectional.d] == pytest.approx(two_d)


@pytest.mark.parametrize("log", [math.log, math.log10])
def test_nomura2007_eps_s_gives_the_papers_switch_heights(log: Any) -> None:
    """P_S(h, h+1) (eq. 5) is false exactly for h = 2, 3, as Section IV-B states."""
    platform = load_platform("nomura2007")
    b, d = platform.network.bidirectional.b, platform.network.bidirectional.d
    eps = platform.tcp.eps_S

    def p_s(h: int, h2: int) -> bool:
        lb = log(2 ** (h2 - h) * b[h - 1] / b[h2 - 1])
        ld = log(d[h - 1] / d[h2 - 1])
        return lb * lb + ld * ld > eps

    assert [p_s(h, h + 1) for h in range(1, 5)] == [True, False, False, True]


def test_nomura2007_assumed_plogp_line() -> None:
    p = load_platform("nomura2007").plogp
    for m, g, gb in zip(p.sizes, p.g, p.bidirectional.g):
        assert g == pytest.approx(10e-6 + m / 117.05e6, rel=1e-5)
        assert gb == pytest.approx(10e-6 + m / 72.525e6, rel=1e-5)
    assert p.S is None


def test_unknown_builtin_lists_the_builtins() -> None:
    with pytest.raises(PlatformError) as info:
        load_platform("nomura2008")
    assert "nomura2008: no such platform file" in str(info.value)
    assert "loggopsim-default, nomura2007" in str(info.value)


def test_missing_file_is_named() -> None:
    with pytest.raises(PlatformError, match="nowhere/p.yaml: no such platform file"):
        load_platform("nowhere/p.yaml")


def test_directory_is_not_a_platform(tmp_path: Path) -> None:
    with pytest.raises(PlatformError, match="not a file"):
        load_platform(tmp_path)


# --- validation --------------------------------------------------------------------------


def test_valid_file_loads_with_units_in_strings(tmp_path: Path) -> None:
    data = changed("loggops.L", "5us")
    data["loggops"]["g"] = "1e-6"  # YAML 1.1 reads this as a string: accepted as a number
    data["plogp"]["sizes"][2] = "64KiB"
    platform = load_platform(write(tmp_path, data))
    assert platform.engine_params("loggops")["L"] == 5_000_000
    assert platform.engine_params("loggops")["g"] == 1_000_000
    assert platform.plogp.sizes == (0, 1024, 65536)


def test_negative_table_value_names_file_field_and_value(tmp_path: Path) -> None:
    message = error_of(tmp_path, changed("plogp.g.2", -1.0))
    assert message.endswith("x.yaml: plogp.g[2]: must be >= 0 seconds, got -1.0")


def test_negative_latency(tmp_path: Path) -> None:
    message = error_of(tmp_path, changed("loggops.L", -5e-6))
    assert message.endswith("loggops.L: must be >= 0 seconds, got -5e-06")


def test_unknown_top_level_key_suggests(tmp_path: Path) -> None:
    data = copy.deepcopy(BASE)
    data["hockny"] = data.pop("hockney")
    message = error_of(tmp_path, data)
    assert message.endswith("x.yaml: hockny: unknown key; did you mean 'hockney'?")


def test_unknown_section_key_suggests(tmp_path: Path) -> None:
    data = copy.deepcopy(BASE)
    data["plogp"]["size"] = data["plogp"].pop("sizes")
    message = error_of(tmp_path, data)
    assert "plogp.size: unknown key; did you mean 'sizes'?" in message


def test_missing_required_key(tmp_path: Path) -> None:
    data = copy.deepcopy(BASE)
    del data["loggops"]["S"]
    assert error_of(tmp_path, data).endswith("loggops.S: missing (required)")


def test_sizes_must_increase(tmp_path: Path) -> None:
    message = error_of(tmp_path, changed("plogp.sizes.2", 1024))
    assert message.endswith(
        "plogp.sizes[2]: sizes must be strictly increasing: got 1024 after 1024"
    )


def test_table_length_must_match_sizes(tmp_path: Path) -> None:
    data = copy.deepcopy(BASE)
    data["plogp"]["o_r"] = [1e-6, 2e-6]
    message = error_of(tmp_path, data)
    assert message.endswith(
        "plogp.o_r: has 2 values but plogp.sizes has 3; give one value per entry"
    )


def test_bool_is_not_a_number(tmp_path: Path) -> None:
    assert error_of(tmp_path, changed("hockney.alpha", True)).endswith(
        "hockney.alpha: must be a time in seconds, got True"
    )


def test_word_is_not_a_number(tmp_path: Path) -> None:
    message = error_of(tmp_path, changed("hockney.beta", "fast"))
    assert "hockney.beta: must be a cost in seconds per byte: cannot read 'fast'" in message


def test_size_must_be_whole(tmp_path: Path) -> None:
    message = error_of(tmp_path, changed("loggops.S", 10.5))
    assert message.endswith("loggops.S: must be a whole number of bytes, got 10.5")


def test_format_version(tmp_path: Path) -> None:
    message = error_of(tmp_path, changed("commodel_platform", 2))
    assert "commodel_platform: unsupported format version 2" in message


def test_nodes_must_be_positive(tmp_path: Path) -> None:
    assert error_of(tmp_path, changed("nodes", 0)).endswith("nodes: must be >= 1, got 0")


def test_rank_to_node_out_of_range(tmp_path: Path) -> None:
    data = changed("rank_to_node", [0, 1, 4])
    assert error_of(tmp_path, data).endswith(
        "rank_to_node[2]: node index must be < nodes (4), got 4"
    )


def test_rank_placement() -> None:
    platform = platform_from_dict({**BASE, "ranks_per_node": 2})
    assert [platform.node_of_rank(r) for r in range(8)] == [0, 0, 1, 1, 2, 2, 3, 3]
    with pytest.raises(PlatformError, match="rank 8 does not fit: 4 nodes x 2 ranks per node"):
        platform.node_of_rank(8)
    mapped = platform_from_dict({**BASE, "rank_to_node": [3, 2, 1, 0]})
    assert [mapped.node_of_rank(r) for r in range(4)] == [3, 2, 1, 0]


def test_invalid_yaml_names_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "commodel_platform: 1\nname: [unclosed\nnodes: 4\n")
    with pytest.raises(PlatformError) as info:
        load_platform(path)
    assert str(info.value).startswith(f"{path}:3:")
    assert "invalid YAML" in str(info.value)


def test_empty_file(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    with pytest.raises(PlatformError, match="empty platform file"):
        load_platform(path)


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    assert error_of(tmp_path, "- 1\n- 2\n").endswith(
        "must be a mapping of keys to values, got [1, 2]"
    )


def test_network_binary_tree_checks(tmp_path: Path) -> None:
    net = {
        "topology": "binary-tree",
        "nodes": 4,
        "unidirectional": {"b": [1e8, 2e8], "d": [1e-4, 1e-4]},
    }
    platform = platform_from_dict({**BASE, "network": net})
    assert platform.network.unidirectional.b == (1e8, 2e8)
    bad_height = {**net, "unidirectional": {"b": [1e8], "d": [1e-4, 1e-4]}}
    assert error_of(tmp_path, {**BASE, "network": bad_height}).endswith(
        "network.unidirectional.b: needs one value per tree height h = 1..2 (log2 of the node "
        "count), got 1"
    )
    zero_rate = {**net, "unidirectional": {"b": [1e8, 0], "d": [1e-4, 1e-4]}}
    assert error_of(tmp_path, {**BASE, "network": zero_rate}).endswith(
        "network.unidirectional.b[1]: must be > 0 bytes per second, got 0"
    )
    assert "binary tree needs a power of two nodes, got 6" in error_of(
        tmp_path, {**BASE, "nodes": 6, "network": {**net, "nodes": 6}}
    )
    assert "did you mean 'binary-tree'?" in error_of(
        tmp_path, {**BASE, "network": {**net, "topology": "binary_tree"}}
    )
    assert "the network has 4 nodes but the platform has nodes: 8" in error_of(
        tmp_path, {**BASE, "nodes": 8, "network": net}
    )


def test_tcp_rto_must_be_positive(tmp_path: Path) -> None:
    assert error_of(tmp_path, {**BASE, "tcp": {"rto": 0}}).endswith(
        "tcp.rto: must be > 0 seconds, got 0"
    )


# --- models ------------------------------------------------------------------------------


def test_missing_section_for_model(tmp_path: Path) -> None:
    data = copy.deepcopy(BASE)
    del data["plogp"]
    platform = load_platform(write(tmp_path, data))
    with pytest.raises(PlatformError) as info:
        platform.engine_params("plogp")
    assert str(info.value) == (
        f"platform test ({tmp_path / 'x.yaml'}) has no `plogp` section; model plogp needs it"
    )


def test_unknown_model() -> None:
    platform = platform_from_dict(BASE)
    with pytest.raises(ModelError) as info:
        platform.engine_params("plogpp")
    assert "unknown model 'plogpp' (known: hockney, loggops, " in str(info.value)
    assert "did you mean 'plogp'?" in str(info.value)
    assert isinstance(info.value, CommodelError)


def test_model_names_include_the_contention_free_models() -> None:
    assert {"loggops", "plogp", "hockney"} <= set(model_names())


def test_engine_params_are_picoseconds() -> None:
    platform = platform_from_dict(BASE)
    plogp = platform.engine_params("plogp")
    assert plogp == {
        "L": 50_000_000,
        "sizes": [0, 1024, 65536],
        "o_s": [2_000_000, 4_000_000, 40_000_000],
        "o_r": [2_000_000, 5_000_000, 60_000_000],
        "g": [5_000_000, 12_000_000, 600_000_000],
        "S": None,
    }
    hockney = platform.engine_params("hockney")
    assert hockney == {"alpha": 50_000_000, "beta": 8500.0, "S": None}
    with_bidir = copy.deepcopy(BASE)
    with_bidir["plogp"]["bidirectional"] = {"g": [6e-6, 2e-5, 9e-4]}
    params = platform_from_dict(with_bidir).engine_params("plogp")
    assert params["g_bidir"] == [6_000_000, 20_000_000, 900_000_000]


def test_eager_only_loggops() -> None:
    platform = platform_from_dict(changed("loggops.S", None))
    assert platform.engine_params("loggops")["S"] >= 2**62


def test_lmo_section(tmp_path: Path) -> None:
    lmo = {"C": [1e-5, 2e-5], "t": [1e-9, 2e-9], "beta": [[None, 1e8], [1.2e8, None]]}
    platform = platform_from_dict({**BASE, "nodes": 2, "lmo": lmo})
    assert platform.sections["lmo"].beta == ((None, 1e8), (1.2e8, None))
    ragged = {**lmo, "beta": [[None, 1e8], [1.2e8]]}
    assert error_of(tmp_path, {**BASE, "lmo": ragged}).endswith(
        "lmo.beta[1]: has 1 values but lmo.C has 2; give one value per entry"
    )
    negative = {**lmo, "t": [1e-9, -2e-9]}
    assert error_of(tmp_path, {**BASE, "lmo": negative}).endswith(
        "lmo.t[1]: must be >= 0 seconds per byte, got -2e-09"
    )
