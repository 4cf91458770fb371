"""Platform files: load, validate and convert to engine parameters.

A platform file is YAML (see docs/formats.md). Units are documented once: times in
seconds, sizes in bytes, rates in bytes per second, per-byte costs in seconds per byte.
Numbers may also be written with a unit as a string (``"1.5us"``, ``"64KiB"``,
``"936.4Mbps"``). Every field is validated and an error names the file, the field path and
the bad value, e.g. ``examples/platforms/x.yaml: plogp.g[2]: must be >= 0 seconds, got -1.0``.

Each top-level section is validated by its own function, registered with
:func:`register_section`; each model names the sections it needs and converts them to the
engine's parameters (integer picoseconds) with a function registered by
:func:`register_model`. Later models (plogpt, maxmin, zhu, lmo) add their sections and
converters the same way.

Built-in platforms (``nomura2007``, ``loggopsim-default``) ship in ``commodel/platforms/``;
``examples/platforms/`` holds links to the same files.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .errors import ModelError, PlatformError, UnitsError
from .units import parse_duration, parse_rate, parse_size, seconds_to_ps

FORMAT_VERSION = 1

BUILTIN_DIR = Path(__file__).resolve().parent / "platforms"


# --------------------------------------------------------------------------------------
# Field paths and checks


class At:
    """Where a value sits: the file and the field path, for error messages."""

    def __init__(self, source: str, path: str = "") -> None:
        self.source = source
        self.path = path

    def key(self, name: str) -> At:
        return At(self.source, f"{self.path}.{name}" if self.path else name)

    def index(self, i: int) -> At:
        return At(self.source, f"{self.path}[{i}]")

    def error(self, message: str) -> PlatformError:
        where = f"{self.source}: {self.path}" if self.path else self.source
        return PlatformError(f"{where}: {message}")


def _describe(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def mapping(
    at: At,
    value: Any,
    required: Sequence[str] = (),
    optional: Sequence[str] = (),
) -> dict[str, Any]:
    """Check that ``value`` is a mapping with the required keys and no unknown ones."""
    if not isinstance(value, dict):
        raise at.error(f"must be a mapping of keys to values, got {_describe(value)}")
    known = list(required) + list(optional)
    for key in value:
        if not isinstance(key, str) or key not in known:
            hint = ""
            close = difflib.get_close_matches(str(key), known, n=1)
            if close:
                hint = f"; did you mean {close[0]!r}?"
            elif known:
                hint = f"; known keys: {', '.join(known)}"
            raise at.key(str(key)).error(f"unknown key{hint}")
    for key in required:
        if key not in value:
            raise at.key(key).error("missing (required)")
    return value


def _number(at: At, value: Any, parse: Callable[[Any], float], what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise at.error(f"must be {what}, got {_describe(value)}")
    try:
        number = parse(value)
    except UnitsError as exc:
        raise at.error(f"must be {what}: {exc}") from None
    if not math.isfinite(number):
        raise at.error(f"must be a finite number, got {_describe(value)}")
    return number


def seconds(at: At, value: Any, positive: bool = False) -> float:
    """A time in seconds (``5e-6`` or ``"5us"``), >= 0 (or > 0 with ``positive``)."""
    number = _number(at, value, parse_duration, "a time in seconds")
    if positive and number <= 0:
        raise at.error(f"must be > 0 seconds, got {_describe(value)}")
    if number < 0:
        raise at.error(f"must be >= 0 seconds, got {_describe(value)}")
    return number


def seconds_per_byte(at: At, value: Any) -> float:
    """A per-byte cost in seconds per byte, >= 0."""
    number = _number(at, value, parse_duration, "a cost in seconds per byte")
    if number < 0:
        raise at.error(f"must be >= 0 seconds per byte, got {_describe(value)}")
    return number


def rate(at: At, value: Any) -> float:
    """A rate in bytes per second (``117e6`` or ``"936.4Mbps"``), > 0."""
    number = _number(at, value, parse_rate, "a rate in bytes per second")
    if number <= 0:
        raise at.error(f"must be > 0 bytes per second, got {_describe(value)}")
    return number


def size(at: At, value: Any, allow_none: bool = False) -> int | None:
    """A size in bytes (``65536`` or ``"64KiB"``), >= 0; ``null`` only with ``allow_none``."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str, float)):
        raise at.error(f"must be a size in bytes, got {_describe(value)}")
    if isinstance(value, float):
        if not value.is_integer():
            raise at.error(f"must be a whole number of bytes, got {_describe(value)}")
        value = int(value)
    if isinstance(value, int) and value < 0:
        raise at.error(f"must be >= 0 bytes, got {value}")
    try:
        return parse_size(value)
    except UnitsError as exc:
        raise at.error(f"must be a size in bytes: {exc}") from None


