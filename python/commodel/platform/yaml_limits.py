"""Reading platform YAML safely: bounded nesting and alias expansion, no duplicate keys.

PyYAML's safe loader builds plain Python values but composes nested nodes recursively
(a document nested thousands deep ends in RecursionError), lets aliases multiply a small
file into billions of values (the "billion laughs"), keeps the last of two equal keys and
fails with a bare ValueError on an integer of more than 4300 digits. :class:`LimitedLoader`
refuses all four with a YAML error that carries the line.
"""

from __future__ import annotations

from typing import Any

import yaml

from .fields import describe

# Deeper than any platform file (lmo.beta, the deepest field, sits 4 levels down).
MAX_DEPTH = 64
# Values after expanding aliases: far above a measured platform, far below a bomb.
MAX_VALUES = 1_000_000


class LimitedLoader(yaml.SafeLoader):
    """:class:`yaml.SafeLoader` with :data:`MAX_DEPTH`, :data:`MAX_VALUES` and unique keys."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._depth = 0
        self._values = 0
        self._anchored: dict[str, int] = {}  # anchor -> values under it, aliases expanded

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            node = super().compose_node(parent, index)
            self._count(self._anchored.get(event.anchor, 1), event.start_mark)
            return node
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise yaml.composer.ComposerError(
                None, None, f"nested deeper than {MAX_DEPTH} levels", event.start_mark
            )
        before = self._values
        self._count(1, event.start_mark)
        node = super().compose_node(parent, index)
        self._depth -= 1
        if event.anchor is not None:
            self._anchored[event.anchor] = self._values - before
        return node

    def _count(self, values: int, mark: Any) -> None:
        self._values += values
        if self._values > MAX_VALUES:
            raise yaml.composer.ComposerError(
                None, None, f"more than {MAX_VALUES} values once aliases are expanded", mark
            )

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            first: dict[Any, Any] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(
                    key_node, yaml.ScalarNode
                ):
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


LimitedLoader.add_constructor("tag:yaml.org,2002:int", LimitedLoader.construct_yaml_int)
