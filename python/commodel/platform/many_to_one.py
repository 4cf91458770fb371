"""The ``many_to_one`` section: Lastovetsky's many-to-one statistics, validated in full.

Its fields (docs/formats.md; :mod:`commodel.lmo.closed_forms` reads them, ``fit`` writes
them) are all optional, since a hand-written section may give only some; what is given is
checked here, so that nothing reaches the closed forms or scipy's ``bisplev`` but numbers
of the right kind and shape:

* ``root`` (a node index); ``n`` (process counts, >= 2, increasing); ``sizes`` (bytes,
  increasing);
* ``linear``: ``intercept`` (s, any sign: a fitted line) and ``slope`` (s/B), one per n;
* ``M1`` and ``Mc`` (bytes or null), one per n; ``M2`` (bytes or null);
* ``levels`` t_i (s); ``probability``: one B-spline surface per level (or none: the
  escalations are then an error where the model needs them), ``kx`` and ``ky``
  (degrees 1..5, FITPACK's), ``n_knots`` and ``M_knots`` (non-decreasing, at least
  2 (k + 1) each) and ``coefficients`` ((len(n_knots) - kx - 1) (len(M_knots) - ky - 1)
  of them), all finite;
* ``kappa_1``, ``kappa_2`` (numbers or null), ``escalation_factor`` (> 0), ``min_excess``
  (s), ``receives`` (``sequential`` or ``posted``);
* ``one_to_many``: ``n``, ``sizes``, ``time`` (s or null, one row per n of one value per
  size) and ``S`` (bytes or null).

The validated section is a plain dict with the same keys (numbers as floats, sizes as
ints), as the readers expect.
"""

from __future__ import annotations

from typing import Any

from ..units import MAX_SECONDS
from .fields import (
    At,
    choice,
    integer,
    mapping,
    node_count,
    number,
    number_list,
    same_length,
    seconds,
    seconds_per_byte,
    size,
)

# FITPACK's spline degrees.
MAX_DEGREE = 5
RECEIVES = ("sequential", "posted")


def _finite(at: At, value: Any) -> float:
    if isinstance(value, str):
        raise at.error(f"must be a number, got {value[:40]!r}")
    return number(at, value, float, "a number")


def _signed_seconds(at: At, value: Any) -> float:
    """A time that a fit may give with either sign (a line's intercept), within the
    engine's range either way."""
    if isinstance(value, str):
        raise at.error(f"must be a time in seconds, got {value[:40]!r}")
    parsed = number(at, value, float, "a time in seconds")
    if abs(parsed) > MAX_SECONDS:
        raise at.error(f"must be within +-{MAX_SECONDS:.7e} seconds, got {parsed:g}")
    return parsed


def _increasing(at: At, values: list[Any]) -> list[Any]:
    for i in range(1, len(values)):
        if values[i] <= values[i - 1]:
            raise at.index(i).error(
                f"must be strictly increasing: got {values[i]} after {values[i - 1]}"
            )
    return values


def _counts(at: At, value: Any) -> list[int]:
    return _increasing(at, number_list(at, value, lambda a, v: node_count(a, v, 2)))


def _sizes(at: At, value: Any) -> list[int]:
    return _increasing(at, number_list(at, value, size))


def _size_or_none(at: At, value: Any) -> int | None:
    return size(at, value, allow_none=True)


def _surface(at: At, value: Any) -> dict[str, Any]:
    data = mapping(at, value, required=("kx", "ky", "n_knots", "M_knots", "coefficients"))
    kx = integer(at.key("kx"), data["kx"], 1, MAX_DEGREE)
    ky = integer(at.key("ky"), data["ky"], 1, MAX_DEGREE)
    knots = {}
    for key, k in (("n_knots", kx), ("M_knots", ky)):
        values = number_list(at.key(key), data[key], _finite, min_len=2 * (k + 1))
        for i in range(1, len(values)):
            if values[i] < values[i - 1]:
                raise (
                    at.key(key)
                    .index(i)
                    .error(f"knots must not decrease: got {values[i]:g} after {values[i - 1]:g}")
                )
        knots[key] = values
    coefficients = number_list(at.key("coefficients"), data["coefficients"], _finite)
    want = (len(knots["n_knots"]) - kx - 1) * (len(knots["M_knots"]) - ky - 1)
    if len(coefficients) != want:
        raise at.key("coefficients").error(
            f"has {len(coefficients)} values; knots of {len(knots['n_knots'])} and "
            f"{len(knots['M_knots'])} values at degrees {kx}, {ky} need {want}"
        )
    return {"kx": kx, "ky": ky, **knots, "coefficients": coefficients}


