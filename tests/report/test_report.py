"""``clawctx report``: the numbers on the page match the session, the page loads nothing from
the network, stays under 1 MB on a large session, and renders in a real browser."""

from __future__ import annotations

import re
import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benches.generate import generate_session
from clawctx import _core
from clawctx.cli import main
from clawctx.report import (
    MAX_CHART_POINTS,
    MAX_TABLE_ROWS,
    ContextSeries,
    ReportDependencyError,
    fleet_report,
    fleet_stats,
    session_page,
    session_report,
    session_stats,
)
from conftest import FIXTURES, write_jsonl

pytest.importorskip("matplotlib", reason="the report extra (matplotlib) is not installed")

T0 = "2026-01-01T00:00:00.000Z"
HOSTILE_TOOL = "<img src=x onerror=alert(1)>"


def _ts(second: int) -> str:
    return f"2026-01-01T00:00:{second:02d}.000Z"


def _entry(eid: str, parent: str | None, second: int, **fields: Any) -> dict[str, Any]:
    return {"id": eid, "parentId": parent, "timestamp": _ts(second), **fields}


def _message(eid: str, parent: str | None, second: int, message: dict[str, Any]) -> dict[str, Any]:
    return _entry(eid, parent, second, type="message", message={"timestamp": second, **message})


def _usage(total: int) -> dict[str, Any]:
    return {
        "input": total - 10,
        "output": 10,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": total,
    }


def _assistant(
    content: list[dict[str, Any]], usage: int | None, stop: str = "stop"
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "stopReason": stop,
    }
    if usage is not None:
        message["usage"] = _usage(usage)
    return message


def _call(call_id: str, name: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": {"path": "a.txt"}}


def _result(call_id: str, name: str, text: str) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
    }


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


SUMMARY = "The user asked for a file; it was read. " * 20


def crafted_entries() -> list[dict[str, Any]]:
    """A session whose every number is known: 4 assistant turns on the leaf path (two with a
    usable usage, one without usage, one errored), one compaction keeping e5 onward, one branch
    point (e9) with one abandoned entry, an unanswered call (c2), an orphan result (c99) and a
    tool whose name is HTML."""
    return [
        {"type": "session", "version": 3, "id": "sess-1", "timestamp": T0, "cwd": "/w"},
        _message("e1", None, 1, _user("hello")),
        _message(
            "e2", "e1", 2, _assistant([_call("c1", "read"), _call("c2", "bash")], 1000, "toolUse")
        ),
        _message("e3", "e2", 3, _result("c1", "read", "x" * 40_000)),
        _message("e4", "e3", 4, _assistant([{"type": "text", "text": "done"}], 12_000)),
        _message("e5", "e4", 5, _user("more please")),
        _message("e6", "e5", 6, _assistant([_call("c3", HOSTILE_TOOL)], None, "toolUse")),
        _message("e7", "e6", 7, _result("c3", HOSTILE_TOOL, "y" * 8_000)),
        _entry(
            "e8",
            "e7",
            8,
            type="compaction",
            summary=SUMMARY,
            firstKeptEntryId="e5",
            tokensBefore=13_000,
        ),
        _message("e9", "e8", 9, _user("after the compaction")),
        _message("e20", "e9", 10, _assistant([{"type": "text", "text": "abandoned"}], 50)),
        _message("e10", "e9", 11, _assistant([{"type": "text", "text": "oops"}], 99_999, "error")),
        _message("e11", "e10", 12, _result("c99", "grep", "z" * 400)),
    ]


@pytest.fixture
def crafted(tmp_path: Path) -> Path:
    path = write_jsonl(tmp_path / "crafted.jsonl", crafted_entries())
    # One damaged line in the middle (the loader skips it; repair would drop it).
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(5, '{"type":"message","id":"torn\n')
    path.write_text("".join(lines), encoding="utf-8")
    return path