def integer(at: At, value: Any, minimum: int | None = None) -> int:
    """A whole number, >= ``minimum`` if given."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise at.error(f"must be a whole number, got {_describe(value)}")
    if minimum is not None and value < minimum:
        raise at.error(f"must be >= {minimum}, got {value}")
    return value


def number_list(at: At, value: Any, item: Callable[[At, Any], Any], min_len: int = 1) -> list:
    """A YAML list whose every element is checked by ``item``."""
    if not isinstance(value, list):
        raise at.error(f"must be a list, got {_describe(value)}")
    if len(value) < min_len:
        raise at.error(f"must have at least {min_len} value(s), got {len(value)}")
    return [item(at.index(i), v) for i, v in enumerate(value)]


def same_length(at: At, values: Sequence, reference_at: At, reference: Sequence) -> None:
    if len(values) != len(reference):
        raise at.error(
            f"has {len(values)} values but {reference_at.path} has {len(reference)}; "
            "give one value per entry"
        )


# --------------------------------------------------------------------------------------
# Sections


@dataclass(frozen=True)
class LogGOPS:
    """LogGOPS parameters with LogGOPSim's meaning (model ``loggops``)."""

    L: float  # s, latency
    o: float  # s, CPU overhead per message
    g: float  # s, gap between messages
    G: float  # s/B, gap per byte
    O: float  # s/B, CPU overhead per byte  # noqa: E741
    S: int | None  # B, messages larger than S use rendezvous; None: every message is eager


@dataclass(frozen=True)
class PLogPTables:
    """PLogP tables over message sizes; the uni- or bidirectional measurement."""

    o_s: tuple[float, ...] | None
    o_r: tuple[float, ...] | None
    g: tuple[float, ...]


@dataclass(frozen=True)
class PLogP:
    """Kielmann's parameterized LogP (model ``plogp``)."""

    L: float  # s
    sizes: tuple[int, ...]  # B, strictly increasing
    o_s: tuple[float, ...]  # s
    o_r: tuple[float, ...]  # s
    g: tuple[float, ...]  # s
    S: int | None  # B; None: every message is eager
    bidirectional: PLogPTables | None = None


@dataclass(frozen=True)
class Hockney:
    """T(m) = alpha + beta * m (model ``hockney``)."""

    alpha: float  # s
    beta: float  # s/B
    S: int | None = None


@dataclass(frozen=True)
class TreeLevels:
    """Per-height bandwidth b(h) (bytes/s) and buffer delay d(h) (s), h = 1..D."""

    b: tuple[float, ...]
    d: tuple[float, ...]


@dataclass(frozen=True)
class Network:
    """The network topology (only ``binary-tree`` is validated so far; see docs/formats.md)."""

    topology: str
    nodes: int
    unidirectional: TreeLevels
    bidirectional: TreeLevels | None = None


@dataclass(frozen=True)
class TCP:
    """TCP constants: the retransmission timeout and PlogPT's thresholds eps_S, eps_T."""

    rto: float = 0.2  # s
    eps_S: float | None = None  # dimensionless (PlogPT eq. 5)
    eps_T: float | None = None  # s (PlogPT eq. 14)


SectionValidator = Callable[[At, Any], Any]

# Top-level section name -> validator; the validator gets the section's field path and
# its raw YAML value, and returns a typed object (or raises PlatformError via ``at``).
SECTIONS: dict[str, SectionValidator] = {}


