"""``clawctx cache`` on a generated session (issue 31 target: 100 MB in under 10 s).

``clawctx.engine.cache_report`` over the benchmark sessions (1 MB; 10 MB and 100 MB with
``CLAWCTX_BENCH_FULL=1``): every assistant turn's request rebuilt for the model recorded on it
and compared with the previous one.
"""

from __future__ import annotations

from typing import Any

from benches.generate import GeneratedSession
from clawctx.engine import cache_report


def test_cache_report(benchmark: Any, session: GeneratedSession) -> None:
    report = benchmark.pedantic(cache_report, args=(session.path,), rounds=1, iterations=1)
    assert report.turns
