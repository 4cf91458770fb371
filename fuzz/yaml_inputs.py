"""Platform files and cluster specs as a user could write them, for the fuzzer: a grammar of
every key of the two formats (docs/formats.md, docs/cluster.md) with values drawn valid most
of the time, then zero to three mutations of the kinds that broke the loaders: a value
replaced by a pathological one (YAML tags, huge, negative, NaN and infinite numbers,
integers too large for a float or for Python, counts too large for an index, wrong types,
dates, long text), a key dropped, added or given twice, a value nested deep, aliases, and
bytes that are not UTF-8 or not allowed in YAML.

Every draw comes from one ``random.Random``, so an input is its seed: ``python fuzz/harness.py
show platform-yaml SEED`` prints it again.
"""

from __future__ import annotations

import math
import random
from typing import Any


class Raw:
    """A YAML token written as is (a tag, an alias, a number PyYAML reads its own way)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Raw({self.text!r})"


# Scalars that broke, or could break, a loader or a model.
PATHOLOGICAL = [
    "0", "-1", "-0", "+1", "1.5", "1e308", "1e309", "-1e309", "1e-320", "5e-324",
    ".nan", ".NaN", ".inf", "-.inf", "nan", "inf",
    "4294967295", "4294967296", "1048576", "1048577", "9223372036854775807",
    "18446744073709551615", "18446744073709551616", "1" + "0" * 400, "-" + "9" * 400,
    "9" * 5000, "0x10", "0o17", "0b101", "1_000", "2**64", "1e20", "18446744.073709551",
    "!!timestamp x", "!!timestamp 2026-11-28", "!!binary aGVsbG8=", "!!set {a, b}",
    "!!omap [a: 1]", "!!pairs [a: 1]", "!!python/object:os.system x", "!!python/name:os.system",
    "!!float 1", "!!float x", "!!float", "!!int x", "!!int 7", "!!int", "!!int 1.5", "!!bool ye", "!!str 1", "!!bool yes", "!!null ''",
    "!local x", "! 5", "2026-11-28", "2026-13-45", "12:30:00", "~", "null", "true", "no",
    "[]", "{}", "[1, 2, 3]", "[0, -5]", "[[[[[[1]]]]]]", "{a: 1}", "*undefined", "'64KiB'",
    "64Kb", "64K", "64KiB", "1Gbit", "100Mbit", "10Mbps", "5us", "-5us", "1e8s", "2e7s",
    "'1.0e'", "''", '"\\x00"', '"\\uffff"', "'" + "x" * 300 + "'", "binary-tree", "racks",
    "=", "<<", "? [1, 2]\n  : 3",
]  # fmt: skip

# Bytes a file may carry that YAML or UTF-8 does not allow.
BAD_BYTES = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\x01", b"\x1b", b"\x7f", b"\xef\xbb\xbf",
             b"\r", b"\t", b"\xe2\x80\xa8"]  # fmt: skip


def pick(rng: random.Random, values: list[Any]) -> Any:
    return values[rng.randrange(len(values))]


def number(rng: random.Random, low: float = 1e-7, high: float = 1e-2) -> float:
    """A positive number, log-uniform in [low, high], 6 significant digits."""
    return float(f"{math.exp(rng.uniform(math.log(low), math.log(high))):.6g}")


def increasing(rng: random.Random, n: int, start: int = 0) -> list[int]:
    out, m = [], start
    for _ in range(n):
        out.append(m)
        m = m * 2 if m else 1
        m += rng.choice([0, 0, 1, 7])
    return out


def table(rng: random.Random, n: int, base: float, slope: float) -> list[float]:
    return [float(f"{base + slope * i * rng.uniform(0.5, 1.5):.6g}") for i in range(n)]


# --- platform files -------------------------------------------------------------------


def network(rng: random.Random, nodes: int) -> dict[str, Any]:
    kind = rng.choice(["binary-tree", "crossbar", "racks", "racks-count", "leaf-spine", "fat-tree"])
    nic = number(rng, 1e6, 1.25e9)
    common: dict[str, Any] = {}
    if rng.random() < 0.3:
        common["buffer"] = rng.choice([32768, [32768, 131072], "32KiB"])
    if rng.random() < 0.3:
        common["bucket"] = rng.choice([3125, 0, "4KiB"])
    if rng.random() < 0.2:
        common["overhead"], common["ack"] = rng.choice([(66, 52), (0, 0)])
    if kind == "binary-tree":
        height = max(1, nodes.bit_length() - 1)
        out = {
            "topology": "binary-tree",
            "nodes": 1 << height,
            "unidirectional": {
                "b": table(rng, height, nic, nic),
                "d": table(rng, height, 1e-5, 1e-5),
            },
        }
        if rng.random() < 0.5:
            out["bidirectional"] = {"b": table(rng, height, nic / 2, nic / 2),
                                    "d": table(rng, height, 5e-6, 5e-6)}  # fmt: skip
        if rng.random() < 0.3:
            out["latency"] = table(rng, height, 1e-6, 1e-6)
        return {**out, **common}
    if kind == "crossbar":
        return {"topology": "crossbar", "nodes": nodes, "nic": nic, "latency": number(rng, 1e-7, 1e-4),
                **common}  # fmt: skip
    if kind in ("racks", "racks-count"):
        out = {"topology": "racks", "nic": nic, "backbone": number(rng, 1e6, 1e10),
               "nic_latency": number(rng, 1e-7, 1e-4), "backbone_latency": number(rng, 1e-7, 1e-4)}  # fmt: skip
        if kind == "racks" or nodes % 2:
            cut = rng.randrange(1, nodes) if nodes > 1 else 0
            out["racks"] = [cut, nodes - cut] if cut else [nodes]
        else:
            out["racks"], out["nodes_per_rack"] = 2, nodes // 2
        if rng.random() < 0.4:
            out["backbone_kind"] = rng.choice(["optical", "electrical"])
            if rng.random() < 0.5:
                out["saturation"] = rng.randrange(1, 9)
        if rng.random() < 0.3:
            out["d"] = table(rng, 2, 1e-5, 1e-5)
        return {**out, **common}
    leaves = rng.choice([k for k in (1, 2, 4) if nodes % k == 0])
    return {"topology": kind, "leaves": leaves, "nodes_per_leaf": nodes // leaves, "nic": nic,
            "oversubscription": rng.choice([1, 2, 1.5, 4.0]), "latency": number(rng, 1e-7, 1e-4),
            **common}  # fmt: skip


def plogp(rng: random.Random) -> dict[str, Any]:
    n = rng.randrange(1, 7)
    sizes = increasing(rng, n)
    out: dict[str, Any] = {
        "L": number(rng, 1e-6, 1e-4),
        "sizes": sizes,
        "o_s": table(rng, n, 5e-6, 1e-6),
        "o_r": table(rng, n, 5e-6, 1e-6),
        "g": table(rng, n, 1e-5, 1e-5),
        "S": rng.choice([None, 65535, 1024, "64KiB"]),
    }
    if rng.random() < 0.4:
        out["bidirectional"] = {"g": table(rng, n, 2e-5, 2e-5)}
    if rng.random() < 0.3:
        k = rng.randrange(n)
        out["escalation"] = {"sizes": [sizes[k]], "level": [number(rng, 1e-3, 0.3)],
                             "frequency": [rng.choice([0.1, 0.5, 1.0])]}  # fmt: skip
    return out


def tcp(rng: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = {"rto": rng.choice([0.2, "200ms", 1e-3]), "eps_S": 1e-3, "eps_T": 5e-5}
    if rng.random() < 0.3:
        out["rto_rule"] = rng.choice(["plogpt", "buffer"])
    if rng.random() < 0.5:
        n = rng.randrange(1, 5)
        sizes = increasing(rng, n, 1024)
        eff: dict[str, Any] = {"sizes": sizes, "exchange": [0.5] * n, "duplex": [0.9] * n}
        if rng.random() < 0.5:
            eff["fanin"] = {"peers": rng.randrange(2, 9), "sizes": sizes, "e": [0.7] * n}
        out["efficiency"] = eff
    if rng.random() < 0.3:
        out["fifo_limit"] = rng.choice([1024, 65536, 0])
    if rng.random() < 0.3:
        out["spread"] = rng.choice([0.0, 0.2, 10.0])
    if rng.random() < 0.3:
        n = rng.randrange(1, 4)
        out["spread_by_size"] = {"sizes": increasing(rng, n, 1024),
                                 "sigma": [rng.choice([0.0, 0.3, 10.0]) for _ in range(n)]}  # fmt: skip
    if rng.random() < 0.3:
        out["timeouts"] = [
            {"senders": rng.choice([2, 3, 7, 1]), "size": rng.choice([1, 32768, 0]),
             "fanout": rng.choice([1, 3, 0])}
            for _ in range(rng.randrange(1, 3))
        ]  # fmt: skip
    if rng.random() < 0.3:
        n = rng.randrange(1, 4)
        out["port_timeouts"] = {"sizes": increasing(rng, n, rng.choice([1, 16384])),
                                "rate": [rng.choice([0.0, 0.03, 1.0, 1.5]) for _ in range(n)]}  # fmt: skip
    return out


def many_to_one(rng: random.Random, nodes: int) -> dict[str, Any]:
    ns = sorted({rng.randrange(3, max(4, nodes + 1)) for _ in range(rng.randrange(1, 4))})
    sizes = [1024, 4096, 16384, 65536][: rng.randrange(2, 5)]
    levels = [number(rng, 1e-3, 0.3) for _ in range(rng.randrange(0, 3))]
    surfaces = []
    for _ in levels:
        kx, ky = rng.choice([(1, 1), (1, 3), (3, 1)])
        nk = [float(ns[0])] * (kx + 1) + [float(ns[-1] + 1)] * (kx + 1)
        mk = [float(sizes[0])] * (ky + 1) + [float(sizes[-1])] * (ky + 1)
        coefficients = [
            rng.uniform(-0.5, 1.5) for _ in range((len(nk) - kx - 1) * (len(mk) - ky - 1))
        ]
        surfaces.append({"kx": kx, "ky": ky, "n_knots": nk, "M_knots": mk,
                         "coefficients": [float(f"{c:.4g}") for c in coefficients]})  # fmt: skip
    return {
        "root": 0,
        "n": ns,
        "sizes": sizes,
        "linear": {
            "intercept": [number(rng, 1e-5, 1e-3) for _ in ns],
            "slope": [number(rng, 1e-9, 1e-7) for _ in ns],
        },  # fmt: skip
        "M1": [rng.choice([None, 1024, 4096]) for _ in ns],
        "Mc": [rng.choice([None, 16384]) for _ in ns],
        "M2": rng.choice([None, 65536]),
        "levels": levels,
        "probability": surfaces,
        "kappa_1": rng.choice([None, 0.5]),
        "kappa_2": rng.choice([None, 1.2]),
        "escalation_factor": 3.0,
        "min_excess": 0.05,
        "receives": rng.choice(["sequential", "posted"]),
        "one_to_many": {
            "n": ns,
            "sizes": sizes,
            "time": [[1e-4] * len(sizes) for _ in ns],
            "S": None,
        },
    }


def lmo(rng: random.Random, nodes: int) -> dict[str, Any]:
    return {
        "C": [number(rng, 1e-6, 1e-4) for _ in range(nodes)],
        "t": [number(rng, 1e-10, 1e-8) for _ in range(nodes)],
        "beta": [
            [None if i == j else number(rng, 1e6, 1e9) for j in range(nodes)] for i in range(nodes)
        ],
    }


def platform_document(rng: random.Random) -> dict[str, Any]:
    """A platform document, valid but for what the caller mutates."""
    nodes = rng.choice([1, 2, 3, 4, 8])
    doc: dict[str, Any] = {"commodel_platform": 1, "name": "fuzz", "nodes": nodes}
    if rng.random() < 0.3:
        doc["description"] = rng.choice(["free text", "2026-11-28", ""])
    if rng.random() < 0.2:
        doc["ranks_per_node"] = rng.choice([2, 4])
    elif rng.random() < 0.1:
        doc["rank_to_node"] = [rng.randrange(nodes) for _ in range(rng.randrange(1, 9))]
    if rng.random() < 0.6:
        doc["network"] = network(rng, nodes)
        doc["nodes"] = doc["network"].get("nodes") or sum(doc["network"].get("racks", [0]) if
                        isinstance(doc["network"].get("racks"), list) else [0]) or nodes  # fmt: skip
        if doc["network"]["topology"] in ("leaf-spine", "fat-tree"):
            doc["nodes"] = doc["network"]["leaves"] * doc["network"]["nodes_per_leaf"]
        elif doc["network"]["topology"] == "racks" and "nodes_per_rack" in doc["network"]:
            doc["nodes"] = doc["network"]["racks"] * doc["network"]["nodes_per_rack"]
    if rng.random() < 0.7:
        doc["plogp"] = plogp(rng)
    if rng.random() < 0.4:
        doc["loggops"] = {"L": number(rng), "o": number(rng), "g": number(rng),
                          "G": number(rng, 1e-10, 1e-8), "O": number(rng, 1e-10, 1e-8),
                          "S": rng.choice([None, 65536])}  # fmt: skip
    if rng.random() < 0.3:
        doc["hockney"] = {"alpha": number(rng), "beta": number(rng, 1e-10, 1e-8)}
    if rng.random() < 0.5:
        doc["tcp"] = tcp(rng)
    if rng.random() < 0.2:
        doc["lmo"] = lmo(rng, doc["nodes"])
    if rng.random() < 0.25:
        doc["many_to_one"] = many_to_one(rng, doc["nodes"])
    if rng.random() < 0.2:
        n = rng.randrange(1, 4)
        doc["cpu"] = {"cores": rng.choice([1, 2]), "sizes": increasing(rng, n),
                      "o_s": table(rng, n, 5e-6, 1e-6), "o_r": table(rng, n, 5e-6, 1e-6)}  # fmt: skip
    return doc


# --- cluster specs ----------------------------------------------------------------------


def cluster_document(rng: random.Random) -> dict[str, Any]:
    hosts = rng.choice([2, 3, 4, 8, ["a", "b"], ["x1", "x2", "x3", "x4"]])
    n = hosts if isinstance(hosts, int) else len(hosts)
    doc: dict[str, Any] = {"commodel_cluster": 1, "name": "fuzz", "hosts": hosts}
    if rng.random() < 0.5 and n & (n - 1) == 0 and n > 1:
        depth = n.bit_length() - 1
        doc["topology"] = {"type": "binary-tree",
                           "levels": [rng.choice([{"rate": "100Mbit"}, "100Mbit"])] +
                           [{"rate": rng.choice(["200Mbit", "1Gbit", 25e6])} for _ in range(depth - 1)]}  # fmt: skip
        if rng.random() < 0.5:
            doc["nic_rate"] = "100Mbit"
    else:
        doc["nic_rate"] = rng.choice(["100Mbit", "1Gbit", "12.5MB/s", 12500000, "500kbit"])
        racks: Any = rng.choice([1, [n], "list"] + ([2] if n % 2 == 0 else []))
        if racks == "list":
            racks = [1, n - 1] if n > 1 else [1]
        doc["topology"] = {
            "type": "racks",
            "racks": racks,
            "backbone_rate": rng.choice(["200Mbit", "1Gbit"]),
        }
    if rng.random() < 0.5:
        doc["buffers"] = {"host_nic": "1MiB", "switch_port": rng.choice(["32KiB", 65536]),
                          "backbone_port": "128KiB"}  # fmt: skip
    if rng.random() < 0.5:
        doc["tcp"] = {"congestion_control": rng.choice(["cubic", "reno", "bbr"]),
                      "rto_min_ms": rng.choice([200, 1, 2000, 5.5])}  # fmt: skip
    if rng.random() < 0.3:
        doc["mtu"] = rng.choice([1500, 9000, 576])
    if rng.random() < 0.3:
        doc["shaping"] = rng.choice(["tbf", "serialize"])
        if doc["shaping"] == "serialize" and rng.random() < 0.5:
            doc["switching"] = "cut-through"
    if rng.random() < 0.2:
        doc["host_queue"] = "fair"
    return doc


# --- mutations and the emitter ---------------------------------------------------------

EXTRA_KEYS = ["extra", "b", "d", "L", "rate", "nodes", "S", "levels", "racks", "leaves",
              "ranks_per_node", "~", "1", "many_to_one", "topology", "type"]  # fmt: skip


def places(data: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(data, dict):
        for key, value in data.items():
            out += places(value, path + (key,))
    elif isinstance(data, list):
        for k, value in enumerate(data):
            out += places(value, path + (k,))
    return out


def _get(data: Any, path: tuple) -> Any:
    for key in path:
        data = data[key]
    return data


def huge_value(rng: random.Random) -> Any:
    """A count or number at or beyond a limit."""
    return pick(rng, [2**20, 2**20 + 1, 2**32 - 2, 2**32, 2**62, 2**64, 10**19, 10**400,
                      -(2**63), 1e308, -1e-300, 2**31])  # fmt: skip


def mutate(rng: random.Random, doc: dict[str, Any]) -> dict[str, Any]:
    """One mutation of ``doc`` (in place where it can)."""
    spots = places(doc)[1:]
    if not spots:
        return doc
    path = pick(rng, spots)
    parent, key = _get(doc, path[:-1]), path[-1]
    kind = rng.randrange(10)
    if kind <= 3:
        parent[key] = Raw(pick(rng, PATHOLOGICAL))
    elif kind == 4:
        parent[key] = huge_value(rng)
    elif kind == 5 and isinstance(parent, dict):
        del parent[key]
    elif kind == 6 and isinstance(parent, dict):
        parent[pick(rng, EXTRA_KEYS)] = pick(
            rng, [1, Raw(pick(rng, PATHOLOGICAL)), [1, 2], {"a": 1}]
        )
    elif kind == 7:
        # a list too long, or an item of the wrong type, or a list where a scalar was
        value = parent[key]
        if isinstance(value, list):
            parent[key] = value * rng.choice([2, 50]) if value else [Raw("x")]
        else:
            parent[key] = [value, value]
    elif kind == 8:
        depth = rng.choice([3, 63, 64, 65, 200])
        parent[key] = Raw("[" * depth + "1" + "]" * depth)
    else:
        parent[key] = rng.choice([True, None, "", {"x": 1}, [], 1.5, -3])
    return doc


def yaml_text(value: Any, rng: random.Random, indent: int = 0) -> str:
    """YAML text of ``value``: block mappings at the top, flow style below; numbers as
    Python writes them, so that PyYAML reads them back as numbers."""
    pad = "  " * indent
    if isinstance(value, dict) and indent < 3 and value:
        lines = []
        for key, item in value.items():
            k = _scalar(key)
            if isinstance(item, dict) and item and indent < 2:
                lines.append(f"{pad}{k}:\n{yaml_text(item, rng, indent + 1)}")
            else:
                lines.append(f"{pad}{k}: {_flow(item)}")
        return "\n".join(lines)
    return pad + _flow(value)


def _scalar(value: Any) -> str:
    if isinstance(value, Raw):
        return value.text
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if text == "" or not all(c.isalnum() or c in "-._/" for c in text) or text[0] in "-.":
        return "'" + text.replace("'", "''") + "'"
    return text


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_scalar(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return _scalar(value)


def text_mutations(rng: random.Random, text: str) -> bytes:
    """Byte-level faults: invalid bytes, an alias bomb, a duplicate key, a cut."""
    data = text.encode("utf-8")
    kind = rng.randrange(8)
    if kind == 0:
        at = rng.randrange(len(data) + 1)
        data = data[:at] + pick(rng, BAD_BYTES) + data[at:]
    elif kind == 1:
        levels = ["&a0 [x, x, x, x, x, x, x, x, x, x]"]
        levels += [
            f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, rng.randrange(3, 9))
        ]
        data += ("\ndescription: [" + ", ".join(levels) + "]\n").encode()
    elif kind == 2:
        lines = data.split(b"\n")
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
        data = b"\n".join(lines)
    elif kind == 3:
        data = data[: rng.randrange(len(data) + 1)]
    elif kind == 4:
        data = b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n")
    elif kind == 5:
        data = data.replace(b": ", b": &x ", 1) + b"\nextra: *x\n"
    elif kind == 6:
        data = b"%YAML 1.1\n---\n" + data + b"\n---\nsecond: doc\n"
    else:
        data = data + b"\n" + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
    return data


def document_bytes(rng: random.Random, build: Any) -> bytes:
    """A document from ``build(rng)``, mutated 0-3 times, as the bytes of a file."""
    doc = build(rng)
    for _ in range(rng.choice([0, 0, 1, 1, 1, 2, 3])):
        doc = mutate(rng, doc)
    text = yaml_text(doc, rng) + "\n"
    if rng.random() < 0.15:
        return text_mutations(rng, text)
    return text.encode("utf-8")
