"""Platform files: the validated :class:`Platform`, loading from YAML, the built-ins.

A platform file is YAML (see docs/formats.md). Units are documented once: times in
seconds, sizes in bytes, rates in bytes per second, per-byte costs in seconds per byte.
Numbers may also be written with a unit as a string (``"1.5us"``, ``"64KiB"``,
``"936.4Mbps"``). Every field is validated and an error names the file, the field path and
the bad value, e.g. ``examples/platforms/x.yaml: plogp.g[2]: must be >= 0 seconds, got -1.0``.

Built-in platforms (``nomura2007``, ``loggopsim-default``) ship in ``commodel/platforms/``;
``examples/platforms/`` holds links to the same files.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import PlatformError
from .engine_params import model_params
from .fields import MAX_QUOTE, MAX_RANKS, At, describe, integer, mapping, node_count, number_list
from .network import Network
from .sections import SECTIONS, TCP, Hockney, LogGOPS, PLogP

FORMAT_VERSION = 1

BUILTIN_DIR = Path(__file__).resolve().parent.parent / "platforms"


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

    def cpu_stretch(self, ranks: int) -> float:
        """s = P / C when the ``ranks`` of a run share the C < P cores of the ``cpu`` section
        (their CPU work takes s times as long, docs/models.md), else 1."""
        cpu = self.sections.get("cpu")
        return ranks / cpu.cores if cpu is not None and ranks > cpu.cores else 1.0

    def engine_params(self, model: str, ranks: int | None = None) -> dict[str, Any]:
        """The parameters of ``model`` in the engine's units (integer picoseconds); with the
        rank placement of a schedule of ``ranks`` ranks (``None``: every rank the platform
        holds) for the models on a network."""
        return model_params(self, model, ranks)


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
            f"unsupported format version {describe(version)} (this commodel reads version "
            f"{FORMAT_VERSION})"
        )
    name = top["name"]
    if not isinstance(name, str) or not name.strip():
        raise at.key("name").error(f"must be a non-empty string, got {describe(name)}")
    description = top.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise at.key("description").error(f"must be a string, got {describe(description)}")
    nodes = node_count(at.key("nodes"), top["nodes"])
    ranks_per_node = integer(
        at.key("ranks_per_node"),
        top.get("ranks_per_node", 1),
        minimum=1,
        maximum=MAX_RANKS // nodes,
        why=f"{nodes} nodes hold at most {MAX_RANKS} ranks, the engine's 32-bit rank numbers",
    )
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
    pair = getattr(sections.get("plogp"), "pair", None)
    if pair is not None and max(pair) >= nodes:
        raise at.key("plogp.pair").error(f"node index must be < nodes ({nodes}), got {max(pair)}")
    rule = getattr(sections.get("tcp"), "rto_rule", None)
    if rule == "buffer" and network is not None and network.buffer is None:
        raise at.key("network.buffer").error(
            "missing: tcp.rto_rule buffer needs the port buffer capacity in bytes, "
            "one value or one per height"
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
    if not isinstance(path_or_name, (str, os.PathLike)):
        raise PlatformError(
            "load_platform: path_or_name must be a platform file, the name of a built-in "
            f"platform or a Platform, got {type(path_or_name).__name__} "
            "(platform_from_dict reads a dict)"
        )
    text = os.fspath(path_or_name)
    # the name as messages show it: a long or unprintable one quoted short
    shown = text if len(text) <= MAX_QUOTE and text.isprintable() else describe(text)
    path = Path(text)
    builtin = BUILTIN_DIR / f"{text}.yaml"
    try:
        if path.is_file():
            return _load_file(path, shown)
        if not _looks_like_path(text) and builtin.is_file():
            return _load_file(builtin, str(builtin))
        exists = path.exists()
    except OSError as exc:  # a name too long for the file system
        raise PlatformError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    if exists:
        raise PlatformError(f"{shown}: not a file")
    raise PlatformError(
        f"{shown}: no such platform file, and no built-in platform of that name "
        f"(built-ins: {', '.join(builtin_platforms())})"
    )


def _load_file(path: Path, source: str) -> Platform:
    from .yaml_limits import read_yaml_file  # imports yaml: `commodel --help` stays fast

    data = read_yaml_file(path, source, PlatformError, "platform file")
    if data is None:
        raise PlatformError(f"{source}: empty platform file")
    return platform_from_dict(data, source)
