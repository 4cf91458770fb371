"""Reading the YAML files a user hands us (platform files, cluster specs) safely.

One path for every such file, :func:`read_yaml_file`:

* the file is read as bytes, at most :data:`MAX_FILE_BYTES` (PyYAML builds every value in
  Python: about 1 s per MiB with libyaml, ten times that without);
* decoded as UTF-8, a bad byte reported with its offset and line;
* its events (libyaml's parser, streamed) checked before anything is built: nesting at
  most :data:`MAX_DEPTH` levels (PyYAML composes nodes recursively), at most
  :data:`MAX_VALUES` values once aliases are expanded (the "billion laughs"), and only
  the tags a platform file or a spec needs (text, numbers, true/false, null, lists,
  mappings): ``!!timestamp``, ``!!binary``, ``!!set``, ``!!omap``, ``!!python/...`` and
  local tags are refused, a ``!!int``, ``!!float``, ``!!bool`` or ``!!null`` must carry text
  of its type, and a date-like scalar (``2026-11-28``) stays text;
* then built by :class:`LimitedLoader`, which refuses duplicate keys (PyYAML keeps the
  last) and integers of more digits than Python reads (a bare ValueError otherwise).

Every refusal is an error of the caller's class naming the file, and the line and column
where YAML has them.
"""

from __future__ import annotations

import os
from typing import Any

import yaml

from .fields import describe

# Deeper than any platform file (lmo.beta, the deepest field, sits 4 levels down).
MAX_DEPTH = 64
# Values after expanding aliases: far above a measured platform, far below a bomb.
MAX_VALUES = 1_000_000
# Bytes of a file: 50 times the largest measured platform (38 KB), read in about 2 s.
MAX_FILE_BYTES = 2 * 1024 * 1024

_CORE = "tag:yaml.org,2002:"
# The tags a platform file or cluster spec may carry explicitly ("!" is YAML's plain tag).
ALLOWED_TAGS = frozenset(
    ["!", *(_CORE + t for t in ("str", "int", "float", "bool", "null", "seq", "map", "merge"))]
)


if yaml.__with_libyaml__:
    _EventLoader: Any = yaml.CSafeLoader
    _Parser: Any = yaml.cyaml.CParser
else:  # PyYAML built without libyaml: its Python reader, ten times slower

    class _Parser(  # type: ignore[no-redef]
        yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, yaml.composer.Composer
    ):
        def __init__(self, stream: Any) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            yaml.composer.Composer.__init__(self)

    _EventLoader = yaml.SafeLoader


# Explicit scalar tags and the implicit types their text must have.
_TYPED = {
    _CORE + "int": {_CORE + "int"},
    _CORE + "float": {_CORE + "int", _CORE + "float"},
    _CORE + "bool": {_CORE + "bool"},
    _CORE + "null": {_CORE + "null"},
}


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag


class _Resolver(yaml.resolver.Resolver):
    """YAML 1.1's implicit types without timestamps (a date-like scalar stays text) and
    without ``=`` (the value key, which has no constructor)."""


_Resolver.yaml_implicit_resolvers = {
    first: [
        (tag, regexp)
        for tag, regexp in resolvers
        if tag not in (_CORE + "timestamp", _CORE + "value")
    ]
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}


