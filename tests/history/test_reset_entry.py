"""OpenClaw's ``reset`` entry (``reason``, optional ``firstKeptEntryId``): a context boundary
like a compaction without a summary, wherever entries are handled (issue 30, item 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clawctx import Session, _core
from clawctx.history.foreign import read_transcript
from clawctx.history.inspect import inspect_session
from clawctx.history.store import open_store, write_store
from clawctx.report import session_stats

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z"}


def _line(kind: str, entry_id: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        **fields,
    }


def _user(entry_id: str, parent: str | None, text: str) -> dict[str, Any]:
    return _line("message", entry_id, parent, message={"role": "user", "content": text})


def _write(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in [HEADER, *entries]))
    return path


def _texts(messages: _core.Transcript) -> list[str]:
    return [
        str(m.get("content") if m.get("role") != "compactionSummary" else "S:" + m["summary"])
        for m in messages.to_list()
    ]


def _same(a: _core.SessionContext, b: _core.SessionContext) -> bool:
    return (a.messages.to_list(), a.thinking_level, a.model) == (
        b.messages.to_list(),
        b.thinking_level,
        b.model,
    )


def _reset_session(tmp_path: Path, kept: str | None) -> Path:
    extra = {"firstKeptEntryId": kept} if kept else {}
    return _write(
        tmp_path / "s.jsonl",
        [
            _user("u1", None, "old"),
            _user("u2", "u1", "kept"),
            _line("reset", "r", "u2", reason="new", **extra),
            _user("u3", "r", "fresh"),
        ],
    )


@pytest.mark.parametrize(("kept", "expected"), [(None, ["fresh"]), ("u2", ["kept", "fresh"])])
def test_context_starts_at_the_reset(tmp_path: Path, kept: str | None, expected: list[str]) -> None:
    path = _reset_session(tmp_path, kept)
    session = Session.open(path, read_only=True)
    assert _texts(session.context().messages) == expected
    # The backward reader stops at the reset and agrees with the full open.
    leaf = _core.read_leaf_context(path, chunk_bytes=64)
    assert not leaf.read_in_full
    assert _texts(leaf.messages) == expected
    assert _same(leaf.context(), session.context())
    # A branch off before the reset does not see it.
    assert _texts(session.context("u2").messages) == ["old", "kept"]
    # Estimates count only what the context holds, not the history behind the reset.
    everything = _core.Transcript([e["message"] for e in session.entries() if "message" in e])
    estimate = session_stats(path).leaf_context_tokens
    assert estimate == sum(session.context().messages.token_counts().tolist())
    assert estimate < sum(everything.token_counts().tolist())


def test_a_long_history_is_not_read_behind_the_reset(tmp_path: Path) -> None:
    entries = [_user("m0", None, "x" * 1000)]
    entries += [_user(f"m{i}", f"m{i - 1}", "x" * 1000) for i in range(1, 200)]
    entries += [_line("reset", "r", "m199", reason="daily"), _user("new", "r", "hi")]
    path = _write(tmp_path / "long.jsonl", entries)
    leaf = _core.read_leaf_context(path, chunk_bytes=1024)
    assert _texts(leaf.messages) == ["hi"]
    assert leaf.bytes_read < 8192 < path.stat().st_size


def test_the_latest_reset_or_compaction_wins(tmp_path: Path) -> None:
    compaction_after = _write(
        tmp_path / "a.jsonl",
        [
            _user("u1", None, "before"),
            _line("reset", "r", "u1", reason="reset"),
            _user("u2", "r", "after"),
            _line("compaction", "c", "u2", summary="sum", firstKeptEntryId="u2", tokensBefore=3),
            _user("u3", "c", "last"),
        ],
    )
    session = Session.open(compaction_after, read_only=True)
    assert _texts(session.context().messages) == ["S:sum", "after", "last"]
    assert _same(_core.read_leaf_context(compaction_after).context(), session.context())
    reset_after = _write(
        tmp_path / "b.jsonl",
        [
            _user("u1", None, "one"),
            _line("compaction", "c", "u1", summary="sum", firstKeptEntryId="u1", tokensBefore=3),
            _user("u2", "c", "two"),
            _line("reset", "r", "u2", reason="idle"),
            _user("u3", "r", "three"),
        ],
    )
    session = Session.open(reset_after, read_only=True)
    assert _texts(session.context().messages) == ["three"]
    assert _same(_core.read_leaf_context(reset_after).context(), session.context())
    # Compaction after the reset: only what follows the reset is summarized.
    prep = _core.prepare_compaction(session.branch_path()[:-1] + [_user("u4", "u3", "more")])
    assert prep is not None
    assert prep.previous_compaction_index == 3
    assert prep.previous_summary is None
    # A path ending in a reset has nothing to compact.
    assert _core.prepare_compaction(session.branch_path()[:-1]) is None


def test_inspect_and_report_name_the_reset(tmp_path: Path) -> None:
    path = _reset_session(tmp_path, "u2")
    report = inspect_session(path)
    assert report["entry_counts"]["reset"] == 1
    assert report["context_boundary"] == {
        "type": "reset",
        "id": "r",
        "first_kept_entry_id": "u2",
        "reason": "new",
    }
    assert report["context_messages"] == 2
    stats = session_stats(path)
    [reset] = stats.resets
    assert (reset.entry_id, reset.reason, reset.first_kept_entry_id) == ("r", "new", "u2")
    assert stats.compactions == []
    # The per-turn estimate after the reset counts only the kept and later messages.
    entries = [
        _user("u1", None, "x" * 400),
        _line("message", "a1", "u1", message={"role": "assistant", "content": []}),
        _line("reset", "r", "a1", reason="new"),
        _user("u2", "r", "y" * 40),
        _line("message", "a2", "u2", message={"role": "assistant", "content": []}),
    ]
    series = session_stats(_write(tmp_path / "t.jsonl", entries)).series
    assert series.estimated.tolist()[1] < series.estimated.tolist()[0]


def test_repair_keeps_the_reset_line_byte_for_byte(tmp_path: Path) -> None:
    path = _reset_session(tmp_path, "u2")
    reset_line = next(x for x in path.read_bytes().splitlines() if b'"reset"' in x)
    path.write_bytes(path.read_bytes() + b"{not json\n")
    report = _core.repair_session_file(path, backup="delete", now_ms=1)
    assert report.repaired
    assert reset_line in path.read_bytes().splitlines()
    assert _texts(Session.open(path, read_only=True).context().messages) == ["kept", "fresh"]


def test_conversion_reads_the_reset_bounded_context(tmp_path: Path) -> None:
    path = _reset_session(tmp_path, None)
    imported = read_transcript(path, format="pi")
    assert _texts(imported.messages) == ["fresh"]


def test_a_store_session_honours_the_reset(tmp_path: Path) -> None:
    path = _reset_session(tmp_path, "u2")
    store = tmp_path / "openclaw-agent.sqlite"
    sid = write_store(path, store)
    with open_store(store) as opened:
        session = opened.open(sid)
        assert _texts(session.context().messages) == ["kept", "fresh"]


def test_inspect_command_and_report_page_show_the_reset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from clawctx.cli import main
    from clawctx.report import session_page

    path = _reset_session(tmp_path, None)
    assert main(["inspect", str(path)]) == 0
    assert "reset (new) r, keeps nothing before it" in capsys.readouterr().out
    page = session_page(session_stats(path))
    assert "Resets (1)" in page