class _Page(HTMLParser):
    """The facts of a report page: stats by key, table rows by name, chart names, raw tags."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.stats: dict[str, str] = {}
        self.tables: dict[str, list[list[str]]] = {}
        self.table_attrs: dict[str, dict[str, str]] = {}
        self.charts: list[str] = []
        self.tags: list[tuple[str, dict[str, str]]] = []
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.append((tag, a))
        if "data-stat" in a and "data-value" in a:
            self.stats[a["data-stat"]] = a["data-value"]
        if tag == "svg" and "data-chart" in a:
            self.charts.append(a["data-chart"])
        if tag == "table" and "data-table" in a:
            self._table = a["data-table"]
            self.tables[self._table] = []
            self.table_attrs[self._table] = a
        if "data-table" in a and tag == "p":
            self.tables[a["data-table"]] = []
            self.table_attrs[a["data-table"]] = a
        if tag == "tr" and self._table is not None:
            self._row = []
        if tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table is not None:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)


def _rows(page: _Page, name: str) -> list[list[str]]:
    # The first row of a table is its header.
    return page.tables[name][1:] if page.tables[name] else []


def _int(text: str) -> int:
    return int(text.replace(",", ""))


# ---- the numbers ---------------------------------------------------------------------------


def test_session_stats_match_the_crafted_session(crafted: Path) -> None:
    stats = session_stats(crafted, context_window=50_000)
    tokens = {
        name: _core.estimate_tokens(message)
        for name, message in (
            ("e1", _user("hello")),
            ("e3", _result("c1", "read", "x" * 40_000)),
            ("e5", _user("more please")),
            ("e6", _assistant([_call("c3", HOSTILE_TOOL)], None)),
            ("e7", _result("c3", HOSTILE_TOOL, "y" * 8_000)),
            ("e9", _user("after the compaction")),
            ("e10", _assistant([{"type": "text", "text": "oops"}], None)),
        )
    }
    summary = _core.estimate_tokens({"role": "compactionSummary", "summary": SUMMARY})
    series = stats.series
    assert series.total_turns == 4  # e2, e4, e6, e10 (e20 is on an abandoned branch)
    assert series.turns.tolist() == [1, 2, 3, 4]
    # Recorded where usable: e6 has none, e10 errored (pi ignores its usage).
    assert series.recorded[:2].tolist() == [1000.0, 12_000.0]
    assert np.isnan(series.recorded[2:]).all()
    assert series.recorded_turns == 2
    # After the compaction the context is its summary plus the entries kept from e5 on.
    assert series.estimated[3] == summary + sum(tokens[k] for k in ("e5", "e6", "e7", "e9", "e10"))
    assert series.compactions.tolist() == [3.5]  # between turn 3 (e6) and turn 4 (e10)
    assert series.branch_points.tolist() == [3.5]  # e9, after the compaction
    assert series.peak == max(12_000, int(series.estimated.max()))

    assert len(stats.compactions) == 1
    assert stats.compactions[0].tokens_before == 13_000
    assert stats.compactions[0].summary_tokens == summary
    assert [(b.entry_id, b.children) for b in stats.branch_points] == [("e9", 2)]
    assert stats.abandoned_entries == 1
    assert stats.tool_calls == 3 and stats.tool_results == 3
    assert [u.tool_call_id for u in stats.unpaired_calls] == ["c2"]
    assert [u.tool for u in stats.unpaired_calls] == ["bash"]
    assert [u.tool_call_id for u in stats.unpaired_results] == ["c99"]
    assert [r.tool for r in stats.largest_tool_results] == ["read", HOSTILE_TOOL, "grep"]
    assert stats.largest_tool_results[0].tokens == tokens["e3"] == 10_000
    assert stats.largest_tool_results[0].preview.startswith("xxxx")
    assert {t.name: t.tokens for t in stats.tokens_by_tool} == {
        "read": 10_000,
        HOSTILE_TOOL: 2_000,
        "grep": 100,
    }
    assert stats.tokens_by_role["toolResult"] == 12_100
    assert stats.messages_by_role == {"assistant": 5, "toolResult": 3, "user": 3}
    assert [(d.line, d.action) for d in stats.damaged_lines] == [(6, "skipped")]
    assert stats.models == {"anthropic/claude-sonnet-4-5": 5}
    assert (stats.first_activity, stats.last_activity) == (_ts(1), _ts(12))


def test_compaction_with_an_unknown_kept_entry_keeps_only_its_summary(tmp_path: Path) -> None:
    entries = crafted_entries()
    entries[8]["firstKeptEntryId"] = "not-an-entry"
    stats = session_stats(write_jsonl(tmp_path / "s.jsonl", entries))
    summary = _core.estimate_tokens({"role": "compactionSummary", "summary": SUMMARY})
    after = sum(
        _core.estimate_tokens(m)
        for m in (
            _user("after the compaction"),
            _assistant([{"type": "text", "text": "oops"}], None),
        )
    )
    assert stats.series.estimated[3] == summary + after


def test_session_page_shows_the_numbers(crafted: Path) -> None:
    stats = session_stats(crafted, context_window=50_000)
    page = _Page(session_page(stats))
    assert page.stats["compactions"] == "1"
    assert page.stats["branch-points"] == "1"
    assert page.stats["damaged-lines"] == "1"
    assert page.stats["unpaired"] == "2"
    assert page.stats["tool-calls"] == "3"
    assert page.stats["context-window"] == "50000"
    assert page.stats["turns"] == "4"
    assert page.stats["recorded-turns"] == "2"
    assert page.stats["estimated-tokens"] == str(stats.estimated_tokens)
    assert page.stats["peak-context"] == str(stats.series.peak)
    largest = _rows(page, "largest-tool-results")
    assert [row[1] for row in largest] == ["read", HOSTILE_TOOL, "grep"]
    assert [_int(row[2]) for row in largest] == [10_000, 2_000, 100]
    by_tool = {row[0]: _int(row[2]) for row in _rows(page, "tokens-by-tool")}
    assert by_tool == {"read": 10_000, HOSTILE_TOOL: 2_000, "grep": 100}
    by_role = {row[0]: _int(row[2]) for row in _rows(page, "tokens-by-role")}
    assert by_role == dict(stats.tokens_by_role)
    assert sum(by_role.values()) == stats.estimated_tokens
    assert [_int(r[2]) for r in _rows(page, "compactions")] == [13_000]
    assert [r[0] for r in _rows(page, "branch-points")] == ["e9"]
    assert [_int(r[0]) for r in _rows(page, "damaged-lines")] == [6]
    assert [r[0] for r in _rows(page, "unpaired-calls")] == ["c2"]
    assert [r[0] for r in _rows(page, "unpaired-results")] == ["c99"]
    assert page.charts == ["context", "cache", "roles", "tools"]


def test_strings_from_the_session_are_escaped(crafted: Path) -> None:
    text = session_report(crafted)
    assert HOSTILE_TOOL not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text
    assert not any(tag == "img" for tag, _ in _Page(text).tags)


def test_a_session_without_turns_still_renders(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "empty.jsonl",
        [{"type": "session", "version": 3, "id": "s", "timestamp": T0, "cwd": "/w"}],
    )
    stats = session_stats(path)
    assert stats.series.total_turns == 0 and stats.series.peak == 0
    page = _Page(session_page(stats))
    assert page.charts == ["context", "roles", "tools"]
    assert page.stats["turns"] == "0"
    assert page.table_attrs["largest-tool-results"]["data-rows"] == "0"


def test_tables_are_capped_and_say_how_many_there_are(tmp_path: Path) -> None:
    count = MAX_TABLE_ROWS + 7
    entries: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "s", "timestamp": T0, "cwd": "/w"}
    ]
    parent = None
    for i in range(count):
        eid = f"a{i}"
        calls = [_call(f"c{i}", "bash")]
        entries.append(_message(eid, parent, i % 60, _assistant(calls, 100 + i, "toolUse")))
        parent = eid
    text = session_report(write_jsonl(tmp_path / "many.jsonl", entries))
    page = _Page(text)
    assert page.stats["unpaired"] == str(count)
    assert page.table_attrs["unpaired-calls"]["data-total"] == str(count)
    assert len(_rows(page, "unpaired-calls")) == MAX_TABLE_ROWS
    assert f"Showing {MAX_TABLE_ROWS} of {count}." in text


def test_bad_arguments_raise(crafted: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="context_window"):
        session_stats(crafted, context_window=0)
    with pytest.raises(ValueError, match="top"):
        session_stats(crafted, top=0)
    with pytest.raises(FileNotFoundError):
        session_stats(tmp_path / "missing.jsonl")
    (tmp_path / "unknown.jsonl").write_text('{"hello": 1}\n')
    with pytest.raises(_core.SessionFormatError):
        session_stats(tmp_path / "unknown.jsonl")
    with pytest.raises(FileNotFoundError):
        fleet_stats([tmp_path / "nowhere"])


# ---- downsampling and the size bound -------------------------------------------------------


def test_downsampling_keeps_peaks_drops_and_the_ends() -> None:
    n = 100_000
    rng = np.random.default_rng(0)
    estimated = rng.integers(1_000, 150_000, n).astype(np.int64)
    estimated[31_337] = 190_000  # the peak
    estimated[77_777] = 5  # the deepest drop (right after a compaction)
    recorded = estimated.astype(np.float64) * 1.1
    recorded[::3] = np.nan
    recorded[50_001] = 250_000.0  # a recorded peak the estimate does not show
    series = ContextSeries(
        turns=np.arange(1, n + 1, dtype=np.int64),
        estimated=estimated,
        recorded=recorded,
        compactions=np.arange(0.5, n, 97.0),
        branch_points=np.array([10.5, 20.5]),
        total_turns=n,
    )
    small = series.downsampled(MAX_CHART_POINTS)
    assert len(small.turns) <= MAX_CHART_POINTS
    assert {1, n, 31_338, 77_778, 50_002} <= set(small.turns.tolist())
    assert small.peak == series.peak == 250_000
    assert int(small.estimated.min()) == 5
    assert np.all(np.diff(small.turns) > 0)
    assert len(small.compactions) <= MAX_CHART_POINTS // 4
    assert small.branch_points.tolist() == [10.5, 20.5]
    assert small.total_turns == n
    # Nothing to drop: the same object.
    assert series.downsampled(n) is series


@pytest.fixture(scope="module")
def large_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An 18 MB generated session (~1,400 assistant turns, compactions, branches, damage)."""
    directory = tmp_path_factory.mktemp("report-large")
    return generate_session(directory / "large.jsonl", "18MB", seed=5, damage=True).path


