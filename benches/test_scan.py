"""Scanning many session files: `scan_sessions` on one worker and on two (the machine's cores),
the streamed `iter_sessions` (what `clawctx scan --jobs 2` runs) and a plain-Python loop that
does less (orjson per line, counts and chars/4 by role over every message, no leaf context, no
pairing), in one run so the speed-ups are visible (target at least 1.8x on 2 cores).

Smoke mode: 8 files of 1 MB. ``CLAWCTX_BENCH_FULL=1``: 16 files of 10 MB.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

import clawctx
from benches.generate import generate_session
from clawctx.history import iter_sessions

FULL = os.environ.get("CLAWCTX_BENCH_FULL") == "1"
FILES, SIZE = (16, 10_000_000) if FULL else (8, 1_000_000)


@pytest.fixture(scope="module")
def session_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    directory = tmp_path_factory.mktemp("scan")
    return [generate_session(directory / f"s{i}.jsonl", SIZE, seed=i).path for i in range(FILES)]


@pytest.mark.parametrize("workers", [1, 2])
def test_scan_sessions(benchmark: Any, session_files: list[Path], workers: int) -> None:
    benchmark.group = f"scan {FILES} x {SIZE // 1_000_000} MB"
    summaries = benchmark(clawctx.scan_sessions, session_files, workers=workers)
    assert [s.error for s in summaries] == [None] * FILES
    assert all(s.context_messages > 0 for s in summaries)


def test_iter_sessions_jobs_2(benchmark: Any, session_files: list[Path]) -> None:
    benchmark.group = f"scan {FILES} x {SIZE // 1_000_000} MB"
    records = benchmark(lambda: [r.to_dict() for r in iter_sessions(session_files, jobs=2)])
    assert [r["error"] for r in records] == [None] * FILES
    assert all(int(r["estimated_tokens"]) > 0 for r in records)


def _chars(message: dict[str, Any]) -> int:
    content = message.get("content")
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict):
            for key in ("text", "thinking"):
                value = block.get(key)
                if isinstance(value, str):
                    total += len(value)
            if block.get("type") == "toolCall":
                total += len(orjson.dumps(block.get("arguments")))
    return total


def python_scan(paths: list[Path]) -> list[dict[str, Any]]:
    """The plain-Python loop: one file after another, every line parsed."""
    records = []
    for path in paths:
        record: dict[str, Any] = {"path": str(path), "entries": 0, "damaged": 0, "tokens": {}}
        with open(path, "rb") as f:
            for line in f:
                try:
                    entry = orjson.loads(line)
                except orjson.JSONDecodeError:
                    record["damaged"] += 1
                    continue
                if entry.get("type") == "session":
                    continue
                record["entries"] += 1
                message = entry.get("message")
                if isinstance(message, dict):
                    role = message.get("role")
                    tokens = record["tokens"]
                    tokens[role] = tokens.get(role, 0) + (_chars(message) + 3) // 4
        records.append(record)
    return records


def test_plain_python_loop(benchmark: Any, session_files: list[Path]) -> None:
    benchmark.group = f"scan {FILES} x {SIZE // 1_000_000} MB"
    records = benchmark(python_scan, session_files)
    assert len(records) == FILES and all(r["entries"] > 0 for r in records)
