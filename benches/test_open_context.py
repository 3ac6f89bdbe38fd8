"""(a) Cold open + context: read the file, parse and index it, build the leaf's context.

clawctx: ``Session.open(path, read_only=True).context().messages`` (a Rust-owned transcript);
"clawctx from the end": ``read_leaf_context(path).messages``, reading back only as far as the
context needs.
Reference: orjson per line, dict entries, buildSessionContext in Python (a list of dicts).
Floor: ``orjson.loads`` of every line, nothing else.

Each timed call returns only the number of context messages, so every implementation frees
what it built inside the timing (as the pipeline benchmarks do); otherwise pytest-benchmark
would keep the previous round's session alive during the next one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benches import clawctx_pipeline, reference_pipeline
from benches.conftest import measure
from benches.generate import GeneratedSession


def clawctx_open_context(path: Path) -> int:
    return len(clawctx_pipeline.open_context(path))


def reference_open_context(path: Path) -> int:
    return len(reference_pipeline.load_context(path))


def test_clawctx(benchmark: Any, session: GeneratedSession) -> None:
    count = measure(
        benchmark, "open+context", "clawctx", session, clawctx_open_context, session.path
    )
    assert count == len(reference_pipeline.load_context(session.path))


def clawctx_context_from_end(path: Path) -> int:
    return len(clawctx_pipeline.open_context_from_end(path))


def test_clawctx_from_the_end(benchmark: Any, session: GeneratedSession) -> None:
    count = measure(
        benchmark,
        "open+context",
        "clawctx from the end",
        session,
        clawctx_context_from_end,
        session.path,
    )
    assert count == len(reference_pipeline.load_context(session.path))


def test_reference(benchmark: Any, session: GeneratedSession) -> None:
    count = measure(
        benchmark, "open+context", "reference", session, reference_open_context, session.path
    )
    assert count > 0


def test_orjson_floor(benchmark: Any, session: GeneratedSession) -> None:
    parsed = measure(
        benchmark,
        "open+context",
        "orjson floor",
        session,
        reference_pipeline.orjson_floor,
        session.path,
    )
    assert parsed == session.lines