def test_page_of_a_large_session_stays_under_one_megabyte(large_session: Path) -> None:
    stats = session_stats(large_session)
    assert stats.series.total_turns > MAX_CHART_POINTS  # the chart had to be downsampled
    assert len(stats.compactions) > 5 and stats.damaged_lines
    text = session_page(stats)
    assert len(text.encode("utf-8")) <= 1_000_000
    page = _Page(text)
    assert page.stats["turns"] == str(stats.series.total_turns)
    assert page.stats["compactions"] == str(len(stats.compactions))
    # The context chart drew at most MAX_CHART_POINTS points per series.
    assert "The chart shows" in text


# ---- offline ------------------------------------------------------------------------------

_URL = re.compile(r"https?://", re.IGNORECASE)


def _assert_offline(text: str) -> None:
    lowered = text.lower()
    assert "<script" not in lowered
    assert "<link" not in lowered
    assert "@import" not in lowered
    # url() only to an id in the page (matplotlib's clip paths).
    assert re.findall(r"url\(\s*[^#\s]", lowered) == []
    assert "<iframe" not in lowered and "<object" not in lowered and "<embed" not in lowered
    # The only URLs are XML namespace names (identifiers, never fetched).
    for match in _URL.finditer(text):
        before = text[max(0, match.start() - 20) : match.start()]
        assert re.search(r'xmlns(:\w+)?="$', before), text[match.start() - 40 : match.end() + 40]
    page = _Page(text)
    for tag, attrs in page.tags:
        for name in ("src", "href", "xlink:href", "action", "srcset", "poster", "data"):
            value = attrs.get(name)
            if value is not None:
                assert value.startswith("#"), (tag, name, value)
    csp = [
        a for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    ]
    assert len(csp) == 1 and "default-src 'none'" in csp[0]["content"]