def _check_events(text: str) -> None:
    """Nesting, values once aliases are expanded, and tags, from libyaml's event stream
    (nothing built yet); a YAML error at the offending node otherwise."""
    depth = 0
    values = 0
    open_nodes: list[tuple[str | None, int]] = []  # (anchor, values before it)
    anchored: dict[str, int] = {}  # anchor -> values under it, aliases expanded

    def count(n: int, mark: Any) -> None:
        nonlocal values
        values += n
        if values > MAX_VALUES:
            raise yaml.composer.ComposerError(
                None, None, f"more than {MAX_VALUES} values once aliases are expanded", mark
            )

    def check_tag(event: Any) -> None:
        tag = event.tag
        if isinstance(event, yaml.ScalarEvent) and tag in _TYPED:
            # PyYAML's constructors assume the text is of their type: `!!bool ye` or an
            # empty `!!int` end in a KeyError or IndexError inside them
            found = resolver.resolve(yaml.ScalarNode, event.value, (True, False))
            if found not in _TYPED[tag]:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"{describe(event.value)} is not of the type of its tag {_short_tag(tag)}",
                    event.start_mark,
                )
        if tag is not None and tag not in ALLOWED_TAGS:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"tag {describe(_short_tag(tag))} is not allowed (only text, numbers, "
                "true/false, null, lists and mappings)",
                event.start_mark,
            )

    resolver = _Resolver()
    for event in yaml.parse(text, Loader=_EventLoader):
        if isinstance(event, yaml.AliasEvent):
            count(anchored.get(event.anchor, 1), event.start_mark)
        elif isinstance(event, (yaml.ScalarEvent, yaml.CollectionStartEvent)):
            if depth + 1 > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested deeper than {MAX_DEPTH} levels", event.start_mark
                )
            check_tag(event)
            count(1, event.start_mark)
            if isinstance(event, yaml.ScalarEvent):
                if event.anchor is not None:
                    anchored[event.anchor] = 1
            else:
                depth += 1
                open_nodes.append((event.anchor, values - 1))
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            anchor, before = open_nodes.pop()
            if anchor is not None:
                anchored[anchor] = values - before


class LimitedLoader(_Parser, yaml.constructor.SafeConstructor, _Resolver):
    """libyaml's parser, PyYAML's safe constructor and YAML 1.1's implicit types but
    timestamps, with the checks of the module documentation (the event checks run first,
    on the whole text)."""

    def __init__(self, stream: Any) -> None:
        _check_events(stream)
        _Parser.__init__(self, stream)
        yaml.constructor.SafeConstructor.__init__(self)
        _Resolver.__init__(self)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            first: dict[Any, Any] = {}
            for key_node, _ in node.value:
                if key_node.tag == _CORE + "merge" or not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = self.construct_object(key_node)
                if key in first:
                    line = first[key].line + 1
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"duplicate key {describe(key)} (first on line {line})",
                        key_node.start_mark,
                    )
                first[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: Any) -> int:
        """An integer, or a YAML error at its line when it has too many digits for Python."""
        try:
            return super().construct_yaml_int(node)
        except ValueError:
            raise yaml.constructor.ConstructorError(
                None, None, f"an integer of {len(node.value)} digits is too long", node.start_mark
            ) from None


LimitedLoader.add_constructor(_CORE + "int", LimitedLoader.construct_yaml_int)


def parse_yaml(text: str, source: str, error: type[Exception]) -> Any:
    """The document in ``text`` (read from ``source``), or ``error`` naming the line."""
    try:
        return yaml.load(text, Loader=LimitedLoader)
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow
        line = text.count("\n", 0, exc.position) + 1
        char = exc.character if isinstance(exc.character, int) else ord(exc.character[:1] or "?")
        raise error(
            f"{source}:{line}: invalid YAML: character U+{char:04X} (at character "
            f"{exc.position}) is not allowed: YAML forbids control characters"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or str(exc)
        raise error(f"{where}: invalid YAML: {problem}") from None
    except (ValueError, OverflowError, RecursionError) as exc:  # a constructor's own error
        raise error(f"{source}: invalid YAML: {str(exc)[:200]}") from None


def read_yaml_file(
    path: str | os.PathLike[str], source: str, error: type[Exception], what: str
) -> Any:
    """The YAML document of the file ``path`` (``source`` in messages), read by the rules
    of the module documentation; ``error`` (of the caller's kind) otherwise. ``what`` names
    the kind of file in messages ("platform file", "cluster spec")."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise error(f"{source}: cannot read the {what}: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise error(
            f"{source}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; a {what} is at most "
            f"{MAX_FILE_BYTES} bytes"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(
            f"{source}:{line}: byte {exc.start} ({data[exc.start]:#04x}) is not UTF-8; a {what} "
            "is UTF-8 text"
        ) from None
    return parse_yaml(text, source, error)
