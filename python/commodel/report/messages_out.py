"""Writing a prediction's messages: the JSON of docs/formats.md, streamed, and Parquet.

Both writers walk the messages a chunk of rows at a time (``MessageTable.chunks``), so
their memory does not grow with the number of messages: a 1024-rank all-to-all has a
million messages and more.

* :func:`write_json` writes exactly the text of ``json.dumps(prediction.to_dict(),
  indent=2)``, the ``messages`` list formatted chunk by chunk; ``messages=False`` leaves
  the list out (a summary: model, makespan, ranks, RTO events).
* :func:`write_parquet` writes one row per message (columns ``src``, ``dst``, ``bytes``,
  ``tag``, ``start_s``, ``end_s``, ``rto``, and the exact ``start_ps``, ``end_ps``) with the
  summary JSON in the file's key-value metadata under ``commodel.prediction``; DuckDB
  reads it with ``SELECT * FROM 'run.parquet'``. Needs pyarrow.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TextIO

from ..errors import CommodelError, MissingDependencyError

if TYPE_CHECKING:
    from ..prediction import Prediction

#: Parquet columns in file order, with their Arrow types.
PARQUET_COLUMNS = (
    ("src", "uint32"),
    ("dst", "uint32"),
    ("bytes", "uint64"),
    ("tag", "int64"),
    ("start_s", "float64"),
    ("end_s", "float64"),
    ("rto", "bool"),
    ("start_ps", "uint64"),
    ("end_ps", "uint64"),
)
#: Key of the summary JSON in the Parquet file's metadata.
PARQUET_METADATA_KEY = b"commodel.prediction"
#: Messages per Parquet row group.
PARQUET_ROW_GROUP = 131072
#: Messages formatted at a time for JSON (a few MB of text).
JSON_CHUNK = 16384

_BOOL = ("false", "true")
_LIST_KEY = '\n  "messages": []'


def summary_dict(prediction: Prediction) -> dict[str, Any]:
    """``prediction.to_dict()`` without the ``messages`` list."""
    data = dataclasses.replace(prediction, messages=[]).to_dict()
    del data["messages"]
    return data


def _message_rows(chunk: dict[str, Any]) -> str:
    """The messages of ``chunk`` as ``json.dumps(..., indent=2)`` writes them inside the
    ``messages`` list of the top-level object, joined by commas."""
    rows = zip(
        chunk["src"].tolist(),
        chunk["dst"].tolist(),
        chunk["bytes"].tolist(),
        chunk["tag"].tolist(),
        chunk["start_s"].tolist(),
        chunk["end_s"].tolist(),
        chunk["rto"].tolist(),
    )
    return ",".join(
        [
            f'\n    {{\n      "src": {s},\n      "dst": {d},\n      "bytes": {b},'
            f'\n      "tag": {t},\n      "start_s": {t0!r},\n      "end_s": {t1!r},'
            f'\n      "rto": {_BOOL[r]}\n    }}'
            for s, d, b, t, t0, t1, r in rows
        ]
    )


def write_json(prediction: Prediction, handle: TextIO, messages: bool = True) -> None:
    """Write ``prediction`` as indented JSON (docs/formats.md) to ``handle``.

    With ``messages`` the text equals ``prediction.to_json(indent=2)``; without, the
    ``messages`` field is left out.
    """
    from ..message_table import MessageTable

    table = prediction.messages
    if not messages:
        handle.write(json.dumps(summary_dict(prediction), indent=2) + "\n")
        return
    if not isinstance(table, MessageTable) or not len(table):  # built by hand, or empty
        handle.write(prediction.to_json(indent=2) + "\n")
        return
    text = json.dumps(dataclasses.replace(prediction, messages=[]).to_dict(), indent=2)
    head, tail = text.split(_LIST_KEY, 1)
    handle.write(head + _LIST_KEY[:-1])
    separator = ""
    names = ("src", "dst", "bytes", "tag", "start_s", "end_s", "rto")
    for chunk in table.chunks(names, JSON_CHUNK):
        handle.write(separator + _message_rows(chunk))
        separator = ","
    handle.write("\n  ]" + tail + "\n")


@contextlib.contextmanager
def text_output(path: str | None) -> Iterator[TextIO]:
    """The file ``path`` opened for writing text, or standard output for None or ``-``;
    an error opening or writing it is a CommodelError naming the file."""
    if path is None or path == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    try:
        with open(path, "w", encoding="utf-8") as handle:
            yield handle
    except OSError as exc:
        raise CommodelError(f"{path}: cannot write: {exc.strerror or exc}") from None


def check_parquet() -> None:
    """Raise MissingDependencyError unless pyarrow (for Parquet) is installed."""
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError("pyarrow", None, "predict --parquet") from exc


def write_parquet(prediction: Prediction, path: str, rows: int = PARQUET_ROW_GROUP) -> None:
    """Write every message of ``prediction`` as a row of the Parquet file ``path``."""
    check_parquet()
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..message_table import MessageTable

    table = prediction.messages
    if not isinstance(table, MessageTable):
        raise CommodelError("--parquet needs the engine's message columns (record_messages=True)")
    schema = pa.schema([(name, pa.type_for_alias(kind)) for name, kind in PARQUET_COLUMNS])
    summary = json.dumps(summary_dict(prediction)).encode()
    schema = schema.with_metadata({PARQUET_METADATA_KEY: summary})
    names = [name for name, _ in PARQUET_COLUMNS]
    try:
        with pq.ParquetWriter(path, schema) as writer:
            if not len(table):
                writer.write_table(schema.empty_table())
            for chunk in table.chunks(names, rows):
                arrays = [pa.array(chunk[name], type=schema.field(name).type) for name in names]
                writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
    except OSError as exc:
        raise CommodelError(f"{path}: cannot write: {exc.strerror or exc}") from None