def register_section(name: str) -> Callable[[SectionValidator], SectionValidator]:
    """Decorator: register the validator of the top-level section ``name``."""

    def decorate(function: SectionValidator) -> SectionValidator:
        SECTIONS[name] = function
        return function

    return decorate


@register_section("loggops")
def _validate_loggops(at: At, value: Any) -> LogGOPS:
    data = mapping(at, value, required=("L", "o", "g", "G", "O", "S"))
    return LogGOPS(
        L=seconds(at.key("L"), data["L"]),
        o=seconds(at.key("o"), data["o"]),
        g=seconds(at.key("g"), data["g"]),
        G=seconds_per_byte(at.key("G"), data["G"]),
        O=seconds_per_byte(at.key("O"), data["O"]),
        S=size(at.key("S"), data["S"], allow_none=True),
    )


def _increasing_sizes(at: At, value: Any) -> list[int]:
    sizes = number_list(at, value, size)
    for i in range(1, len(sizes)):
        if sizes[i] <= sizes[i - 1]:
            raise at.index(i).error(
                f"sizes must be strictly increasing: got {sizes[i]} after {sizes[i - 1]}"
            )
    return sizes


def _table(at: At, data: dict, key: str, sizes_at: At, sizes: list[int]) -> tuple[float, ...]:
    values = number_list(at.key(key), data[key], seconds)
    same_length(at.key(key), values, sizes_at, sizes)
    return tuple(values)


@register_section("plogp")
def _validate_plogp(at: At, value: Any) -> PLogP:
    data = mapping(
        at, value, required=("L", "sizes", "o_s", "o_r", "g"), optional=("S", "bidirectional")
    )
    sizes_at = at.key("sizes")
    sizes = _increasing_sizes(sizes_at, data["sizes"])
    bidirectional = None
    if data.get("bidirectional") is not None:
        bat = at.key("bidirectional")
        bdata = mapping(bat, data["bidirectional"], required=("g",), optional=("o_s", "o_r"))
        bidirectional = PLogPTables(
            o_s=_table(bat, bdata, "o_s", sizes_at, sizes) if "o_s" in bdata else None,
            o_r=_table(bat, bdata, "o_r", sizes_at, sizes) if "o_r" in bdata else None,
            g=_table(bat, bdata, "g", sizes_at, sizes),
        )
    return PLogP(
        L=seconds(at.key("L"), data["L"]),
        sizes=tuple(sizes),
        o_s=_table(at, data, "o_s", sizes_at, sizes),
        o_r=_table(at, data, "o_r", sizes_at, sizes),
        g=_table(at, data, "g", sizes_at, sizes),
        S=size(at.key("S"), data.get("S"), allow_none=True),
        bidirectional=bidirectional,
    )


@register_section("hockney")
def _validate_hockney(at: At, value: Any) -> Hockney:
    data = mapping(at, value, required=("alpha", "beta"), optional=("S",))
    return Hockney(
        alpha=seconds(at.key("alpha"), data["alpha"]),
        beta=seconds_per_byte(at.key("beta"), data["beta"]),
        S=size(at.key("S"), data.get("S"), allow_none=True),
    )


TOPOLOGIES = ("binary-tree",)


def _tree_levels(at: At, value: Any, height: int) -> TreeLevels:
    data = mapping(at, value, required=("b", "d"))
    b = number_list(at.key("b"), data["b"], rate)
    d = number_list(at.key("d"), data["d"], seconds)
    for key, values in (("b", b), ("d", d)):
        if len(values) != height:
            raise at.key(key).error(
                f"needs one value per tree height h = 1..{height} (log2 of the node count), "
                f"got {len(values)}"
            )
    return TreeLevels(b=tuple(b), d=tuple(d))


