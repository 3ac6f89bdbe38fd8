"""Upstream test cases of the pi session format (pi-mono 0.58.3
`packages/coding-agent/src/core/session-manager.ts`).

Mirrors the cases of pi's ``build-context``, ``migration``, ``file-operations``,
``tree-traversal``, ``labels`` and ``save-entry`` tests (`packages/coding-agent/test/session-manager/`),
written against clawctx's API. ``findMostRecentSession`` and ``createBranchedSession`` are not
implemented by clawctx and have no tests here.

Where clawctx deliberately differs from pi (docs/guide/compatibility.md: no silent reset,
migration written only when asked), the file-operation tests check the documented clawctx
behaviour and, with ``on_invalid_header="reset"``, pi's behaviour.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import clawctx
from conftest import dump_line, write_jsonl

BASE_MS = 1767225600000  # 2026-01-01T00:00:00.000Z
HEX8 = re.compile(r"^[0-9a-f]{8}$")
MODEL = {"provider": "anthropic", "modelId": "claude-test"}
HEADER_ID = "11111111-2222-4333-8444-555555555555"


# ---------------------------------------------------------------------------------------------
# Entry builders (pi-shaped dicts)
# ---------------------------------------------------------------------------------------------


def iso(ms: int) -> str:
    """``new Date(ms).toISOString()``."""
    dt = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def ms_of(entry_id: str) -> int:
    """A timestamp derived from a numeric id (one second apart), so file order = time order."""
    return BASE_MS + 1000 * int(entry_id) if entry_id.isdigit() else BASE_MS


def user_message(text: str, ms: int = BASE_MS) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": ms}


def assistant_message(
    text: str,
    ms: int = BASE_MS,
    provider: str = "anthropic",
    model: str = "claude-test",
) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": provider,
        "model": model,
        "usage": {
            "input": 10,
            "output": 5,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 15,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "stop",
        "timestamp": ms,
    }


def msg_entry(
    entry_id: str,
    parent: str | None,
    role: str,
    text: str,
    **assistant_kw: str,
) -> dict[str, Any]:
    ms = ms_of(entry_id)
    if role == "user":
        message = user_message(text, ms)
    elif role == "assistant":
        message = assistant_message(text, ms, **assistant_kw)
    else:
        raise ValueError(role)
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": iso(ms),
        "message": message,
    }


def thinking_entry(entry_id: str, parent: str | None, level: str) -> dict[str, Any]:
    return {
        "type": "thinking_level_change",
        "id": entry_id,
        "parentId": parent,
        "timestamp": iso(ms_of(entry_id)),
        "thinkingLevel": level,
    }


def model_change_entry(
    entry_id: str, parent: str | None, provider: str, model_id: str
) -> dict[str, Any]:
    return {
        "type": "model_change",
        "id": entry_id,
        "parentId": parent,
        "timestamp": iso(ms_of(entry_id)),
        "provider": provider,
        "modelId": model_id,
    }


def compaction_entry(
    entry_id: str,
    parent: str | None,
    summary: str,
    first_kept: str,
    tokens_before: int = 1000,
) -> dict[str, Any]:
    return {
        "type": "compaction",
        "id": entry_id,
        "parentId": parent,
        "timestamp": iso(ms_of(entry_id)),
        "summary": summary,
        "firstKeptEntryId": first_kept,
        "tokensBefore": tokens_before,
    }


def branch_summary_entry(
    entry_id: str, parent: str | None, summary: str, from_id: str
) -> dict[str, Any]:
    return {
        "type": "branch_summary",
        "id": entry_id,
        "parentId": parent,
        "timestamp": iso(ms_of(entry_id)),
        "fromId": from_id,
        "summary": summary,
    }


def header(version: int | None = 3, session_id: str = HEADER_ID) -> dict[str, Any]:
    h: dict[str, Any] = {"type": "session"}
    if version is not None:
        h["version"] = version
    h.update({"id": session_id, "timestamp": iso(BASE_MS), "cwd": "/repo"})
    return h


def text_of(message: dict[str, Any]) -> str:
    """The text of a user/assistant message (string content or the first text block)."""
    content = message["content"]
    if isinstance(content, str):
        return content
    return next(block["text"] for block in content if block.get("type") == "text")


def texts(ctx: clawctx.SessionContext) -> list[str]:
    return [text_of(m) for m in ctx.messages.to_list()]


def compaction_summary_message(summary: str, tokens_before: int, entry_id: str) -> dict[str, Any]:
    return {
        "role": "compactionSummary",
        "summary": summary,
        "tokensBefore": tokens_before,
        "timestamp": ms_of(entry_id),
    }


def branch_summary_message(summary: str, from_id: str, entry_id: str) -> dict[str, Any]:
    return {
        "role": "branchSummary",
        "summary": summary,
        "fromId": from_id,
        "timestamp": ms_of(entry_id),
    }


def read_lines(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


# ---------------------------------------------------------------------------------------------
# build-context.test.ts
# ---------------------------------------------------------------------------------------------


def test_empty_entries_give_empty_context() -> None:
    ctx = clawctx.build_session_context([])
    assert len(ctx.messages) == 0
    assert ctx.messages.to_list() == []
    assert ctx.thinking_level == "off"
    assert ctx.model is None


def test_null_leaf_gives_empty_context() -> None:
    entries = [msg_entry("1", None, "user", "hello"), msg_entry("2", "1", "assistant", "hi")]
    ctx = clawctx.build_session_context(entries, leaf_id=None)
    assert ctx.messages.to_list() == []
    assert ctx.thinking_level == "off"
    assert ctx.model is None


def test_single_user_message() -> None:
    entries = [msg_entry("1", None, "user", "hello")]
    ctx = clawctx.build_session_context(entries)
    assert len(ctx.messages) == 1
    assert ctx.messages.roles() == ["user"]
    assert ctx.messages[0] == user_message("hello", ms_of("1"))
    assert ctx.thinking_level == "off"
    assert ctx.model is None


def test_simple_chain_roles() -> None:
    entries = [
        msg_entry("1", None, "user", "q1"),
        msg_entry("2", "1", "assistant", "a1"),
        msg_entry("3", "2", "user", "q2"),
        msg_entry("4", "3", "assistant", "a2"),
    ]
    ctx = clawctx.build_session_context(entries)
    assert ctx.messages.roles() == ["user", "assistant", "user", "assistant"]
    assert texts(ctx) == ["q1", "a1", "q2", "a2"]
    # Messages are emitted as stored.
    assert ctx.messages.to_list() == [e["message"] for e in entries]


def test_thinking_level_change() -> None:
    entries = [
        msg_entry("1", None, "user", "hello"),
        thinking_entry("2", "1", "high"),
        msg_entry("3", "2", "assistant", "thinking hard"),
    ]
    ctx = clawctx.build_session_context(entries)
    assert ctx.thinking_level == "high"
    assert len(ctx.messages) == 2
    assert ctx.messages.roles() == ["user", "assistant"]
    assert texts(ctx) == ["hello", "thinking hard"]


def test_model_from_assistant_message() -> None:
    entries = [
        msg_entry("1", None, "user", "hello"),
        msg_entry("2", "1", "assistant", "hi", provider="anthropic", model="claude-test"),
    ]
    ctx = clawctx.build_session_context(entries)
    assert ctx.model == {"provider": "anthropic", "modelId": "claude-test"}


def test_assistant_model_overrides_earlier_model_change() -> None:
    entries = [
        msg_entry("1", None, "user", "hello"),
        model_change_entry("2", "1", "openai", "gpt-4"),
        msg_entry("3", "2", "assistant", "hi", provider="anthropic", model="claude-test"),
    ]
    ctx = clawctx.build_session_context(entries)
    assert ctx.model == {"provider": "anthropic", "modelId": "claude-test"}
    assert ctx.messages.roles() == ["user", "assistant"]

    # With the leaf on the model_change itself, the model_change is what counts.
    ctx_at_change = clawctx.build_session_context(entries, leaf_id="2")
    assert ctx_at_change.model == {"provider": "openai", "modelId": "gpt-4"}
    assert ctx_at_change.messages.roles() == ["user"]


def test_compaction_keeps_from_first_kept_entry() -> None:
    entries = [
        msg_entry("1", None, "user", "first"),
        msg_entry("2", "1", "assistant", "response1"),
        msg_entry("3", "2", "user", "second"),
        msg_entry("4", "3", "assistant", "response2"),
        compaction_entry("5", "4", "Summary of first two turns", "3", tokens_before=1234),
        msg_entry("6", "5", "user", "third"),
        msg_entry("7", "6", "assistant", "response3"),
    ]
    ctx = clawctx.build_session_context(entries)
    msgs = ctx.messages.to_list()
    assert len(msgs) == 5
    assert ctx.messages.roles() == ["compactionSummary", "user", "assistant", "user", "assistant"]
    assert msgs[0] == compaction_summary_message("Summary of first two turns", 1234, "5")
    assert [text_of(m) for m in msgs[1:]] == ["second", "response2", "third", "response3"]


def test_compaction_keeping_from_first_entry() -> None:
    entries = [
        msg_entry("1", None, "user", "q1"),
        msg_entry("2", "1", "assistant", "a1"),
        compaction_entry("3", "2", "Empty summary", "1", tokens_before=50),
        msg_entry("4", "3", "user", "q2"),
    ]
    ctx = clawctx.build_session_context(entries)
    msgs = ctx.messages.to_list()
    assert len(msgs) == 4
    assert msgs[0] == compaction_summary_message("Empty summary", 50, "3")
    assert ctx.messages.roles() == ["compactionSummary", "user", "assistant", "user"]
    assert [text_of(m) for m in msgs[1:]] == ["q1", "a1", "q2"]


def test_multiple_compactions_only_latest_counts() -> None:
    entries = [
        msg_entry("1", None, "user", "a"),
        msg_entry("2", "1", "assistant", "b"),
        compaction_entry("3", "2", "First summary", "1", tokens_before=100),
        msg_entry("4", "3", "user", "c"),
        msg_entry("5", "4", "assistant", "d"),
        compaction_entry("6", "5", "Second summary", "4", tokens_before=200),
        msg_entry("7", "6", "user", "e"),
    ]
    ctx = clawctx.build_session_context(entries)
    msgs = ctx.messages.to_list()
    assert len(msgs) == 4
    assert "Second summary" in msgs[0]["summary"]
    assert msgs[0] == compaction_summary_message("Second summary", 200, "6")
    assert ctx.messages.roles() == ["compactionSummary", "user", "assistant", "user"]
    assert [text_of(m) for m in msgs[1:]] == ["c", "d", "e"]


def test_branches_follow_the_selected_leaf() -> None:
    entries = [
        msg_entry("1", None, "user", "start"),
        msg_entry("2", "1", "assistant", "response"),
        msg_entry("3", "2", "user", "branch A"),
        msg_entry("4", "2", "user", "branch B"),
    ]
    ctx_a = clawctx.build_session_context(entries, leaf_id="3")
    assert len(ctx_a.messages) == 3
    assert texts(ctx_a) == ["start", "response", "branch A"]

    ctx_b = clawctx.build_session_context(entries, leaf_id="4")
    assert len(ctx_b.messages) == 3
    assert texts(ctx_b) == ["start", "response", "branch B"]

    # Leaf omitted: the last entry of the list ("4").
    assert texts(clawctx.build_session_context(entries)) == ["start", "response", "branch B"]


def test_branch_summary_on_path() -> None:
    entries = [
        msg_entry("1", None, "user", "start"),
        msg_entry("2", "1", "assistant", "response"),
        msg_entry("3", "2", "user", "abandoned"),
        branch_summary_entry("4", "2", "Summary of abandoned work", "3"),
        msg_entry("5", "4", "user", "new direction"),
    ]
    ctx = clawctx.build_session_context(entries, leaf_id="5")
    msgs = ctx.messages.to_list()
    assert len(msgs) == 4
    assert ctx.messages.roles() == ["user", "assistant", "branchSummary", "user"]
    assert msgs[2] == branch_summary_message("Summary of abandoned work", "3", "4")
    assert text_of(msgs[3]) == "new direction"
    assert text_of(msgs[0]) == "start"
    assert text_of(msgs[1]) == "response"


def _complex_tree() -> list[dict[str, Any]]:
    # 1 -> 2 -> 3 -> 4 -> 5(compaction, keep 3) -> 6 -> 7     main path
    #           3 -> 8 -> 9                                   abandoned branch
    #           3 -> 10(branch_summary, from 9) -> 11         resumed branch
    return [
        msg_entry("1", None, "user", "start"),
        msg_entry("2", "1", "assistant", "r1"),
        msg_entry("3", "2", "user", "q2"),
        msg_entry("4", "3", "assistant", "r2"),
        compaction_entry("5", "4", "Compacted history", "3", tokens_before=500),
        msg_entry("6", "5", "user", "q3"),
        msg_entry("7", "6", "assistant", "r3"),
        msg_entry("8", "3", "user", "wrong path"),
        msg_entry("9", "8", "assistant", "wrong response"),
        branch_summary_entry("10", "3", "Tried wrong approach", "9"),
        msg_entry("11", "10", "user", "better approach"),
    ]


def test_complex_tree_main_path_with_compaction() -> None:
    ctx = clawctx.build_session_context(_complex_tree(), leaf_id="7")
    msgs = ctx.messages.to_list()
    assert len(msgs) == 5
    assert ctx.messages.roles() == ["compactionSummary", "user", "assistant", "user", "assistant"]
    assert msgs[0] == compaction_summary_message("Compacted history", 500, "5")
    assert [text_of(m) for m in msgs[1:]] == ["q2", "r2", "q3", "r3"]
    assert ctx.model == MODEL


def test_complex_tree_branch_with_summary() -> None:
    ctx = clawctx.build_session_context(_complex_tree(), leaf_id="11")
    msgs = ctx.messages.to_list()
    assert len(msgs) == 5
    assert ctx.messages.roles() == ["user", "assistant", "user", "branchSummary", "user"]
    assert [text_of(msgs[i]) for i in (0, 1, 2, 4)] == ["start", "r1", "q2", "better approach"]
    assert msgs[3] == branch_summary_message("Tried wrong approach", "9", "10")
    assert msgs[3]["summary"] == "Tried wrong approach"


def test_complex_tree_abandoned_branch() -> None:
    ctx = clawctx.build_session_context(_complex_tree(), leaf_id="9")
    assert texts(ctx) == ["start", "r1", "q2", "wrong path", "wrong response"]


def test_nonexistent_leaf_falls_back_to_last_entry() -> None:
    entries = [msg_entry("1", None, "user", "hello"), msg_entry("2", "1", "assistant", "hi")]
    ctx = clawctx.build_session_context(entries, leaf_id="nonexistent")
    assert len(ctx.messages) == 2
    assert texts(ctx) == ["hello", "hi"]


def test_nonexistent_leaf_falls_back_to_last_entry_in_list_order() -> None:
    # The fallback is the last element of the list, not the deepest node.
    entries = [
        msg_entry("1", None, "user", "start"),
        msg_entry("2", "1", "assistant", "r1"),
        msg_entry("3", "2", "user", "deep"),
        msg_entry("4", "1", "assistant", "sibling"),
    ]
    ctx = clawctx.build_session_context(entries, leaf_id="nonexistent")
    assert texts(ctx) == ["start", "sibling"]


def test_orphan_parent_truncates_path() -> None:
    entries = [
        msg_entry("1", None, "user", "hello"),
        msg_entry("2", "missing", "assistant", "orphan"),
    ]
    ctx = clawctx.build_session_context(entries, leaf_id="2")
    assert len(ctx.messages) == 1
    assert ctx.messages.roles() == ["assistant"]
    assert texts(ctx) == ["orphan"]


# ---------------------------------------------------------------------------------------------
# migration.test.ts
# ---------------------------------------------------------------------------------------------


def _v1_message_line(role: str, text: str, ms: int) -> dict[str, Any]:
    message = user_message(text, ms) if role == "user" else assistant_message(text, ms)
    return {"type": "message", "timestamp": iso(ms), "message": message}


def test_v1_migration_assigns_ids_and_parent_chain(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "v1.jsonl",
        [
            header(version=None),
            _v1_message_line("user", "hello", BASE_MS + 1000),
            _v1_message_line("assistant", "hi", BASE_MS + 2000),
        ],
    )
    session = clawctx.Session.open(path)
    assert session.header["version"] == 3
    assert session.version == 3
    assert session.file_version == 1
    entries = session.entries()
    assert len(entries) == 2
    for entry in entries:
        assert len(entry["id"]) == 8
        assert HEX8.match(entry["id"])
    assert entries[0]["id"] != entries[1]["id"]
    assert entries[0]["parentId"] is None
    assert entries[1]["parentId"] == entries[0]["id"]
    assert session.leaf_id == entries[1]["id"]
    assert [text_of(e["message"]) for e in entries] == ["hello", "hi"]


def test_v2_migration_keeps_ids_and_parent_ids(tmp_path: Path) -> None:
    original = [
        msg_entry("1", None, "user", "hello"),
        msg_entry("2", "1", "assistant", "hi"),
        msg_entry("3", "1", "user", "branch"),
    ]
    path = write_jsonl(tmp_path / "v2.jsonl", [header(version=2), *original])
    session = clawctx.Session.open(path)
    assert session.version == 3
    assert session.header["version"] == 3
    assert session.file_version == 2
    entries = session.entries()
    assert [e["id"] for e in entries] == ["1", "2", "3"]
    assert [e["parentId"] for e in entries] == [None, "1", "1"]
    assert entries == original


def test_v1_compaction_index_and_save_migrated(
    tmp_path: Path, ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    v1_header = header(version=None)
    lines = [
        v1_header,  # index 0
        _v1_message_line("user", "m1", BASE_MS + 1000),  # index 1
        _v1_message_line("assistant", "m2", BASE_MS + 2000),  # index 2
        _v1_message_line("user", "m3", BASE_MS + 3000),  # index 3
        {
            "type": "compaction",
            "timestamp": iso(BASE_MS + 4000),
            "summary": "Old stuff",
            "firstKeptEntryIndex": 2,
            "tokensBefore": 321,
        },
    ]
    path = write_jsonl(tmp_path / "v1.jsonl", lines)
    original_bytes = path.read_bytes()

    session = clawctx.Session.open(path, id_factory=ids, now_ms=clock)
    assert session.version == 3
    assert session.header["version"] == 3
    assert session.file_version == 1
    assert session.needs_migration is True

    entries = session.entries()
    assert session.entry_types() == ["message", "message", "message", "compaction"]
    entry_ids = [e["id"] for e in entries]
    assert entry_ids == ["00000001", "00000002", "00000003", "00000004"]
    assert all(HEX8.match(i) for i in entry_ids)
    assert [e["parentId"] for e in entries] == [None, *entry_ids[:-1]]
    compaction = entries[3]
    assert compaction["firstKeptEntryId"] == entries[1]["id"]
    assert "firstKeptEntryIndex" not in compaction
    assert compaction["summary"] == "Old stuff"
    assert compaction["tokensBefore"] == 321
    assert session.leaf_id == entry_ids[-1]

    # The migrated compaction works in the context: summary, then m2 and m3.
    ctx = session.context()
    assert ctx.messages.roles() == ["compactionSummary", "assistant", "user"]
    assert ctx.messages[0]["summary"] == "Old stuff"
    assert texts_from_list(ctx.messages.to_list()[1:]) == ["m2", "m3"]

    # Nothing written yet.
    assert path.read_bytes() == original_bytes

    backup = session.save_migrated()
    assert backup is not None
    backup = Path(backup)
    assert backup.is_file()
    assert backup.read_bytes() == original_bytes
    assert session.backup_path is not None and Path(session.backup_path) == backup
    assert session.needs_migration is False

    written = path.read_text(encoding="utf-8")
    assert written.endswith("\n")
    on_disk = read_lines(path)
    assert on_disk[0] == session.header
    assert on_disk[0]["version"] == 3
    assert on_disk[0]["id"] == HEADER_ID
    assert on_disk[1:] == session.entries()
    assert on_disk[1:] == entries

    reopened = clawctx.Session.open(path)
    assert reopened.file_version == 3
    assert reopened.needs_migration is False
    assert reopened.entries() == entries


def texts_from_list(messages: list[dict[str, Any]]) -> list[str]:
    return [text_of(m) for m in messages]


def test_v2_hook_message_becomes_custom(tmp_path: Path, clock: Callable[[], int]) -> None:
    hook = {
        "type": "message",
        "id": "2",
        "parentId": "1",
        "timestamp": iso(ms_of("2")),
        "message": {
            "role": "hookMessage",
            "customType": "my-hook",
            "content": "injected by a hook",
            "display": True,
            "timestamp": ms_of("2"),
        },
    }
    lines = [
        header(version=2),
        msg_entry("1", None, "user", "hello"),
        hook,
        msg_entry("3", "2", "assistant", "hi"),
    ]
    path = write_jsonl(tmp_path / "v2.jsonl", lines)
    original_bytes = path.read_bytes()
    original_lines = original_bytes.decode("utf-8").split("\n")

    session = clawctx.Session.open(path, now_ms=clock)
    assert session.version == 3
    assert session.file_version == 2
    assert session.needs_migration is True
    migrated = session.get_entry("2")
    expected_hook = json.loads(json.dumps(hook))
    expected_hook["message"]["role"] = "custom"
    assert migrated == expected_hook
    assert session.entries() == [lines[1], expected_hook, lines[3]]
    assert path.read_bytes() == original_bytes

    backup = session.save_migrated()
    assert backup is not None
    assert Path(backup).read_bytes() == original_bytes

    new_lines = path.read_bytes().decode("utf-8").split("\n")
    assert len(new_lines) == len(original_lines) == 5
    assert new_lines[-1] == ""  # trailing newline
    changed = [i for i, (a, b) in enumerate(zip(original_lines, new_lines, strict=True)) if a != b]
    assert changed == [0, 2]
    expected_header = dict(lines[0], version=3)
    assert json.loads(new_lines[0]) == expected_header
    assert json.loads(new_lines[2]) == expected_hook
    assert new_lines[1] == dump_line(lines[1])
    assert new_lines[3] == dump_line(lines[3])


# ---------------------------------------------------------------------------------------------
# file-operations.test.ts (loadEntriesFromFile / setSessionFile, via Session.open)
# ---------------------------------------------------------------------------------------------


def test_open_missing_file_raises(tmp_path: Path) -> None:
    path = tmp_path / "missing.jsonl"
    with pytest.raises(FileNotFoundError):
        clawctx.Session.open(path)
    assert not path.exists()


def test_open_empty_file_writes_new_header(
    tmp_path: Path, ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    session = clawctx.Session.open(path, now_ms=clock, id_factory=ids)
    assert len(session) == 0
    assert session.entries() == []
    assert session.leaf_id is None
    assert session.version == 3
    assert session.path is not None and Path(session.path) == path

    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    assert text.count("\n") == 1
    written = json.loads(text)
    assert written["type"] == "session"
    assert written["version"] == 3
    assert isinstance(written["id"], str) and written["id"]
    assert written["id"] == session.session_id
    assert written == session.header

    reopened = clawctx.Session.open(path)
    assert reopened.session_id == session.session_id
    assert len(reopened) == 0
    assert path.read_text(encoding="utf-8") == text


INVALID_HEADER_FILES = {
    "message_without_header": '{"type":"message","id":"1"}\n',
    "garbage_only": "not json\n",
}


@pytest.mark.parametrize("content", INVALID_HEADER_FILES.values(), ids=INVALID_HEADER_FILES.keys())
def test_open_without_valid_header_raises_by_default(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(clawctx.SessionFormatError) as info:
        clawctx.Session.open(path)
    err = info.value
    assert isinstance(err, clawctx.ClawctxError)
    assert Path(err.path) == path
    assert isinstance(err.reason, str) and err.reason
    # No silent reset: the file is left alone.
    assert path.read_text(encoding="utf-8") == content


@pytest.mark.parametrize("content", INVALID_HEADER_FILES.values(), ids=INVALID_HEADER_FILES.keys())
def test_open_without_valid_header_reset_rewrites_file(
    tmp_path: Path, content: str, clock: Callable[[], int]
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    session = clawctx.Session.open(path, on_invalid_header="reset", now_ms=clock)
    assert len(session) == 0
    assert session.entries() == []
    assert session.path is not None and Path(session.path) == path

    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    assert len(text.splitlines()) == 1
    new_header = json.loads(text)
    assert new_header["type"] == "session"
    assert new_header["version"] == 3
    assert new_header["id"] == session.session_id
    assert new_header == session.header

    assert session.backup_path is not None
    backup = Path(session.backup_path)
    assert backup.is_file()
    assert backup != path
    assert backup.read_text(encoding="utf-8") == content

    reopened = clawctx.Session.open(path)
    assert reopened.session_id == session.session_id
    assert len(reopened) == 0


def test_open_header_and_message(tmp_path: Path) -> None:
    message = msg_entry("1", None, "user", "hello")
    path = write_jsonl(tmp_path / "ok.jsonl", [header(), message])
    session = clawctx.Session.open(path)
    assert len(session) == 1
    assert session.entries() == [message]
    assert session.header == header()
    assert session.session_id == HEADER_ID
    assert session.leaf_id == "1"
    assert session.skipped_lines == []


def test_open_header_garbage_message_skips_garbage(tmp_path: Path) -> None:
    message = msg_entry("1", None, "user", "hello")
    path = tmp_path / "garbage.jsonl"
    original = dump_line(header()) + "\n" + "not valid json\n" + dump_line(message) + "\n"
    path.write_text(original, encoding="utf-8")
    session = clawctx.Session.open(path)
    assert len(session) == 1
    assert session.entries() == [message]
    assert session.leaf_id == "1"
    skipped = session.skipped_lines
    assert len(skipped) == 1
    assert skipped[0].line == 2
    assert skipped[0].action == "skipped"
    assert skipped[0].records == 0
    # Opening does not modify the file.
    assert path.read_text(encoding="utf-8") == original


# ---------------------------------------------------------------------------------------------
# tree-traversal.test.ts / save-entry.test.ts
# ---------------------------------------------------------------------------------------------


def _mem_session(ids: Callable[[], str], clock: Callable[[], int]) -> clawctx.Session:
    return clawctx.Session.in_memory(cwd="/repo", now_ms=clock, id_factory=ids)


def test_appends_chain_parent_ids(ids: Callable[[], str], clock: Callable[[], int]) -> None:
    session = _mem_session(ids, clock)
    # The in-memory session took the first clock tick; appends get the following ones.
    a = session.append_message(user_message("one", BASE_MS))
    b = session.append_message(assistant_message("two", BASE_MS))
    c = session.append_thinking_level_change("high")
    d = session.append_model_change("openai", "gpt-4")
    e = session.append_message(user_message("three", BASE_MS))
    assert [a, b, c, d, e] == ["00000001", "00000002", "00000003", "00000004", "00000005"]
    assert session.leaf_id == e
    entries = session.entries()
    assert [x["id"] for x in entries] == [a, b, c, d, e]
    assert [x["parentId"] for x in entries] == [None, a, b, c, d]
    assert session.entry_types() == [
        "message",
        "message",
        "thinking_level_change",
        "model_change",
        "message",
    ]
    assert entries[2]["thinkingLevel"] == "high"
    assert entries[3]["provider"] == "openai"
    assert entries[3]["modelId"] == "gpt-4"
    for entry in entries:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry["timestamp"])
    timestamps = [x["timestamp"] for x in entries]
    assert timestamps == sorted(timestamps)
    assert len(set(timestamps)) == 5
    assert [x["id"] for x in session.branch_path()] == [a, b, c, d, e]

    ctx = session.context()
    assert ctx.messages.roles() == ["user", "assistant", "user"]
    assert ctx.thinking_level == "high"
    assert ctx.model == {"provider": "openai", "modelId": "gpt-4"}


def test_branch_to_unknown_id_raises(ids: Callable[[], str], clock: Callable[[], int]) -> None:
    session = _mem_session(ids, clock)
    a = session.append_message(user_message("one"))
    with pytest.raises(KeyError):
        session.branch("nonexistent")
    assert session.leaf_id == a


def test_appends_after_branch_are_children_of_branch_point(
    ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    session = _mem_session(ids, clock)
    a = session.append_message(user_message("one"))
    b = session.append_message(assistant_message("two"))
    c = session.append_message(user_message("three"))
    session.branch(a)
    assert session.leaf_id == a
    d = session.append_message(assistant_message("alternative"))
    assert session.get_entry(d)["parentId"] == a
    assert session.leaf_id == d
    assert [x["id"] for x in session.children(a)] == [b, d]
    assert [x["id"] for x in session.branch_path()] == [a, d]
    assert [x["id"] for x in session.branch_path(c)] == [a, b, c]
    assert texts(session.context()) == ["one", "alternative"]
    assert texts(session.context(c)) == ["one", "two", "three"]


def test_branch_with_summary_inserts_entry_and_advances_leaf(
    ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    session = _mem_session(ids, clock)
    a = session.append_message(user_message("one"))
    b = session.append_message(assistant_message("two"))
    c = session.append_message(user_message("abandoned"))
    s = session.branch_with_summary(b, "Summary of abandoned work")
    assert session.leaf_id == s
    entry = session.get_entry(s)
    assert entry["type"] == "branch_summary"
    assert entry["parentId"] == b
    assert entry["fromId"] == b
    assert entry["summary"] == "Summary of abandoned work"
    assert [x["id"] for x in session.children(b)] == [c, s]

    n = session.append_message(user_message("new direction"))
    assert session.get_entry(n)["parentId"] == s
    ctx = session.context()
    assert ctx.messages.roles() == ["user", "assistant", "branchSummary", "user"]
    assert ctx.messages[2]["summary"] == "Summary of abandoned work"
    assert ctx.messages[2]["fromId"] == b
    assert [x["id"] for x in session.branch_path()] == [a, b, s, n]


def test_branch_with_summary_from_root(ids: Callable[[], str], clock: Callable[[], int]) -> None:
    session = _mem_session(ids, clock)
    session.append_message(user_message("one"))
    s = session.branch_with_summary(None, "Started over")
    entry = session.get_entry(s)
    assert entry["parentId"] is None
    assert entry["fromId"] == "root"
    assert session.leaf_id == s
    assert [x["id"] for x in session.branch_path()] == [s]


def test_reset_leaf_starts_new_root(ids: Callable[[], str], clock: Callable[[], int]) -> None:
    session = _mem_session(ids, clock)
    a = session.append_message(user_message("one"))
    session.reset_leaf()
    assert session.leaf_id is None
    b = session.append_message(user_message("fresh"))
    assert session.get_entry(b)["parentId"] is None
    tree = session.tree()
    assert [node["entry"]["id"] for node in tree] == [a, b]


def test_tree_with_multiple_branches(ids: Callable[[], str], clock: Callable[[], int]) -> None:
    session = _mem_session(ids, clock)
    a = session.append_message(user_message("root"))
    b = session.append_message(assistant_message("r1"))
    c = session.append_message(user_message("main"))
    session.branch(b)
    d = session.append_message(user_message("side 1"))
    session.branch(a)
    e = session.append_message(assistant_message("alt r1"))
    session.branch(b)
    f = session.append_message(user_message("side 2"))

    tree = session.tree()
    assert len(tree) == 1
    root = tree[0]
    assert root["entry"]["id"] == a
    assert root["label"] is None
    assert [n["entry"]["id"] for n in root["children"]] == [b, e]
    node_b = root["children"][0]
    assert [n["entry"]["id"] for n in node_b["children"]] == [c, d, f]
    assert all(n["children"] == [] for n in node_b["children"])
    assert root["children"][1]["children"] == []


def test_tree_children_sorted_by_timestamp_and_unknown_parents_are_roots(
    tmp_path: Path,
) -> None:
    entries = [
        msg_entry("1", None, "user", "root"),
        # Written in file order 4, 2, 3 but timestamps say 2 < 3 < 4.
        msg_entry("4", "1", "assistant", "late"),
        msg_entry("2", "1", "assistant", "early"),
        msg_entry("3", "1", "assistant", "middle"),
        msg_entry("5", "missing", "user", "orphan"),
        msg_entry("6", "6", "user", "self parent"),
    ]
    path = write_jsonl(tmp_path / "tree.jsonl", [header(), *entries])
    session = clawctx.Session.open(path)
    tree = session.tree()
    assert [n["entry"]["id"] for n in tree] == ["1", "5", "6"]
    assert [n["entry"]["id"] for n in tree[0]["children"]] == ["2", "3", "4"]
    assert tree[1]["children"] == []
    assert tree[2]["children"] == []
    # The leaf is the last entry in file order.
    assert session.leaf_id == "6"


def test_custom_entry_on_path_but_not_in_context(
    ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    session = _mem_session(ids, clock)
    a = session.append_message(user_message("hello"))
    c = session.append_custom_entry("my-extension", {"key": "value"})
    b = session.append_message(assistant_message("hi"))
    entry = session.get_entry(c)
    assert entry["type"] == "custom"
    assert entry["customType"] == "my-extension"
    assert entry["data"] == {"key": "value"}
    assert entry["parentId"] == a
    assert session.get_entry(b)["parentId"] == c
    assert [x["id"] for x in session.branch_path()] == [a, c, b]
    ctx = session.context()
    assert len(ctx.messages) == 2
    assert ctx.messages.roles() == ["user", "assistant"]
    assert texts(ctx) == ["hello", "hi"]


# ---------------------------------------------------------------------------------------------
# labels.test.ts
# ---------------------------------------------------------------------------------------------


def test_label_last_wins(ids: Callable[[], str], clock: Callable[[], int]) -> None:
    session = _mem_session(ids, clock)
    a = session.append_message(user_message("hello"))
    b = session.append_message(assistant_message("hi"))
    l1 = session.append_label(a, "first")
    l2 = session.append_label(a, "second")
    assert session.get_label(a) == "second"
    assert session.get_label(b) is None
    assert session.labels == {a: "second"}
    label_entry = session.get_entry(l2)
    assert label_entry["type"] == "label"
    assert label_entry["targetId"] == a
    assert label_entry["label"] == "second"
    assert label_entry["parentId"] == l1
    tree = session.tree()
    assert tree[0]["entry"]["id"] == a
    assert tree[0]["label"] == "second"


@pytest.mark.parametrize("clear", [None, ""], ids=["none", "empty"])
def test_label_cleared(ids: Callable[[], str], clock: Callable[[], int], clear: str | None) -> None:
    session = _mem_session(ids, clock)
    a = session.append_message(user_message("hello"))
    session.append_label(a, "bookmark")
    assert session.get_label(a) == "bookmark"
    cleared = session.append_label(a, clear)
    assert session.get_label(a) is None
    assert session.labels == {}
    entry = session.get_entry(cleared)
    assert entry["type"] == "label"
    assert entry["targetId"] == a
    if clear is None:
        # pi's JSON.stringify drops an undefined label.
        assert "label" not in entry
    else:
        assert entry["label"] == ""
    assert session.tree()[0]["label"] is None


def test_labels_not_in_context(ids: Callable[[], str], clock: Callable[[], int]) -> None:
    session = _mem_session(ids, clock)
    a = session.append_message(user_message("hello"))
    b = session.append_message(assistant_message("hi"))
    session.append_label(a, "bookmark")
    session.append_label(b, "answer")
    assert session.entry_types() == ["message", "message", "label", "label"]
    ctx = session.context()
    assert len(ctx.messages) == 2
    assert ctx.messages.roles() == ["user", "assistant"]
    assert texts(ctx) == ["hello", "hi"]


def test_label_unknown_id_raises(ids: Callable[[], str], clock: Callable[[], int]) -> None:
    session = _mem_session(ids, clock)
    session.append_message(user_message("hello"))
    with pytest.raises(KeyError):
        session.append_label("nonexistent", "x")
    assert len(session) == 1
    assert session.labels == {}


def test_labels_from_file_last_wins_and_clear(tmp_path: Path) -> None:
    def label(entry_id: str, parent: str, target: str, text: str | None) -> dict[str, Any]:
        e: dict[str, Any] = {
            "type": "label",
            "id": entry_id,
            "parentId": parent,
            "timestamp": iso(ms_of(entry_id)),
            "targetId": target,
        }
        if text is not None:
            e["label"] = text
        return e

    entries = [
        msg_entry("1", None, "user", "hello"),
        msg_entry("2", "1", "assistant", "hi"),
        label("3", "2", "1", "a"),
        label("4", "3", "1", "b"),
        label("5", "4", "2", "keep"),
        label("6", "5", "2", None),
        label("7", "6", "2", "again"),
        label("8", "7", "2", ""),
    ]
    path = write_jsonl(tmp_path / "labels.jsonl", [header(), *entries])
    session = clawctx.Session.open(path)
    assert session.labels == {"1": "b"}
    assert session.get_label("1") == "b"
    assert session.get_label("2") is None
    assert session.leaf_id == "8"
    assert texts(session.context()) == ["hello", "hi"]


# ---------------------------------------------------------------------------------------------
# Data-safety deviations from pi-mono 0.58.3 (tests/conformance/deviations.py)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "separator"),
    [(b"", b"\r"), (b"\xef\xbb", b"\n")],
    ids=["lone-cr", "broken-bom"],
)
def test_open_salvages_a_damaged_header_instead_of_resetting(
    tmp_path: Path, prefix: bytes, separator: bytes, clock: Callable[[], int]
) -> None:
    # pi finds no header in a lone-CR file or behind a broken BOM and overwrites the file with
    # a fresh session (conformance cases pi_session_open-045/-050): the history is lost.
    # clawctx recovers the header and the messages and leaves the file as it is.
    first = msg_entry("1", None, "user", "hello")
    second = msg_entry("2", "1", "assistant", "hi")
    content = prefix + separator.join(dump_line(obj).encode() for obj in (header(), first, second))
    path = tmp_path / "session.jsonl"
    path.write_bytes(content + separator)
    session = clawctx.Session.open(path, on_invalid_header="reset", now_ms=clock)
    assert session.session_id == HEADER_ID
    assert session.entries() == [first, second]
    assert [m["role"] for m in session.context().messages] == ["user", "assistant"]
    assert path.read_bytes() == content + separator


def test_migration_rewrite_keeps_damaged_lines(tmp_path: Path, ids: Callable[[], str]) -> None:
    # pi rewrites a migrated file from its parsed entries, so a torn or garbage line is gone
    # from disk (conformance cases pi_session_open-058/-059). clawctx rewrites only the lines
    # migration changed: the damaged bytes stay for a later repair to salvage from.
    v1_user = {
        "type": "message",
        "timestamp": iso(BASE_MS + 1),
        "message": {"role": "user", "content": "hi", "timestamp": BASE_MS + 1},
    }
    torn = b'{"type":"message","timestamp":"2026-01-01T00:00:00.002Z","message":{"role":"assis'
    garbage = b"{'a': 1}"
    path = tmp_path / "session.jsonl"
    header_line = dump_line(header(version=None)).encode()
    path.write_bytes(b"\n".join([header_line, garbage, dump_line(v1_user).encode(), torn]) + b"\n")
    session = clawctx.Session.open(path, rewrite_migrated=True, id_factory=ids)
    assert session.version == 3
    lines = path.read_bytes().split(b"\n")
    assert lines[1] == garbage
    assert lines[3] == torn
    assert json.loads(lines[2])["id"] == session.leaf_id
    reopened = clawctx.Session.open(path)
    assert [m["content"] for m in reopened.context().messages] == ["hi"]


def test_migration_chains_around_non_object_lines(tmp_path: Path, ids: Callable[[], str]) -> None:
    # pi gives a JSON array line an id during v1 migration, but JSON.stringify drops it, so
    # the next entry's parentId points at nothing once the file is reopened and the context
    # breaks there (conformance case pi_session_open-060). clawctx skips the non-object line
    # and chains the next entry to the previous real one.
    def v1(role: str, text: str, n: int) -> dict[str, Any]:
        message = {"role": role, "content": text, "timestamp": BASE_MS + n}
        return {"type": "message", "timestamp": iso(BASE_MS + n), "message": message}

    path = tmp_path / "session.jsonl"
    lines = [
        dump_line(header(version=None)),
        dump_line(v1("user", "one", 1)),
        '[{"type":"message"}]',
        dump_line(v1("user", "two", 2)),
        "[]",
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    session = clawctx.Session.open(path, rewrite_migrated=True, id_factory=ids)
    entries = session.entries()
    assert len(entries) == 2
    assert entries[1]["parentId"] == entries[0]["id"]
    reopened = clawctx.Session.open(path)
    assert [m["content"] for m in reopened.context().messages] == ["one", "two"]


def test_cwd_falls_back_when_the_header_has_none(tmp_path: Path) -> None:
    # pi-mono 0.58.3 `getCwd()`: the header's cwd, else the directory pi was started in
    # (conformance case pi_session_open-112).
    with_cwd = write_jsonl(tmp_path / "a.jsonl", [header()])
    assert clawctx.Session.open(with_cwd).cwd == "/repo"
    no_cwd = {k: v for k, v in header().items() if k != "cwd"}
    without = write_jsonl(tmp_path / "b.jsonl", [no_cwd])
    assert clawctx.Session.open(without, cwd="/elsewhere").cwd == "/elsewhere"
    assert clawctx.Session.open(without).cwd == str(Path.cwd())