def _per_n(at: At, data: dict, key: str, item: Any, ns_at: At, ns: list[int] | None) -> list:
    values = number_list(at.key(key), data[key], item)
    if ns is None:
        raise ns_at.error(f"missing: {key} gives one value per process count n")
    same_length(at.key(key), values, ns_at, ns)
    return values


def _one_to_many(at: At, value: Any) -> dict[str, Any]:
    data = mapping(at, value, optional=("n", "sizes", "time", "S"))
    out: dict[str, Any] = {}
    if data.get("n") is not None:
        out["n"] = _counts(at.key("n"), data["n"])
    if data.get("sizes") is not None:
        out["sizes"] = _sizes(at.key("sizes"), data["sizes"])
    if data.get("time") is not None:
        if "n" not in out or "sizes" not in out:
            raise at.key("time").error("needs n and sizes (one row per n, one value per size)")
        rows = number_list(
            at.key("time"),
            data["time"],
            lambda a, row: number_list(a, row, lambda b, v: None if v is None else seconds(b, v)),
        )
        same_length(at.key("time"), rows, at.key("n"), out["n"])
        for i, row in enumerate(rows):
            same_length(at.key("time").index(i), row, at.key("sizes"), out["sizes"])
        out["time"] = rows
    if "S" in data:
        out["S"] = _size_or_none(at.key("S"), data["S"])
    return out


def validate_many_to_one(at: At, value: Any) -> dict[str, Any]:
    """The ``many_to_one`` section (see the module documentation)."""
    data = mapping(
        at,
        value,
        optional=(
            "root",
            "n",
            "sizes",
            "linear",
            "M1",
            "Mc",
            "M2",
            "levels",
            "probability",
            "kappa_1",
            "kappa_2",
            "escalation_factor",
            "min_excess",
            "receives",
            "one_to_many",
        ),
    )
    out: dict[str, Any] = {}
    ns_at = at.key("n")
    ns = None
    if data.get("root") is not None:
        out["root"] = node_count(at.key("root"), data["root"], 0)
    if data.get("n") is not None:
        ns = out["n"] = _counts(ns_at, data["n"])
    if data.get("sizes") is not None:
        out["sizes"] = _sizes(at.key("sizes"), data["sizes"])
    if data.get("linear") is not None:
        lat = at.key("linear")
        line = mapping(lat, data["linear"], required=("intercept", "slope"))
        out["linear"] = {
            "intercept": _per_n(lat, line, "intercept", _signed_seconds, ns_at, ns),
            "slope": _per_n(lat, line, "slope", seconds_per_byte, ns_at, ns),
        }
    for key in ("M1", "Mc"):
        if data.get(key) is not None:
            out[key] = _per_n(at, data, key, _size_or_none, ns_at, ns)
    if "M2" in data:
        out["M2"] = _size_or_none(at.key("M2"), data["M2"])
    if data.get("levels") is not None:
        out["levels"] = number_list(at.key("levels"), data["levels"], seconds, min_len=0)
    if data.get("probability") is not None:
        pat = at.key("probability")
        surfaces = number_list(pat, data["probability"], _surface, min_len=0)
        if surfaces and len(surfaces) != len(out.get("levels", [])):
            raise pat.error(
                f"has {len(surfaces)} surfaces but levels has {len(out.get('levels', []))}; "
                "give one surface f_i(n, M) per level"
            )
        out["probability"] = surfaces
    for key in ("kappa_1", "kappa_2"):
        if key in data:
            out[key] = None if data[key] is None else _finite(at.key(key), data[key])
    if data.get("escalation_factor") is not None:
        factor = _finite(at.key("escalation_factor"), data["escalation_factor"])
        if factor <= 0:
            raise at.key("escalation_factor").error(f"must be > 0, got {factor:g}")
        out["escalation_factor"] = factor
    if data.get("min_excess") is not None:
        out["min_excess"] = seconds(at.key("min_excess"), data["min_excess"])
    if data.get("receives") is not None:
        out["receives"] = choice(at.key("receives"), data["receives"], RECEIVES, "receives")
    if data.get("one_to_many") is not None:
        out["one_to_many"] = _one_to_many(at.key("one_to_many"), data["one_to_many"])
    return out