def test_session_page_loads_nothing(crafted: Path) -> None:
    _assert_offline(session_report(crafted))


def test_fleet_page_loads_nothing(fleet_dir: Path) -> None:
    _assert_offline(fleet_report([fleet_dir]))


# ---- the fleet page -------------------------------------------------------------------------


@pytest.fixture
def fleet_dir(tmp_path: Path, crafted: Path) -> Path:
    root = tmp_path / "fleet"
    (root / "agent-a").mkdir(parents=True)
    (root / "agent-b" / "deep").mkdir(parents=True)
    (root / ".hidden").mkdir()
    shutil.copyfile(crafted, root / "agent-a" / "crafted.jsonl")
    generate_session(root / "agent-a" / "big.jsonl", "400KB", seed=1)
    generate_session(root / "agent-b" / "deep" / "small.jsonl", "60KB", seed=2)
    (root / "agent-b" / "unknown.jsonl").write_text('{"hello": 1}\n')
    # A title-only Claude Code file is a (message-less) Claude Code session, not an error.
    (root / "agent-b" / "claude.jsonl").write_text('{"type":"summary","summary":"x"}\n')
    (root / "agent-b" / "notes.txt").write_text("not a session")
    shutil.copyfile(crafted, root / ".hidden" / "skipped.jsonl")
    return root


