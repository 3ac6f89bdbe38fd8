"""Smoke run of ``benches/memory.py`` (peak RSS of open + context and of repair, each in a
fresh interpreter) at the smoke size; the 100 MB numbers are in benches/README.md."""

from __future__ import annotations

from pathlib import Path

from benches.memory import CRAFTED_SHAPES, measure_crafted, measure_memory, table


def test_memory_rows(tmp_path: Path) -> None:
    rows = measure_memory(1_000_000, tmp_path)
    assert [r.what for r in rows][:2] == ["clawctx open + context", "reference open + context"]
    assert len(rows) == 6
    assert all(r.peak_rss >= r.baseline_rss > 0 for r in rows)
    assert "peak RSS" in table(rows)


def test_crafted_rows(tmp_path: Path) -> None:
    rows = measure_crafted(20_000, tmp_path)
    assert [r.what for r in rows] == [f"clawctx open, {shape}" for shape in CRAFTED_SHAPES]
    assert all(r.peak_rss >= r.baseline_rss > 0 for r in rows)
    assert (
        rows[0].file_bytes
        == len(b"{}\n") * 20_000 + (tmp_path / rows[0].file).read_bytes().index(b"\n") + 1
    )
