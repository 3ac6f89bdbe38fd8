"""The real pi session files in ../shared/fixtures/pi: open, migrate, build context.

Expected values are derived here by reading the file independently with the json module, not
copied from clawctx's own output.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import clawctx


def read_records(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def raw_message_texts(path: Path) -> list[str]:
    """The exact JSON text of each message entry's ``message`` (the last key in pi's lines)."""
    texts = []
    for line in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj.get("type") != "message":
            continue
        assert list(obj)[-1] == "message"
        start = line.index('"message":', line.index('"timestamp":')) + len('"message":')
        text = line[start:-1]
        assert json.loads(text) == obj["message"]
        texts.append(text)
    return texts


def expected_context_v1(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """buildSessionContext for a migrated linear v1 file, computed directly from the records."""
    entries = records[1:]
    last_compaction = max(
        (i for i, e in enumerate(entries) if e["type"] == "compaction"), default=None
    )

    def as_messages(slice_: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [e["message"] for e in slice_ if e["type"] == "message"]

    if last_compaction is None:
        return as_messages(entries)
    comp = entries[last_compaction]
    # firstKeptEntryIndex counts the header as index 0.
    kept_from = comp["firstKeptEntryIndex"] - 1
    summary = {
        "role": "compactionSummary",
        "summary": comp["summary"],
        "tokensBefore": comp["tokensBefore"],
    }
    return [
        summary,
        *as_messages(entries[kept_from:last_compaction]),
        *as_messages(entries[last_compaction + 1 :]),
    ]


def test_large_v1_session_migrates_and_builds_context(pi_fixture: Any) -> None:
    path = pi_fixture("large-session.jsonl")
    original = path.read_bytes()
    records = read_records(path)
    assert "version" not in records[0]

    session = clawctx.Session.open(path, read_only=True)
    assert session.file_version == 1
    assert session.version == 3
    assert session.needs_migration
    assert session.session_id == records[0]["id"]
    assert len(session) == len(records) - 1
    assert Counter(session.entry_types()) == Counter(r["type"] for r in records[1:])
    assert session.skipped_lines == []

    entries = session.entries()
    # Migration gave every entry an 8-hex id and chained them in file order.
    assert all(len(e["id"]) == 8 and int(e["id"], 16) >= 0 for e in entries)
    assert len({e["id"] for e in entries}) == len(entries)
    assert entries[0]["parentId"] is None
    assert all(entries[i]["parentId"] == entries[i - 1]["id"] for i in range(1, len(entries)))
    assert session.leaf_id == entries[-1]["id"]
    # Entry content is otherwise untouched (id and parentId are appended keys, as in JS).
    for record, entry in zip(records[1:], entries, strict=True):
        assert list(entry)[: len(record)] == list(record)
        assert {k: v for k, v in entry.items() if k not in ("id", "parentId")} == record

    context = session.context()
    expected = expected_context_v1(records)
    assert len(context.messages) == len(expected) == 914
    assert context.messages.roles() == [m["role"] for m in expected]
    assert Counter(context.messages.roles()) == Counter(assistant=453, toolResult=373, user=88)
    # Unmodified messages serialize from their original bytes.
    assert context.messages.to_json() == ("[" + ",".join(raw_message_texts(path)) + "]").encode()

    levels = [r["thinkingLevel"] for r in records if r["type"] == "thinking_level_change"]
    assert context.thinking_level == levels[-1]
    last_assistant = [
        r["message"] for r in records if r.get("message", {}).get("role") == "assistant"
    ][-1]
    assert context.model == {
        "provider": last_assistant["provider"],
        "modelId": last_assistant["model"],
    }
    # The aborted assistant with empty content is kept as it is.
    aborted = [
        m
        for m in context.messages.to_list()
        if m.get("stopReason") == "aborted" and m["content"] == []
    ]
    assert aborted
    assert path.read_bytes() == original  # opening never writes


def test_session_with_two_compactions(pi_fixture: Any) -> None:
    path = pi_fixture("before-compaction.jsonl")
    records = read_records(path)
    session = clawctx.Session.open(path, read_only=True)
    assert session.file_version == 1
    assert Counter(session.entry_types())["compaction"] == 2

    compactions = [e for e in session.entries() if e["type"] == "compaction"]
    for comp, record in zip(
        compactions, [r for r in records if r["type"] == "compaction"], strict=True
    ):
        assert "firstKeptEntryIndex" not in comp
        target = session.entries()[record["firstKeptEntryIndex"] - 1]
        assert comp["firstKeptEntryId"] == target["id"]

    context = session.context()
    expected = expected_context_v1(records)
    assert len(context.messages) == len(expected)
    first = context.messages[0]
    assert first["role"] == "compactionSummary"
    assert first["summary"] == expected[0]["summary"]
    assert first["tokensBefore"] == expected[0]["tokensBefore"]
    last_comp = [r for r in records if r["type"] == "compaction"][-1]
    assert isinstance(first["timestamp"], int)
    assert first["timestamp"] > 0 and last_comp["timestamp"].startswith("20")
    assert context.messages.to_list()[1:] == expected[1:]
    assert "bashExecution" in context.messages.roles()

    llm = clawctx.convert_to_llm(context.messages)
    assert set(llm.roles()) <= {"user", "assistant", "toolResult"}
    assert llm[0]["content"][0]["text"].startswith(
        "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
    )
    excluded = sum(
        1 for m in expected if m.get("role") == "bashExecution" and m.get("excludeFromContext")
    )
    assert len(llm) == len(expected) - excluded


def test_unknown_header_fields_round_trip_through_save_migrated(
    pi_fixture: Any, tmp_path: Path
) -> None:
    path = tmp_path / "s.jsonl"
    shutil.copy(pi_fixture("before-compaction.jsonl"), path)
    original = path.read_bytes()
    header = read_records(path)[0]
    assert {"provider", "modelId", "thinkingLevel", "branchedFrom"} <= set(header)

    session = clawctx.Session.open(path)
    assert session.header == {**header, "version": 3}
    assert list(session.header) == [*header, "version"]  # a new key goes last, as in JavaScript
    assert path.read_bytes() == original  # migration is not written until asked

    backup = session.save_migrated()
    assert backup is not None and backup.read_bytes() == original
    assert not session.needs_migration
    first_line = path.read_text(encoding="utf-8").splitlines()[0]
    assert first_line == json.dumps(
        {**header, "version": 3}, separators=(",", ":"), ensure_ascii=False
    )

    reopened = clawctx.Session.open(path)
    assert reopened.file_version == 3 and not reopened.needs_migration
    assert reopened.entries() == session.entries()
    assert reopened.context().messages == session.context().messages
    assert session.save_migrated() is None
