"""(b) The full per-request pipeline, file → serialized messages: open, context, pairing
repair, history limit, token estimates, pruning, serialization (``clawctx_pipeline`` and
``reference_pipeline``, which produce the same messages), against the orjson floor and the
floor below every floor: reading the file's bytes into memory. "clawctx from the end" gets the
context from ``read_leaf_context``, which reads only the end of the file the context needs
(its MB/s are the file's size over its time).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benches import clawctx_pipeline, reference_pipeline
from benches.conftest import measure
from benches.generate import GeneratedSession


def test_clawctx(benchmark: Any, session: GeneratedSession) -> None:
    data, tokens = measure(
        benchmark, "pipeline", "clawctx", session, clawctx_pipeline.run_pipeline, session.path
    )
    assert data.startswith(b"[") and len(tokens) > 0


def test_clawctx_from_the_end(benchmark: Any, session: GeneratedSession) -> None:
    data, tokens = measure(
        benchmark,
        "pipeline",
        "clawctx from the end",
        session,
        clawctx_pipeline.run_pipeline_from_end,
        session.path,
    )
    expected_data, expected_tokens = clawctx_pipeline.run_pipeline(session.path)
    assert data == expected_data and tokens.tolist() == expected_tokens.tolist()


def test_reference(benchmark: Any, session: GeneratedSession) -> None:
    result = measure(
        benchmark, "pipeline", "reference", session, reference_pipeline.run_pipeline, session.path
    )
    assert result.json.startswith(b"[") and len(result.token_counts) > 0


def test_orjson_floor(benchmark: Any, session: GeneratedSession) -> None:
    parsed = measure(
        benchmark,
        "pipeline",
        "orjson floor",
        session,
        reference_pipeline.orjson_floor,
        session.path,
    )
    assert parsed == session.lines


def read_bytes(path: Path) -> bytes:
    """What any implementation that reads the whole file pays at least."""
    return path.read_bytes()


def test_read_floor(benchmark: Any, session: GeneratedSession) -> None:
    data = measure(benchmark, "pipeline", "read bytes", session, read_bytes, session.path)
    assert len(data) == session.size
