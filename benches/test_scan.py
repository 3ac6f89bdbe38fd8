"""scan_sessions: many session files summarized on one worker and on two (the machine's
cores), in one run, so the parallel speed-up is visible (target at least 1.8x on 2 cores).

Smoke mode: 8 files of 1 MB. ``CLAWCTX_BENCH_FULL=1``: 16 files of 10 MB.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import clawctx
from benches.generate import generate_session

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
