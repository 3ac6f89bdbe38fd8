"""``clawctx report``: the HTML page of one generated session, per benchmark size, with the page's
size in ``extra_info`` (it must stay under 1 MB at every size, 100 MB included).

Smoke mode: 1 MB. ``CLAWCTX_BENCH_FULL=1``: 1, 10 and 100 MB (the damaged variant: skipped
lines, compactions, branches and unpaired calls all on the page).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from benches.generate import GeneratedSession, format_size

pytest.importorskip("matplotlib", reason="the report extra (matplotlib) is not installed")

from clawctx.report import session_page, session_stats

PAGE_LIMIT = 1_000_000


def test_session_report(benchmark: Any, damaged_session: GeneratedSession) -> None:
    benchmark.group = f"report {format_size(damaged_session.target)}"
    # matplotlib's import (about a second) is paid once per process, not per page.
    import matplotlib.backends.backend_svg
    import matplotlib.figure  # noqa: F401

    timings: dict[str, float] = {}

    def report() -> str:
        # Wall and CPU time of each half: on a shared machine CPU time is the steadier number.
        start, start_cpu = time.perf_counter(), time.process_time()
        stats = session_stats(damaged_session.path)
        gathered, gathered_cpu = time.perf_counter(), time.process_time()
        page = session_page(stats)
        timings["stats_s"] = gathered - start
        timings["stats_cpu_s"] = gathered_cpu - start_cpu
        timings["render_s"] = time.perf_counter() - gathered
        timings["render_cpu_s"] = time.process_time() - gathered_cpu
        return page

    page = benchmark.pedantic(report, rounds=1, iterations=1)
    size = len(page.encode("utf-8"))
    benchmark.extra_info.update(
        scenario="report",
        impl="clawctx",
        size_bytes=damaged_session.size,
        page_bytes=size,
        **timings,
    )
    assert size <= PAGE_LIMIT
    assert 'data-stat="damaged-lines" data-value="0"' not in page