def test_fleet_page_numbers(fleet_dir: Path) -> None:
    stats = fleet_stats([fleet_dir], top=2)
    # Hidden folders count, as in `clawctx scan` and `clawctx.dask`.
    assert stats.sessions == 5
    assert sorted(p.name for p in stats.paths) == [
        "big.jsonl",
        "claude.jsonl",
        "crafted.jsonl",
        "skipped.jsonl",
        "small.jsonl",
    ]
    assert [p.name for p, _ in stats.errors] == ["unknown.jsonl"]
    assert "type" in stats.errors[0][1] and str(fleet_dir) not in stats.errors[0][1]
    summaries = {
        Path(s.path).name: s
        for s in _core.scan_sessions(sorted(fleet_dir.rglob("*.jsonl")))
        if s.error is None
    }
    page = _Page(fleet_report([fleet_dir], top=2))
    assert page.stats["sessions"] == "5"
    assert page.stats["unreadable"] == "1"
    assert page.stats["damaged-sessions"] == "2"  # crafted.jsonl and its hidden copy
    assert page.stats["damaged-lines"] == "2"
    assert page.stats["bytes"] == str(sum(s.size_bytes for s in summaries.values()))
    assert page.stats["estimated-tokens"] == str(
        sum(s.estimated_tokens for s in summaries.values())
    )
    by_size = sorted(summaries.values(), key=lambda s: -s.size_bytes)[:2]
    assert [Path(r[1]).name for r in _rows(page, "largest-by-size")] == [
        Path(s.path).name for s in by_size
    ]
    by_tokens = sorted(summaries.values(), key=lambda s: -s.estimated_tokens)[:2]
    rows = _rows(page, "largest-by-tokens")
    assert [Path(r[1]).name for r in rows] == [Path(s.path).name for s in by_tokens]
    assert [_int(r[5]) for r in rows] == [s.estimated_tokens for s in by_tokens]
    assert sorted(Path(r[1]).name for r in _rows(page, "damaged-sessions")) == [
        "crafted.jsonl",
        "skipped.jsonl",
    ]
    assert [Path(r[0]).name for r in _rows(page, "unreadable")] == ["unknown.jsonl"]
    assert page.charts == ["sizes", "size-tokens", "top-tokens"]


def test_fleet_scan_reports_progress(fleet_dir: Path) -> None:
    calls: list[tuple[int, int]] = []
    stats = fleet_stats(
        [fleet_dir], workers=2, progress=lambda done, total: calls.append((done, total))
    )
    assert calls and calls[-1] == (6, 6)  # five sessions and the unreadable file
    assert stats.sessions + len(stats.errors) == 6


def test_fleet_of_nothing_renders(tmp_path: Path) -> None:
    page = _Page(fleet_report([tmp_path]))
    assert page.stats["sessions"] == "0"
    assert page.charts == ["sizes", "size-tokens", "top-tokens"]


# ---- the command ---------------------------------------------------------------------------


