"""Smoke run of ``benches/memory.py`` (peak RSS of open + context and of repair, each in a
fresh interpreter) at the smoke size; the 100 MB numbers are in benches/README.md."""

from __future__ import annotations

from pathlib import Path

from benches.memory import measure_memory, table


def test_memory_rows(tmp_path: Path) -> None:
    rows = measure_memory(1_000_000, tmp_path)
    assert [r.what for r in rows][:2] == ["clawctx open + context", "reference open + context"]
    assert len(rows) == 6
    assert all(r.peak_rss >= r.baseline_rss > 0 for r in rows)
    assert "peak RSS" in table(rows)