@register_section("network")
def _validate_network(at: At, value: Any) -> Network:
    data = mapping(
        at, value, required=("topology",), optional=("nodes", "unidirectional", "bidirectional")
    )
    topology = data["topology"]
    if topology not in TOPOLOGIES:
        close = difflib.get_close_matches(str(topology), TOPOLOGIES, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise at.key("topology").error(
            f"unknown topology {_describe(topology)} (supported: {', '.join(TOPOLOGIES)}){hint}"
        )
    for key in ("nodes", "unidirectional"):
        if key not in data:
            raise at.key(key).error(f"missing (required for topology {topology})")
    nodes = integer(at.key("nodes"), data["nodes"], minimum=2)
    if nodes & (nodes - 1):
        raise at.key("nodes").error(f"a binary tree needs a power of two nodes, got {nodes}")
    height = nodes.bit_length() - 1
    bidirectional = data.get("bidirectional")
    return Network(
        topology=topology,
        nodes=nodes,
        unidirectional=_tree_levels(at.key("unidirectional"), data["unidirectional"], height),
        bidirectional=None
        if bidirectional is None
        else _tree_levels(at.key("bidirectional"), bidirectional, height),
    )


@register_section("tcp")
def _validate_tcp(at: At, value: Any) -> TCP:
    data = mapping(at, value, optional=("rto", "eps_S", "eps_T"))
    eps_s = data.get("eps_S")
    if eps_s is not None:
        eps_s = _number(at.key("eps_S"), eps_s, float, "a number")
        if eps_s < 0:
            raise at.key("eps_S").error(f"must be >= 0, got {eps_s}")
    eps_t = data.get("eps_T")
    return TCP(
        rto=seconds(at.key("rto"), data.get("rto", 0.2), positive=True),
        eps_S=eps_s,
        eps_T=None if eps_t is None else seconds(at.key("eps_T"), eps_t),
    )


@dataclass(frozen=True)
class LMO:
    """Lastovetsky's LMO point-to-point constants per node (section 4.1)."""

    C: tuple[float, ...]  # s, fixed delay of node i
    t: tuple[float, ...]  # s/B, per-byte delay of node i
    beta: tuple[tuple[float | None, ...], ...]  # B/s, link rate i -> j (None: unknown/self)


@register_section("lmo")
def _validate_lmo(at: At, value: Any) -> LMO:
    data = mapping(at, value, required=("C", "t", "beta"))
    c = number_list(at.key("C"), data["C"], seconds)
    t = number_list(at.key("t"), data["t"], seconds_per_byte)
    same_length(at.key("t"), t, at.key("C"), c)

    def rate_or_none(item_at: At, v: Any) -> float | None:
        return None if v is None else rate(item_at, v)

    rows = number_list(at.key("beta"), data["beta"], lambda a, v: number_list(a, v, rate_or_none))
    same_length(at.key("beta"), rows, at.key("C"), c)
    for i, row in enumerate(rows):
        same_length(at.key("beta").index(i), row, at.key("C"), c)
    return LMO(C=tuple(c), t=tuple(t), beta=tuple(tuple(r) for r in rows))


@register_section("many_to_one")
def _validate_many_to_one(at: At, value: Any) -> dict[str, Any]:
    """Escalation statistics (Lastovetsky 4.3); checked in depth by the model that uses them."""
    return dict(mapping(at, value, optional=tuple(value) if isinstance(value, dict) else ()))


# --------------------------------------------------------------------------------------
# The platform


_TOP_LEVEL = ("commodel_platform", "name", "description", "nodes", "ranks_per_node", "rank_to_node")


@dataclass(frozen=True)
class Platform:
    """A validated platform: placement of ranks on nodes and one object per section."""

    name: str
    nodes: int
    source: str
    description: str = ""
    ranks_per_node: int = 1
    rank_to_node: tuple[int, ...] | None = None
    sections: Mapping[str, Any] = field(default_factory=dict)

    @property
    def loggops(self) -> LogGOPS | None:
        return self.sections.get("loggops")

    @property
    def plogp(self) -> PLogP | None:
        return self.sections.get("plogp")

    @property
    def hockney(self) -> Hockney | None:
        return self.sections.get("hockney")

    @property
    def network(self) -> Network | None:
        return self.sections.get("network")

    @property
    def tcp(self) -> TCP | None:
        return self.sections.get("tcp")

    def section(self, name: str, model: str | None = None) -> Any:
        """The validated section ``name``; a clear error if the platform has none."""
        if name not in self.sections:
            needed = f"; model {model} needs it" if model else ""
            raise PlatformError(
                f"platform {self.name} ({self.source}) has no `{name}` section{needed}"
            )
        return self.sections[name]

    def node_of_rank(self, rank: int) -> int:
        """The node that runs ``rank`` (rank_to_node if given, else rank // ranks_per_node)."""
        if self.rank_to_node is not None:
            if rank >= len(self.rank_to_node):
                raise PlatformError(
                    f"{self.source}: rank_to_node: places {len(self.rank_to_node)} ranks, "
                    f"but rank {rank} was asked for"
                )
            return self.rank_to_node[rank]
        node = rank // self.ranks_per_node
        if node >= self.nodes:
            raise PlatformError(
                f"{self.source}: rank {rank} does not fit: {self.nodes} nodes x "
                f"{self.ranks_per_node} ranks per node"
            )
        return node

    def engine_params(self, model: str) -> dict[str, Any]:
        """The parameters of ``model`` in the engine's units (integer picoseconds)."""
        spec = model_spec(model)
        return spec.params(self)


def platform_from_dict(data: Any, source: str = "<dict>") -> Platform:
    """Validate a platform given as a parsed YAML document (a dict)."""
    at = At(source)
    top = mapping(
        at,
        data,
        required=("commodel_platform", "name", "nodes"),
        optional=tuple(k for k in _TOP_LEVEL if k not in ("commodel_platform", "name", "nodes"))
        + tuple(SECTIONS),
    )
    version = top["commodel_platform"]
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise at.key("commodel_platform").error(
            f"unsupported format version {_describe(version)} (this commodel reads version "
            f"{FORMAT_VERSION})"
        )
    name = top["name"]
    if not isinstance(name, str) or not name.strip():
        raise at.key("name").error(f"must be a non-empty string, got {_describe(name)}")
    description = top.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise at.key("description").error(f"must be a string, got {_describe(description)}")
    nodes = integer(at.key("nodes"), top["nodes"], minimum=1)
    ranks_per_node = integer(at.key("ranks_per_node"), top.get("ranks_per_node", 1), minimum=1)
    rank_to_node = None
    if top.get("rank_to_node") is not None:
        if "ranks_per_node" in top:
            raise at.key("rank_to_node").error(
                "give either ranks_per_node or rank_to_node, not both"
            )

        def node_index(item_at: At, value: Any) -> int:
            index = integer(item_at, value, minimum=0)
            if index >= nodes:
                raise item_at.error(f"node index must be < nodes ({nodes}), got {index}")
            return index

        rank_to_node = tuple(number_list(at.key("rank_to_node"), top["rank_to_node"], node_index))
    sections = {}
    for key, validator in SECTIONS.items():
        if top.get(key) is not None:
            sections[key] = validator(at.key(key), top[key])
    network = sections.get("network")
    if network is not None and getattr(network, "nodes", nodes) != nodes:
        raise at.key("network.nodes").error(
            f"the network has {network.nodes} nodes but the platform has nodes: {nodes}"
        )
    return Platform(
        name=name,
        nodes=nodes,
        source=source,
        description=description.strip(),
        ranks_per_node=ranks_per_node,
        rank_to_node=rank_to_node,
        sections=sections,
    )


def builtin_platforms() -> list[str]:
    """Names of the platforms shipped with commodel."""
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.yaml"))


def builtin_path(name: str) -> Path:
    """The file of the built-in platform ``name``."""
    path = BUILTIN_DIR / f"{name}.yaml"
    if not path.is_file():
        raise PlatformError(
            f"no built-in platform {name!r} (built-ins: {', '.join(builtin_platforms())})"
        )
    return path


def _looks_like_path(text: str) -> bool:
    return os.sep in text or "/" in text or text.endswith((".yaml", ".yml"))


def load_platform(path_or_name: str | os.PathLike | Platform) -> Platform:
    """Load and validate a platform file, or a built-in platform by name."""
    if isinstance(path_or_name, Platform):
        return path_or_name
    text = os.fspath(path_or_name)
    path = Path(text)
    if path.is_file():
        return _load_file(path, text)
    if not _looks_like_path(text) and (BUILTIN_DIR / f"{text}.yaml").is_file():
        builtin = BUILTIN_DIR / f"{text}.yaml"
        return _load_file(builtin, str(builtin))
    if path.exists():
        raise PlatformError(f"{text}: not a file")
    raise PlatformError(
        f"{text}: no such platform file, and no built-in platform of that name "
        f"(built-ins: {', '.join(builtin_platforms())})"
    )


def _load_file(path: Path, source: str) -> Platform:
    import yaml  # imported here so that `commodel --help` stays fast

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PlatformError(f"{source}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise PlatformError(f"{source}: not a UTF-8 text file") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or str(exc)
        raise PlatformError(f"{where}: invalid YAML: {problem}") from None
    if data is None:
        raise PlatformError(f"{source}: empty platform file")
    return platform_from_dict(data, source)


# --------------------------------------------------------------------------------------
# Models: which sections each needs and how they become engine parameters


@dataclass(frozen=True)
class ModelSpec:
    name: str
    summary: str
    sections: tuple[str, ...]
    params: Callable[[Platform], dict[str, Any]]


MODELS: dict[str, ModelSpec] = {}


def register_model(
    name: str, summary: str, sections: Sequence[str]
) -> Callable[[Callable[[Platform], dict]], Callable[[Platform], dict]]:
    """Decorator: register the converter of model ``name`` from platform to engine params."""

    def decorate(function: Callable[[Platform], dict]) -> Callable[[Platform], dict]:
        MODELS[name] = ModelSpec(name, summary, tuple(sections), function)
        return function

    return decorate


def model_names() -> list[str]:
    return sorted(MODELS)


def model_spec(model: str) -> ModelSpec:
    """The registered model ``model``; a ModelError naming the known ones otherwise."""
    spec = MODELS.get(model)
    if spec is None:
        close = difflib.get_close_matches(model, list(MODELS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ModelError(f"unknown model {model!r} (known: {', '.join(model_names())}){hint}")
    return spec


# LogGOPS's S for "every message is eager" (the engine takes an integer).
EAGER_ALWAYS = 2**62


def _ps(value: float) -> int:
    return seconds_to_ps(value)


@register_model("loggops", "LogGOPS with LogGOPSim's semantics: L, o, g, G, O, S", ["loggops"])
def _loggops_params(platform: Platform) -> dict[str, Any]:
    p: LogGOPS = platform.section("loggops", "loggops")
    return {
        "L": _ps(p.L),
        "o": _ps(p.o),
        "g": _ps(p.g),
        "G": _ps(p.G),
        "O": _ps(p.O),
        "S": EAGER_ALWAYS if p.S is None else p.S,
    }


@register_model("plogp", "Kielmann's parameterized LogP: L, o_s(m), o_r(m), g(m)", ["plogp"])
def _plogp_params(platform: Platform) -> dict[str, Any]:
    p: PLogP = platform.section("plogp", "plogp")
    params: dict[str, Any] = {
        "L": _ps(p.L),
        "sizes": list(p.sizes),
        "o_s": [_ps(v) for v in p.o_s],
        "o_r": [_ps(v) for v in p.o_r],
        "g": [_ps(v) for v in p.g],
        "S": p.S,
    }
    if p.bidirectional is not None:
        params["g_bidir"] = [_ps(v) for v in p.bidirectional.g]
    return params


@register_model("hockney", "Hockney: alpha + beta * m per message", ["hockney"])
def _hockney_params(platform: Platform) -> dict[str, Any]:
    p: Hockney = platform.section("hockney", "hockney")
    return {"alpha": _ps(p.alpha), "beta": float(f"{p.beta * 1e12:.12g}"), "S": p.S}


# The network topologies (crossbar, racks, leaf-spine) and the contention models (plogpt,
# maxmin) register their section validator and converters from their own module.
from . import platform_network as _platform_network  # noqa: E402,F401