def test_cli_writes_a_session_report(
    crafted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out" / "report.html"
    out.parent.mkdir()
    assert main(["report", str(crafted), "-o", str(out), "--context-window", "50000"]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    page = _Page(out.read_text(encoding="utf-8"))
    assert page.stats["context-window"] == "50000"
    assert page.stats["compactions"] == "1"
    assert list(out.parent.iterdir()) == [out]  # no temp file left


def test_cli_default_output_names(
    crafted: Path, fleet_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["report", str(crafted)]) == 0
    assert main(["report", str(fleet_dir), "--jobs", "2", "--top", "1"]) == 0
    assert sorted(p.name for p in work.iterdir()) == ["fleet.html", "report.html"]
    fleet = _Page((work / "fleet.html").read_text(encoding="utf-8"))
    assert fleet.stats["sessions"] == "5"
    assert len(_rows(fleet, "largest-by-tokens")) == 1


def test_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "r.html")]) == 1
    assert "missing.jsonl: no such file or directory" in capsys.readouterr().err
    bad = tmp_path / "unknown.jsonl"
    bad.write_text('{"hello": 1}\n')
    assert main(["report", str(bad), "-o", str(tmp_path / "r.html")]) == 1
    assert "expected a session header" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(bad), "--top", "0"])
    assert exit_info.value.code == 2


def test_missing_matplotlib_names_the_extra(
    crafted: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ReportDependencyError, match=r"clawctx\[report\]"):
        session_report(crafted)
    assert main(["report", str(crafted), "-o", str(tmp_path / "r.html")]) == 1
    assert 'pip install "clawctx[report]"' in capsys.readouterr().err


# ---- a real browser ------------------------------------------------------------------------


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip(
            "no Chromium installed (CI installs Debian's chromium: apt-get install chromium)"
        )
    pytest.importorskip(
        "playwright.sync_api", reason="playwright (the test extra) is not installed"
    )
    return path


def _load_in_browser(page_path: Path) -> dict[str, Any]:
    """Opens ``page_path`` in headless Chromium; what it logged, requested and drew."""
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), headless=True)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on(
                "console",
                lambda m: (
                    problems.append(f"{m.type}: {m.text}")
                    if m.type in ("error", "warning")
                    else None
                ),
            )
            page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
            page.on("request", lambda r: requests.append(r.url))
            page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
            page.goto(page_path.as_uri(), wait_until="load")
            boxes = {}
            for svg in page.locator("svg.chart").all():
                name = svg.get_attribute("data-chart")
                box = svg.bounding_box()
                marks = svg.evaluate("e => e.querySelectorAll('path, use, rect').length")
                boxes[name] = (box, marks)
            title = page.title()
        finally:
            browser.close()
    return {"problems": problems, "requests": requests, "charts": boxes, "title": title}


def _assert_rendered(result: dict[str, Any], page_path: Path, charts: list[str]) -> None:
    assert result["problems"] == []
    assert result["requests"] == [page_path.as_uri()]
    assert list(result["charts"]) == charts
    for name, (box, marks) in result["charts"].items():
        assert box is not None and box["width"] > 100 and box["height"] > 50, name
        assert marks > 0, name


def test_session_page_renders_in_chromium(crafted: Path, tmp_path: Path) -> None:
    _chromium()
    out = tmp_path / "session.html"
    out.write_text(session_report(crafted), encoding="utf-8")
    result = _load_in_browser(out)
    _assert_rendered(result, out, ["context", "cache", "roles", "tools"])
    assert "crafted.jsonl" in result["title"]


def test_large_session_and_fleet_pages_render_in_chromium(
    large_session: Path, fleet_dir: Path, tmp_path: Path
) -> None:
    _chromium()
    out = tmp_path / "large.html"
    out.write_text(session_report(large_session), encoding="utf-8")
    _assert_rendered(_load_in_browser(out), out, ["context", "cache", "roles", "tools"])
    fleet = tmp_path / "fleet.html"
    fleet.write_text(fleet_report([fleet_dir]), encoding="utf-8")
    _assert_rendered(_load_in_browser(fleet), fleet, ["sizes", "size-tokens", "top-tokens"])


FOREIGN_FIXTURES = FIXTURES / "foreign"


