"""Per-message columns (`message_columns`) and the per-session scan records."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from clawctx.history import (
    Session,
    SessionSummary,
    Transcript,
    estimate_context_tokens,
    iter_sessions,
    message_columns,
    records_table,
    scan_sessions,
    scan_stream,
    scan_table,
    session_paths,
    summarize_session_bytes,
)
from conftest import FIXTURES, SHARED

MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "héllo 😀", "timestamp": 1000},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "ok"},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}},
            {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {}},
        ],
        "stopReason": "toolUse",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "usage": {"input": 10, "output": 5, "cacheRead": 2, "cacheWrite": 0, "totalTokens": 17},
    },
    {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "isError": True,
        "content": [
            {"type": "text", "text": "boom"},
            {"type": "image", "data": "x", "mimeType": "image/png"},
        ],
        "timestamp": 3000,
    },
    {"role": "toolResult", "toolCallId": "c2", "toolName": "bash", "content": "", "timestamp": 4},
    {"role": "assistant", "content": [], "stopReason": "error", "timestamp": 5},
]


def test_message_columns_exactly() -> None:
    transcript = Transcript.from_list(MESSAGES)
    c = message_columns(transcript)
    assert c["index"].tolist() == [0, 1, 2, 3, 4]
    assert c["role"] == ["user", "assistant", "toolResult", "toolResult", "assistant"]
    assert c["tool_name"] == [None, "read,bash", "read", "bash", None]
    # UTF-16 units: the emoji is a surrogate pair.
    assert c["text_chars"].tolist() == [8, 2, 4, 0, 0]
    assert c["thinking_chars"].tolist() == [0, 3, 0, 0, 0]
    assert c["tool_calls"].tolist() == [0, 2, 0, 0, 0]
    assert c["has_image"].tolist() == [False, False, True, False, False]
    assert c["is_error"].tolist() == [False, False, True, False, True]
    assert c["estimated_tokens"].tolist() == transcript.token_counts().tolist()
    ts = c["timestamp_ms"].tolist()
    assert ts[0] == 1000 and ts[1] == 1_767_225_600_000 and ts[2:] == [3000, 4, 5]
    assert c["usage_input"][1] == 10 and c["usage_output"][1] == 5
    assert c["usage_cache_read"][1] == 2 and c["usage_cache_write"][1] == 0
    assert c["usage_total"][1] == 17
    for key in ("usage_input", "usage_output", "usage_total"):
        assert [math.isnan(v) for v in c[key].tolist()] == [True, False, True, True, True]
    assert {k: v.dtype for k, v in c.items() if isinstance(v, np.ndarray)} == {
        "index": np.int64,
        "text_chars": np.int64,
        "thinking_chars": np.int64,
        "estimated_tokens": np.int64,
        "tool_calls": np.int64,
        "has_image": np.bool_,
        "is_error": np.bool_,
        "timestamp_ms": np.float64,
        "usage_input": np.float64,
        "usage_output": np.float64,
        "usage_cache_read": np.float64,
        "usage_cache_write": np.float64,
        "usage_total": np.float64,
    }


def test_message_columns_of_a_list_and_of_nothing() -> None:
    assert (
        message_columns(MESSAGES)["tool_name"]
        == message_columns(Transcript.from_list(MESSAGES))["tool_name"]
    )
    empty = message_columns([])
    assert empty["role"] == [] and len(empty["usage_total"]) == 0
    with pytest.raises(TypeError):
        message_columns([1, 2])


# ---- scan records ----------------------------------------------------------------------------

RICH_LINES = [
    '{"type":"session","version":3,"id":"s2","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}',
    '{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"abcdefgh","timestamp":1}}',
    '{"type":"model_change","id":"m1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","provider":"p","modelId":"first"}',
    '{"type":"message","id":"a1","parentId":"m1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","model":"second","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{}},{"type":"toolCall","id":"c2","name":"ls","arguments":{}}],"stopReason":"toolUse","timestamp":3}}',
    '{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":"0123456789abcdef","timestamp":4}}',
    '{"type":"message","id":"r9","parentId":"r1","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"toolResult","toolCallId":"zz","toolName":"x","content":"o","timestamp":5}}',
    '{"type":"message","id":"b1","parentId":"u1","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"user","content":"fork","timestamp":6}}',
    '{"type":"compaction","id":"k1","parentId":"r9","timestamp":"2026-01-01T00:00:07.000Z","summary":"sum","firstKeptEntryId":"a1","tokensBefore":10}',
    "not json at all",
]
RICH = "\n".join(RICH_LINES) + "\n"

# A Claude Code line: not a pi session (until the foreign importers are wired in).
#: Neither a pi header nor a Claude Code or Codex record.
UNKNOWN = '{"hello": 1}\n'


def simple(n: int) -> str:
    """A linear pi session of `n` user messages of 8 characters (2 tokens each)."""
    header = {
        "type": "session",
        "version": 3,
        "id": f"id-{n}",
        "cwd": "/w",
        "timestamp": "2026-01-01T00:00:00.000Z",
    }
    lines = [json.dumps(header)]
    parent = None
    for i in range(n):
        message = {"role": "user", "content": "x" * 8, "timestamp": i}
        entry = {
            "type": "message",
            "id": f"e{i}",
            "parentId": parent,
            "timestamp": f"2026-01-01T00:00:0{i}.000Z",
            "message": message,
        }
        lines.append(json.dumps(entry))
        parent = f"e{i}"
    return "\n".join(lines) + "\n"


def test_a_record_has_every_statistic(tmp_path: Path) -> None:
    path = tmp_path / "rich.jsonl"
    path.write_text(RICH)
    (record,) = iter_sessions(path)
    assert record.error is None and record.format == "pi"
    assert (record.entries, record.messages) == (7, 5)
    assert (record.damaged_lines, record.skipped_lines) == (1, 1)
    assert (record.compactions, record.branches) == (1, 2)
    assert record.model == "second"
    assert record.last_activity == "2026-01-01T00:00:07.000Z"
    assert record.last_activity_ms == 1_767_225_607_000
    assert (record.tool_calls, record.tool_results) == (2, 2)
    assert (record.unpaired_tool_calls, record.unpaired_tool_results) == (1, 1)
    assert record.size_bytes == len(RICH.encode())
    # The token split is the leaf context's message_columns summed by role.
    context = Session.open(path, read_only=True).context().messages
    c = message_columns(context)
    by_role = {"user": 0, "assistant": 0, "toolResult": 0, "other": 0}
    for role, tokens in zip(c["role"], c["estimated_tokens"].tolist(), strict=True):
        by_role[role if role in by_role else "other"] += tokens
    assert (
        record.user_tokens,
        record.assistant_tokens,
        record.tool_result_tokens,
        record.other_tokens,
    ) == (by_role["user"], by_role["assistant"], by_role["toolResult"], by_role["other"])
    assert record.estimated_tokens == sum(by_role.values()) == int(c["estimated_tokens"].sum())
    assert record.context_tokens == estimate_context_tokens(context).tokens
    assert record.context_messages == len(context) == 4
    d = record.to_dict()
    assert list(d) == SessionSummary.fields and d["path"] == str(path)
    assert d["format"] == "pi" and d["branches"] == 2


def test_the_bytes_entry_point_gives_the_same_record(tmp_path: Path) -> None:
    path = tmp_path / "rich.jsonl"
    path.write_text(RICH)
    (from_file,) = iter_sessions(path)
    from_bytes = summarize_session_bytes(RICH.encode(), str(path))
    assert from_bytes.to_dict() == from_file.to_dict()
    assert summarize_session_bytes(RICH.encode()).path == Path("<bytes>")
    bad = summarize_session_bytes(UNKNOWN.encode(), "memory://x.jsonl")
    assert bad.error is not None and bad.format is None and bad.entries == 0
    with pytest.raises(TypeError):
        summarize_session_bytes("text")  # type: ignore[arg-type]


def test_non_pi_damaged_and_missing_files_are_error_records(tmp_path: Path) -> None:
    (tmp_path / "unknown.jsonl").write_text(UNKNOWN)
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "ok.jsonl").write_text(simple(2))
    # Named explicitly, a directory named *.jsonl is a (bad) session file; walks skip it.
    odd = tmp_path / "sub" / "dir.jsonl"
    odd.mkdir(parents=True)
    missing = tmp_path / "missing.jsonl"
    records = list(iter_sessions([tmp_path, missing, odd], jobs=2))
    by_name = {r.path.name: r for r in records}
    assert sorted(by_name) == [
        "dir.jsonl",
        "empty.jsonl",
        "missing.jsonl",
        "ok.jsonl",
        "unknown.jsonl",
    ]
    assert by_name["ok.jsonl"].error is None
    # An empty file is an empty session (pi starts one in it), not an error.
    assert (by_name["empty.jsonl"].error, by_name["empty.jsonl"].format) == (None, "pi")
    for name in ("unknown.jsonl", "dir.jsonl", "missing.jsonl"):
        assert by_name[name].error, name
        assert by_name[name].format is None
    assert "directory" in (by_name["dir.jsonl"].error or "")


def test_session_paths_walks_globs_and_keeps_order(tmp_path: Path) -> None:
    for rel in ("b/2.jsonl", "a/1.jsonl", "a/deep/3.jsonl", "a/notes.txt", "c.jsonl"):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(simple(1))
    found = session_paths([tmp_path / "b", str(tmp_path / "a"), tmp_path / "b" / "2.jsonl"])
    assert found == [tmp_path / "b/2.jsonl", tmp_path / "a/1.jsonl", tmp_path / "a/deep/3.jsonl"]
    assert session_paths(str(tmp_path / "**" / "*.jsonl")) == sorted(
        [
            tmp_path / "a/1.jsonl",
            tmp_path / "a/deep/3.jsonl",
            tmp_path / "b/2.jsonl",
            tmp_path / "c.jsonl",
        ]
    )
    assert session_paths(str(tmp_path / "nothing*")) == []
    # A path that does not exist is kept: its record will say why.
    assert session_paths(tmp_path / "gone.jsonl") == [tmp_path / "gone.jsonl"]
    with pytest.raises(TypeError):
        session_paths([b"bytes"])  # type: ignore[list-item]


def test_iter_sessions_orders_reports_progress_and_stops_early(tmp_path: Path) -> None:
    paths = []
    for n in range(30):
        p = tmp_path / f"s{n:02}.jsonl"
        p.write_text(simple(n % 5) if n % 9 else "garbage\n")
        paths.append(p)
    seen: list[tuple[int, int]] = []
    records = list(iter_sessions(paths, jobs=2, progress=lambda d, t: seen.append((d, t))))
    assert [r.path for r in records] == paths
    assert seen == [(i, 30) for i in range(1, 31)]
    assert [r.entries for r in records if r.error is None] == [n % 5 for n in range(30) if n % 9]
    assert sum(r.error is not None for r in records) == 4
    unordered = list(iter_sessions(paths, jobs=3, ordered=False))
    assert sorted(r.path for r in unordered) == paths
    assert {r.path: r.to_dict() for r in unordered} == {r.path: r.to_dict() for r in records}
    stream = iter_sessions(paths, jobs=1)
    assert next(stream).path == paths[0]
    stream.close()  # the scan stops; nothing hangs
    with pytest.raises(ValueError, match="jobs"):
        list(iter_sessions(paths, jobs=0))
    native = scan_stream(paths[:3], workers=1)
    assert native.total == 3 and [r.path for r in native] == paths[:3]
    with pytest.raises(ValueError):
        scan_stream(paths, workers=0)


def test_the_list_api_is_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "rich.jsonl"
    path.write_text(RICH)
    (listed,) = scan_sessions([path])
    assert listed.to_dict() == next(iter_sessions(path)).to_dict()


def test_scan_table(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    (tmp_path / "a.jsonl").write_text(RICH)
    (tmp_path / "b.jsonl").write_text("garbage\n")
    table = scan_table(tmp_path, jobs=2)
    assert table.num_rows == 2
    assert table.column_names == SessionSummary.fields
    assert table.schema.field("estimated_tokens").type == pa.int64()
    assert table.schema.field("last_activity_ms").type == pa.timestamp("ms", tz="UTC")
    assert table.schema.field("migration_needed").type == pa.bool_()
    rows = table.to_pylist()
    assert rows[0]["path"] == str(tmp_path / "a.jsonl") and rows[0]["branches"] == 2
    assert rows[1]["error"] is not None and rows[1]["format"] is None
    assert records_table([]).num_rows == 0


def test_scan_table_without_pyarrow_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match=r"clawctx\[arrow\]"):
        scan_table(tmp_path)


# ---- Claude Code sessions and Codex rollouts in a scan -------------------------------------

FOREIGN_FIXTURES = FIXTURES / "foreign"
REALWORLD = SHARED / "realworld-transcripts"


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("claude_small.jsonl", "claude-code"),
        ("claude_compacted.jsonl", "claude-code"),
        ("codex_small.jsonl", "codex"),
        ("codex_compacted.jsonl", "codex"),
    ],
)
def test_foreign_transcripts_are_scanned_like_their_import(name: str, fmt: str) -> None:
    from clawctx.history import read_transcript

    path = FOREIGN_FIXTURES / name
    (record,) = scan_sessions([path])
    imported = read_transcript(path)
    assert record.error is None
    assert record.format == fmt
    assert record.context_messages == len(imported.messages) > 0
    assert record.messages == len(imported.messages)
    assert record.damaged_lines == imported.damaged_lines
    assert record.compactions == imported.compactions
    assert record.model == imported.model
    assert record.last_activity == imported.last_timestamp
    assert record.session_id == imported.session_id
    columns = message_columns(imported.messages)
    assert record.estimated_tokens == int(columns["estimated_tokens"].sum())
    assert record.tool_calls == int(columns["tool_calls"].sum())
    # The same record from the bytes (an object store), and through the streaming scan.
    from_bytes = summarize_session_bytes(path.read_bytes(), str(path))
    assert from_bytes.to_dict() == record.to_dict()
    (streamed,) = list(iter_sessions([path]))
    assert streamed.to_dict() == record.to_dict()


def test_a_blank_file_is_an_empty_pi_session_not_a_foreign_one(tmp_path: Path) -> None:
    # pi starts a new session in an empty or blank file: it is an empty session, not an error.
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n\n")
    (record,) = scan_sessions([blank])
    assert (record.error, record.format, record.messages) == (None, "pi", 0)
    assert summarize_session_bytes(b"\n\n", "b.jsonl").to_dict() == {
        **record.to_dict(),
        "path": "b.jsonl",
    }


@pytest.mark.skipif(
    not REALWORLD.is_dir(), reason="../shared/realworld-transcripts is absent (a plain clone)"
)
def test_every_real_claude_code_and_codex_file_scans() -> None:
    paths = sorted(REALWORLD.rglob("*.jsonl"))
    assert len(paths) == 31
    records = list(iter_sessions([REALWORLD], jobs=2))
    assert len(records) == 31
    by_format: dict[str | None, int] = {}
    for record in records:
        by_format[record.format] = by_format.get(record.format, 0) + 1
        if record.size_bytes == 0:
            assert (record.error, record.format) == (None, "pi")  # an empty session
        else:
            assert record.error is None, (record.path, record.error)
            assert record.format in {"claude-code", "codex"}
    assert by_format.get("codex") == 4
    assert by_format.get("claude-code") == 26
