"""Adapter registry, JSON-value comparison and the case runner of the conformance suite."""

from __future__ import annotations

import contextlib
import difflib
import json
import logging
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from . import _api

# Determinism shims of the recording (see the conformance README).
CLOCK_MS = 1767225600000

Adapter = Callable[[Any, Any], Any]
ADAPTERS: dict[str, Adapter] = {}


def adapter(fn: str) -> Callable[[Adapter], Adapter]:
    """Registers the adapter of one recorded upstream function: ``(input, params) -> actual``."""

    def register(func: Adapter) -> Adapter:
        assert fn not in ADAPTERS, fn
        ADAPTERS[fn] = func
        return func

    return register


@dataclass(frozen=True)
class Missing:
    """A field of upstream's result that clawctx does not report (why is in ``reason``).

    When every other field matches, the case fails with ``NotImplementedError(reason)``.
    """

    reason: str


@dataclass(frozen=True)
class NullOrUndefined:
    """A top-level field that is Python ``None``, where upstream may answer JS ``null`` or
    ``undefined`` (a missing key): Python has one "no value", so either matches."""


NULL_OR_UNDEFINED = NullOrUndefined()


def none_as_null_or_undefined(value: Any) -> Any:
    """The value, or the :class:`NullOrUndefined` marker for ``None``."""
    return NULL_OR_UNDEFINED if value is None else value


def uuid_ids() -> Callable[[], str]:
    """The recording's ``crypto.randomUUID`` counter: 00000001-0000-4000-8000-000000000000, ..."""
    counter = iter(range(1, 1 << 31))
    return lambda: f"{next(counter):08x}-0000-4000-8000-000000000000"


def short_ids() -> Callable[[], str]:
    """pi's migration ids, ``randomUUID().slice(0, 8)`` of that counter: 00000001, ..."""
    counter = iter(range(1, 1 << 31))
    return lambda: f"{next(counter):08x}"


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


_LEVELS = {logging.DEBUG: "debug", logging.INFO: "info", logging.WARNING: "warn"}


@contextlib.contextmanager
def captured_logs() -> Iterator[list[dict[str, str]]]:
    """What clawctx logs while the block runs, as ``[{level, message}]`` (upstream's names)."""
    logger = logging.getLogger(_api.LOGGER_NAME)
    handler = _Records()
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    out: list[dict[str, str]] = []
    try:
        yield out
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        out.extend(
            {"level": _LEVELS.get(r.levelno, r.levelname.lower()), "message": r.getMessage()}
            for r in handler.records
        )