@pytest.mark.parametrize("name", ["claude_small.jsonl", "codex_small.jsonl"])
def test_claude_code_and_codex_transcripts_get_a_report(name: str, tmp_path: Path) -> None:
    from clawctx.history import import_transcript
    from clawctx.report import session_stats

    path = FOREIGN_FIXTURES / name
    before = path.read_bytes()
    thread = import_transcript(path).to_list()
    stats = session_stats(path)
    assert stats.messages == len(thread)
    roles: dict[str, int] = {}
    for message in thread:
        roles[message["role"]] = roles.get(message["role"], 0) + 1
    assert dict(stats.messages_by_role) == roles
    calls = sum(
        1
        for m in thread
        if m["role"] == "assistant"
        for b in m["content"]
        if b.get("type") == "toolCall"
    )
    assert stats.tool_calls == calls > 0
    assert {t.name for t in stats.tokens_by_tool} == {
        m["toolName"] for m in thread if m["role"] == "toolResult"
    }
    out = tmp_path / "page.html"
    assert main(["report", str(path), "-o", str(out)]) == 0
    assert out.stat().st_size > 0
    assert path.read_bytes() == before  # read only


# ---- the prompt cache chart (issue 31) -----------------------------------------------------


def _cache_session(path: Path) -> Path:
    """Two turns that extend each other, a compaction, one more turn: one cache break."""

    def usage(read: int, write: int) -> dict[str, Any]:
        return {
            "input": 5,
            "output": 5,
            "cacheRead": read,
            "cacheWrite": write,
            "totalTokens": 10 + read + write,
            "cost": {"cacheRead": read * 3e-7, "cacheWrite": write * 3.75e-6},
        }

    def assistant(text: str, u: dict[str, Any]) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": u,
            "stopReason": "stop",
            "timestamp": 1,
        }

    rows: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": "s",
            "timestamp": "2026-01-01T00:00:00Z",
            "cwd": "/",
        }
    ]
    messages: list[Any] = [
        {"role": "user", "content": "one " * 300, "timestamp": 1},
        assistant("a", usage(0, 900)),
        {"role": "user", "content": "two", "timestamp": 2},
        assistant("b", usage(900, 10)),
        {"role": "user", "content": "three", "timestamp": 3},
        "compaction",
        assistant("c", usage(0, 300)),
    ]
    parent = None
    for n, m in enumerate(messages):
        entry: dict[str, Any] = {
            "id": f"e{n}",
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:01Z",
        }
        if m == "compaction":
            entry.update(
                type="compaction",
                summary="Asked three things.",
                firstKeptEntryId="e4",
                tokensBefore=900,
            )
        else:
            entry.update(type="message", message=m)
        rows.append(entry)
        parent = entry["id"]
    write_jsonl(path, rows)
    return path


def test_cache_chart_shows_hit_rates_and_marks_breaks(tmp_path: Path) -> None:
    from clawctx.report import session_stats

    session = _cache_session(tmp_path / "cache.jsonl")
    quick = session_stats(session)
    assert quick.cache is not None
    assert [t.hit_rate for t in quick.cache.turns] == [0.0, pytest.approx(900 / 915), 0.0]
    assert quick.cache.breaks == ()
    page = session_page(quick)
    assert 'data-chart="cache"' in page and 'data-breaks="0"' in page
    assert "--cache-breaks" in page
    stats = session_stats(session, cache_breaks=True)
    assert stats.cache is not None
    assert [(t.index, t.cache_break.cause) for t in stats.cache.breaks if t.cache_break] == [
        (2, "compaction")
    ]
    marked = session_page(stats)
    assert 'data-breaks="1"' in marked
    # The break's cause is written on the chart.
    chart = marked[marked.index('data-chart="cache"') :]
    assert "compaction" in chart[: chart.index("</svg>")]


def test_cache_chart_renders_in_chromium(tmp_path: Path) -> None:
    _chromium()
    from clawctx.report import session_stats

    session = _cache_session(tmp_path / "cache.jsonl")
    out = tmp_path / "cache.html"
    out.write_text(session_page(session_stats(session, cache_breaks=True)), encoding="utf-8")
    result = _load_in_browser(out)
    _assert_rendered(result, out, ["context", "cache", "roles", "tools"])
    _box, marks = result["charts"]["cache"]
    assert marks > 3  # the line, its points, the break line
