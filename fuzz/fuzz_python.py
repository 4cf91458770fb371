"""Fuzz the Python layer for a time budget with Hypothesis: GOAL text through
``commodel.parse_goal``/``predict``, platform YAML through ``load_platform`` and
``platform_from_dict`` (then ``predict`` under every model the platform has sections for),
the cluster spec loader, and the ``commodel predict`` command in-process.

    python fuzz/fuzz_python.py [SECONDS] [ARTIFACT_DIR]

An input may succeed or raise a ``CommodelError``; anything else (another exception, a
CLI exit code other than 0 and 2) is a failure, written to ARTIFACT_DIR (default
``fuzz/artifacts``). Prints the number of inputs per target; exits 1 on a failure.
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from commodel import parse_goal, predict
from commodel.cli.main import main as cli_main
from commodel.cluster.spec import load_spec, parse_spec
from commodel.errors import CommodelError
from commodel.platform import MODELS, load_platform, platform_from_dict

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
GOALS = sorted((EXAMPLES / "schedules").glob("*.goal")) + sorted(
    (ROOT / "fuzz" / "cases").glob("*.goal")
)
PLATFORMS = sorted((EXAMPLES / "platforms").glob("*.yaml"))
CLUSTERS = sorted((EXAMPLES / "clusters").glob("*.yaml"))

SHOWN = 300  # characters of an input or message kept in a report


def dictionary(path: Path) -> list[str]:
    """The tokens of a libFuzzer dictionary (one quoted token a line, \\xNN escapes)."""
    tokens = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if len(line) >= 2 and line[0] == line[-1] == '"':
            raw = line[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
            tokens.append(raw.encode("latin-1").decode("utf-8", "surrogateescape"))
    return tokens


GOAL_TOKENS = dictionary(ROOT / "fuzz" / "goal.dict")
YAML_VALUES = [
    "0",
    "-1",
    "1e300",
    "1e-300",
    "-1e-12",
    ".nan",
    ".inf",
    "-.inf",
    "null",
    "true",
    "[]",
    "{}",
    "[1, 2, 3]",
    "[0, -5]",
    "''",
    "64Kb",
    "64KiB",
    "1Gbit",
    "10Mbit",
    "2**64",
    "99999999999999999999999",
    "18446744073709551616",
    "0x10",
    "1_000",
    "'5'",
    "*a",
    "&a 1",
    "!!binary aGVsbG8=",
    "[[[[[[1]]]]]]",
    "- 1",
    "a: b",
    "1s",
    "1ms",
    "nan",
]


def mutate_text(text: str, draw: Callable[[Any], Any], pieces: list[str]) -> str:
    """Apply one to three edits: replace a value, insert, delete or duplicate a slice,
    swap two lines, or drop a line."""
    for _ in range(draw(st.integers(1, 3))):
        n = len(text)
        at = draw(st.integers(0, n))
        end = min(n, at + draw(st.integers(0, 40)))
        kind = draw(st.integers(0, 5))
        if kind == 0:
            # Replace the value after a ':' (YAML) or a number (GOAL) with another.
            colon = text.find(":", at)
            if colon >= 0:
                eol = text.find("\n", colon)
                eol = n if eol < 0 else eol
                text = text[: colon + 1] + " " + draw(st.sampled_from(pieces)) + text[eol:]
        elif kind == 1:
            text = text[:at] + draw(st.sampled_from(pieces)) + text[at:]
        elif kind == 2:
            text = text[:at] + text[end:]
        elif kind == 3:
            text = text[:at] + text[at:end] + text[at:]
        elif kind == 4:
            lines = text.split("\n")
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        else:
            text = text[:at] + draw(st.text(max_size=8)) + text[at:]
    return text


def mutated(files: list[Path], pieces: list[str]) -> st.SearchStrategy[str]:
    texts = [f.read_text(encoding="utf-8") for f in files]

    @st.composite
    def strategy(draw: Callable[[Any], Any]) -> str:
        return mutate_text(draw(st.sampled_from(texts)), draw, pieces)

    return st.one_of(
        strategy(),
        st.lists(st.sampled_from(pieces), max_size=40).map("".join),
        st.text(max_size=200),
    )


# Values a structured mutation puts at one place of a valid YAML document.
LEAVES: list[Any] = [
    0,
    -1,
    1e300,
    1e8,
    -1e-12,
    1e-300,
    float("nan"),
    float("inf"),
    None,
    True,
    False,
    [],
    {},
    [1, 2, 3],
    [0, -5],
    "",
    "64Kb",
    "64KiB",
    "1Gbit",
    "10Mbit",
    "5us",
    "nan",
    "binary-tree",
    2**64,
    2**63,
    10**23,
    "x" * 300,
    [[[[1]]]],
    {"a": 1},
    [1e300],
    [0, 0, 0],
    [3, 2, 1],
]


def places(data: Any, path: tuple = ()) -> list[tuple]:
    """Every path to a value in nested dicts and lists."""
    out = [path]
    if isinstance(data, dict):
        for key, value in data.items():
            out += places(value, path + (key,))
    elif isinstance(data, list):
        for k, value in enumerate(data):
            out += places(value, path + (k,))
    return out


def replaced(data: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        return {**data, head: replaced(data[head], rest, value)}
    return [replaced(v, rest, value) if k == head else v for k, v in enumerate(data)]


def leaf_mutated(files: list[Path]) -> st.SearchStrategy[str]:
    """Valid YAML files with one to three values replaced, a key dropped or added."""
    import yaml

    docs = [yaml.safe_load(f.read_text(encoding="utf-8")) for f in files]

    @st.composite
    def strategy(draw: Callable[[Any], Any]) -> str:
        # Uniform choices (Hypothesis prefers the first places, the whole document).
        rng = draw(st.randoms(use_true_random=True))
        data = rng.choice(docs)
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            path = rng.choice(places(data)[1:])
            kind = rng.randrange(6)
            parent = path[:-1]
            container = data
            for key in parent:
                container = container[key]
            if kind == 0 and isinstance(container, dict):
                # Drop the key.
                data = replaced(data, parent, {k: v for k, v in container.items() if k != path[-1]})
            elif kind == 1 and isinstance(container, dict):
                # Add a key beside it.
                key = rng.choice(["extra", "b", "d", "L", "rate", "nodes", "S", "levels"])
                data = replaced(data, parent, {**container, key: rng.choice(LEAVES)})
            else:
                data = replaced(data, path, rng.choice(LEAVES))
        return yaml.safe_dump(data, sort_keys=False)

    return strategy()


SMALL = None  # a small valid schedule for platform predictions, parsed lazily


def small_schedule() -> Any:
    global SMALL
    if SMALL is None:
        SMALL = parse_goal(
            "num_ranks 4\nrank 0 {\na: send 1000b to 1\nb: recv 10b from 3\n}\n"
            "rank 1 {\nc: recv 1000b from 0\nd: send 70000b to 2\nd requires c\n}\n"
            "rank 2 {\ne: recv 70000b from 1\n}\nrank 3 {\nf: send 10b to 0\n}\n"
        )
    return SMALL


def predict_every_model(schedule: Any, platform: Any) -> None:
    for name, spec in MODELS.items():
        if all(s in platform.sections for s in spec.sections):
            with contextlib.suppress(CommodelError):
                predict(schedule, platform, model=name)


def goal_target(text: str) -> None:
    schedule = parse_goal(text, "fuzz.goal")
    for platform in BUILTINS:
        predict_every_model(schedule, platform)


def platform_yaml_target(text: str) -> None:
    PLATFORM_FILE.write_text(text, encoding="utf-8", errors="surrogatepass")
    platform = load_platform(PLATFORM_FILE)
    predict_every_model(small_schedule(), platform)


yaml_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=12),
    st.sampled_from(["64KiB", "1Gbit", "binary-tree", "racks", "crossbar", "5us"]),
)
yaml_values = st.recursive(
    yaml_leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(
            st.sampled_from(
                [
                    "L",
                    "o",
                    "g",
                    "G",
                    "O",
                    "S",
                    "sizes",
                    "o_s",
                    "o_r",
                    "b",
                    "d",
                    "nodes",
                    "topology",
                    "rate",
                    "type",
                    "levels",
                    "hosts",
                    "racks",
                    "nic",
                    "efficiency",
                    "exchange",
                    "duplex",
                    "fanin",
                    "peers",
                    "e",
                    "rto_rule",
                    "buffer",
                    "bucket",
                    "escalation",
                    "x",
                ]
            ),
            inner,
            max_size=5,
        ),
    ),
    max_leaves=20,
)


@st.composite
def platform_dicts(draw: Callable[[Any], Any]) -> Any:
    base: dict[str, Any] = {"commodel_platform": 1, "name": "fuzz", "nodes": 4}
    for section in draw(
        st.lists(
            st.sampled_from(
                ["loggops", "plogp", "hockney", "network", "tcp", "incast", "lmo", "cpu", "x"]
            ),
            max_size=4,
        )
    ):
        base[section] = draw(yaml_values)
    if draw(st.booleans()):
        base[draw(st.sampled_from(list(base)))] = draw(yaml_values)
    return base


def platform_dict_target(data: Any) -> None:
    platform = platform_from_dict(data, "fuzz.yaml")
    predict_every_model(small_schedule(), platform)


def cluster_yaml_target(text: str) -> None:
    CLUSTER_FILE.write_text(text, encoding="utf-8", errors="surrogatepass")
    load_spec(CLUSTER_FILE)


def cluster_dict_target(data: Any) -> None:
    parse_spec(data, "fuzz-cluster.yaml")


def cli_target(args: tuple[str, str]) -> None:
    goal, model = args
    GOAL_FILE.write_text(goal, encoding="utf-8", errors="surrogatepass")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli_main(["predict", str(GOAL_FILE), "-p", "nomura2007", "--model", model])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    if code not in (0, 2) or "Traceback" in err.getvalue():
        raise AssertionError(f"exit {code}: {err.getvalue()[-SHOWN:]}")


class Target:
    def __init__(self, name: str, strategy: st.SearchStrategy[Any], fn: Callable[[Any], None]):
        self.name, self.strategy, self.fn = name, strategy, fn
        self.runs = 0
        self.failures: list[tuple[Any, str]] = []

    def run_one(self, value: Any) -> None:
        self.runs += 1
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.fn(value)
        except CommodelError:
            pass
        except Exception as exc:  # noqa: BLE001 - every other exception is the finding
            where = traceback.extract_tb(exc.__traceback__)[-1]
            self.failures.append(
                (
                    value,
                    f"{type(exc).__name__}: {str(exc)[:SHOWN]} at {where.filename}:{where.lineno}",
                )
            )

    def run(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds

        @settings(
            max_examples=500,
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(self.strategy)
        def chunk(value: Any) -> None:
            if time.monotonic() < deadline:
                self.run_one(value)

        while time.monotonic() < deadline:
            chunk()


def main() -> int:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    artifacts = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "fuzz" / "artifacts"
    goal_texts = mutated(GOALS, GOAL_TOKENS)
    targets = [
        Target("goal text -> parse_goal -> predict (every model)", goal_texts, goal_target),
        Target(
            "platform YAML -> load_platform -> predict",
            mutated(PLATFORMS, YAML_VALUES),
            platform_yaml_target,
        ),
        Target(
            "platform dict -> platform_from_dict -> predict", platform_dicts(), platform_dict_target
        ),
        Target(
            "cluster spec YAML -> load_spec", mutated(CLUSTERS, YAML_VALUES), cluster_yaml_target
        ),
        Target(
            "cluster spec dict -> parse_spec",
            st.dictionaries(
                st.sampled_from(
                    [
                        "commodel_cluster",
                        "name",
                        "hosts",
                        "topology",
                        "buffers",
                        "tcp",
                        "mtu",
                        "description",
                    ]
                ),
                yaml_values,
                max_size=8,
            ),
            cluster_dict_target,
        ),
        Target(
            "commodel predict FILE (CLI, in-process)",
            st.tuples(goal_texts, st.sampled_from(sorted(MODELS) + ["all", "nope"])),
            cli_target,
        ),
    ]
    shares = [3, 2, 2, 1, 1, 1]
    for target, share in zip(targets, shares):
        target.run(seconds * share / sum(shares))
    total = 0
    failed = 0
    for target in targets:
        total += target.runs
        print(f"fuzz_python: {target.name}: {target.runs} inputs, {len(target.failures)} failures")
        if target.failures:
            artifacts.mkdir(parents=True, exist_ok=True)
        for k, (value, why) in enumerate(target.failures):
            failed += 1
            path = artifacts / f"python-{target.name.split()[0]}-{target.name.split()[1]}-{k}.txt"
            path.write_text(f"{why}\n---\n{value!r}\n", encoding="utf-8", errors="replace")
            if k < 5:
                print(f"  {why}\n    input: {repr(value)[:SHOWN]}")
    print(f"fuzz_python: {total} inputs in {seconds:g} s, {failed} failures")
    return 1 if failed else 0


TMP = Path(tempfile.mkdtemp(prefix="commodel-fuzz-"))
PLATFORM_FILE = TMP / "fuzz-platform.yaml"
CLUSTER_FILE = TMP / "fuzz-cluster.yaml"
GOAL_FILE = TMP / "fuzz.goal"
BUILTINS = [load_platform("nomura2007"), load_platform("loggopsim-default")]

if __name__ == "__main__":
    sys.exit(main())