def to_json(value: Any) -> Any:
    """A clawctx result as ``JSON.stringify`` would write it, parsed back.

    Tuples become lists, NaN and infinities become null; everything else must already be a
    JSON value (``Missing`` markers are kept for the comparison).
    """
    if (
        isinstance(value, Missing | NullOrUndefined)
        or value is None
        or isinstance(value, (bool, int, str))
    ):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def json_equal(expected: Any, actual: Any) -> bool:
    """Equality of parsed JSON values: booleans never equal numbers, 1 equals 1.0."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is bool and type(actual) is bool and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return expected == actual
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            json_equal(expected[k], actual[k]) for k in expected
        )
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            json_equal(e, a) for e, a in zip(expected, actual, strict=True)
        )
    return type(expected) is type(actual) and expected == actual


def _missing_fields(actual: Any) -> dict[str, Missing]:
    if not isinstance(actual, dict):
        return {}
    return {k: v for k, v in actual.items() if isinstance(v, Missing)}


def dump(value: Any) -> str:
    """Readable, terminal-safe JSON (lone surrogates escaped)."""
    text = json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False, default=repr)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _safe(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def flat_lines(value: Any, path: str = "$") -> list[str]:
    """One line per JSON leaf (``path = value``); multi-line strings one line per text line
    (``path | line``), so a diff shows the differing line of a long prompt."""
    if isinstance(value, dict):
        if not value:
            return [f"{path} = {{}}"]
        return [line for k in sorted(value) for line in flat_lines(value[k], f"{path}.{k}")]
    if isinstance(value, list):
        if not value:
            return [f"{path} = []"]
        return [line for i, v in enumerate(value) for line in flat_lines(v, f"{path}[{i}]")]
    if isinstance(value, str) and "\n" in value:
        return [
            f"{path} | {_safe(json.dumps(line, ensure_ascii=False)[1:-1])}"
            for line in value.split("\n")
        ]
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # JavaScript prints 1.0 as 1
    return [f"{path} = {_safe(json.dumps(value, ensure_ascii=False, default=repr))}"]


def diff(expected: Any, actual: Any, limit: int = 40) -> str:
    """A unified diff of the flattened values (expected is upstream, actual is clawctx)."""
    lines = list(
        difflib.unified_diff(
            flat_lines(expected),
            flat_lines(actual),
            "expected (upstream)",
            "actual (clawctx)",
            lineterm="",
            n=1,
        )
    )
    if len(lines) > limit:
        lines = [*lines[:limit], f"... ({len(lines) - limit} more diff lines)"]
    return "\n".join(lines)


class Mismatch(AssertionError):
    pass


def _read_unchanged(case: Mapping[str, Any], expected: Any, actual: Any) -> Any:
    """The ``unchanged`` rule: upstream's ``unchanged`` says whether it returned its input array
    itself, clawctx's whether it returned the given Transcript itself. Transcripts are
    immutable, so returning the given one is observably the same as returning a fresh equal
    copy: when upstream reports ``unchanged: false`` with messages equal to the case's input
    messages, a clawctx ``unchanged: true`` counts as false (the messages are still compared).
    Upstream's ``unchanged: true`` still requires clawctx to report no change.
    """
    if not (isinstance(expected, dict) and isinstance(actual, dict)):
        return actual
    given = case["input"].get("messages") if isinstance(case["input"], dict) else None
    if (
        expected.get("unchanged") is False
        and actual.get("unchanged") is True
        and "messages" in expected
        and given is not None
        and json_equal(expected["messages"], given)
    ):
        return {**actual, "unchanged": False}
    return actual


def check(case: Mapping[str, Any]) -> None:
    """Runs one case through its adapter and raises unless clawctx matches upstream.

    ``{"throws": ...}`` expects any clean ``Exception`` (a Rust ``PanicException`` is a
    ``BaseException`` and propagates). ``NotImplementedError`` from an adapter never matches.
    """
    fn = case["fn"]
    run = ADAPTERS.get(fn)
    if run is None:
        raise NotImplementedError(f"no adapter for {fn}")
    expected = case["expected"]
    if isinstance(expected, dict) and set(expected) == {"throws"}:
        try:
            actual = run(case["input"], case["params"])
        except NotImplementedError:
            raise
        except Exception:
            return
        raise Mismatch(f"upstream throws {expected['throws']}, clawctx returned {dump(actual)}")
    actual = _read_unchanged(case, expected, to_json(run(case["input"], case["params"])))
    if isinstance(actual, dict):
        for key in [k for k, v in actual.items() if isinstance(v, NullOrUndefined)]:
            if key in expected:
                actual[key] = None
            else:
                del actual[key]
    missing = _missing_fields(actual)
    if missing:
        present = {k: v for k, v in actual.items() if k not in missing}
        wanted = {k: v for k, v in expected.items() if k not in missing}
        if not json_equal(wanted, present):
            raise Mismatch(diff(wanted, present))
        if any(k in expected for k in missing):
            reasons = sorted({m.reason for k, m in missing.items() if k in expected})
            raise NotImplementedError("; ".join(reasons))
        return
    if not json_equal(expected, actual):
        raise Mismatch(diff(expected, actual))


def undefined_or_value(value: Any) -> dict[str, Any]:
    """``{"undefined": true}`` for None, else ``{"value": v}`` (the recording's convention)."""
    return {"undefined": True} if value is None else {"value": value}
