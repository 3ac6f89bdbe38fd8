"""Session file repair before load (OpenClaw 2026.3.13 `src/agents/session-file-repair.ts`,
``repairSessionFileIfNeeded``; upstream cases from `src/agents/session-file-repair.test.ts`).

clawctx implements OpenClaw generation G3 of ``repairSessionFileIfNeeded`` without the OpenAI
code-mode tool-result insertion, and with the deliberate differences of
docs/guide/compatibility.md ("Sessions and files"): lines that need no change keep their exact
bytes (CRLF endings included), the backup is kept unless ``backup="delete"``, a complete last
line without ``"\\n"`` gets one, and records are salvaged from damaged lines (torn, glued, NUL
bytes, BOM, invalid UTF-8).

Conventions of these tests: rewritten lines are compared as parsed JSON (their formatting is
``JSON.stringify``'s, which the spec does not pin byte for byte); untouched lines are compared as
exact bytes.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clawctx
from conftest import dump_line, write_jsonl

NOW_MS = 1767225600000
STREAM_ERROR_FALLBACK_TEXT = "[assistant turn failed before producing content]"
BLANK_USER_FALLBACK_TEXT = "(continue)"


# --------------------------------------------------------------------------------------------
# Builders for pi-shaped entries
# --------------------------------------------------------------------------------------------


def ts(n: int) -> str:
    return f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}.000Z"


def header(session_id: str = "0b9c2f1e-7d7a-4f0e-9a57-3d2b1c0a9e11") -> dict[str, Any]:
    return {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": ts(0),
        "cwd": "/repo",
    }


def entry(entry_id: str, parent: str | None, message: dict[str, Any], n: int = 1) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": ts(n),
        "message": message,
    }


def user(content: Any, n: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": content, "timestamp": NOW_MS + n}


def assistant(
    content: list[dict[str, Any]],
    stop_reason: str = "stop",
    n: int = 2,
    api: str = "anthropic-messages",
    provider: str = "anthropic",
    model: str = "claude-sonnet-4-5",
) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": api,
        "provider": provider,
        "model": model,
        "usage": {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": stop_reason,
        "timestamp": NOW_MS + n,
    }


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def image() -> dict[str, Any]:
    return {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}


def bedrock_error_assistant(n: int = 2) -> dict[str, Any]:
    """The upstream test's empty errored assistant turn (bedrock)."""
    return assistant(
        [],
        stop_reason="error",
        n=n,
        api="bedrock-converse-stream",
        provider="amazon-bedrock",
        model="anthropic.claude-3-haiku-20240307-v1:0",
    )


# --------------------------------------------------------------------------------------------
# File helpers
# --------------------------------------------------------------------------------------------


def lines_of(data: bytes) -> list[bytes]:
    """The "\\n"-terminated lines of a file (without the terminator); asserts a final newline."""
    assert data.endswith(b"\n"), f"file does not end with a newline: {data[-80:]!r}"
    return data[:-1].split(b"\n")


def b(obj: dict[str, Any]) -> bytes:
    return dump_line(obj).encode("utf-8")


def repair(path: Path, **kwargs: Any) -> clawctx.RepairReport:
    kwargs.setdefault("now_ms", NOW_MS)
    return clawctx.repair_session_file(path, **kwargs)


def other_files(directory: Path, *keep: Path) -> list[str]:
    names = {p.name for p in keep}
    return sorted(p.name for p in directory.iterdir() if p.name not in names)


def change_tuples(report: clawctx.RepairReport) -> list[tuple[int, str]]:
    for c in report.changes:
        assert isinstance(c.reason, str) and c.reason, f"change without a reason: {c!r}"
    return [(c.line, c.kind) for c in report.changes]


def assert_untouched(report: clawctx.RepairReport, path: Path, original: bytes) -> None:
    assert report.repaired is False
    assert report.backup_path is None
    assert report.changes == []
    assert path.read_bytes() == original
    assert other_files(path.parent, path) == [], "a file was left next to the session file"


# ============================================================================================
# 1. Upstream cases (OpenClaw 2026.3.13 src/agents/session-file-repair.test.ts), G3 expectations
# ============================================================================================


def test_upstream_malformed_trailing_line_is_dropped_and_backup_equals_original(
    tmp_path: Path,
) -> None:
    path = tmp_path / "session.jsonl"
    head, hello = header(), entry("u1", None, user("hello"))
    original = b(head) + b"\n" + b(hello) + b"\n" + b'{"type":"message"'
    path.write_bytes(original)

    report = repair(path)

    assert report.repaired is True
    assert report.dropped_lines == 1
    assert report.rewritten_assistant_messages == 0
    assert report.rewritten_user_messages == 0
    assert report.dropped_blank_user_messages == 0
    assert report.salvaged_records == 0
    assert report.reason is None
    assert report.summary() == "dropped 1 malformed line(s)"
    assert change_tuples(report) == [(3, "dropped")]
    assert report.dropped_line_numbers == [3]
    assert report.rewritten_line_numbers == []
    assert path.read_bytes() == b(head) + b"\n" + b(hello) + b"\n"
    assert lines_of(path.read_bytes()) == [b(head), b(hello)]
    # Backup: OpenClaw's name <file>.bak-<pid>-<now>, kept by default (clawctx difference).
    assert report.backup_path == Path(f"{path}.bak-{os.getpid()}-{NOW_MS}")
    assert isinstance(report.backup_path, Path)
    assert report.backup_path.read_bytes() == original
    assert other_files(tmp_path, path, report.backup_path) == []


def test_upstream_malformed_trailing_line_with_backup_delete_reports_no_backup(
    tmp_path: Path,
) -> None:
    # G3: a successful repair deletes the backup and reports no backupPath.
    path = tmp_path / "session.jsonl"
    head, hello = header(), entry("u1", None, user("hello"))
    path.write_bytes(b(head) + b"\n" + b(hello) + b"\n" + b'{"type":"message"')

    report = repair(path, backup="delete")

    assert report.repaired is True
    assert report.dropped_lines == 1
    assert report.backup_path is None
    assert path.read_bytes() == b(head) + b"\n" + b(hello) + b"\n"
    assert other_files(tmp_path, path) == [], "backup or temp file left behind"


def test_upstream_crlf_file_is_not_repaired(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    original = b(header()) + b"\r\n" + b(entry("u1", None, user("hello"))) + b"\r\n"
    path.write_bytes(original)

    report = repair(path)

    assert report.dropped_lines == 0
    assert report.reason is None
    assert_untouched(report, path, original)


def test_upstream_missing_header_is_not_repaired(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    original = b(entry("u1", None, user("hello"))) + b"\n" + b"not json at all\n"
    path.write_bytes(original)

    report = repair(path)

    assert report.reason == "invalid session header"
    assert report.dropped_lines == 1  # upstream reports droppedLines with this reason
    assert_untouched(report, path, original)


def test_upstream_directory_is_a_read_failure(tmp_path: Path) -> None:
    directory = tmp_path / "session.jsonl"
    directory.mkdir()

    report = repair(directory)

    assert report.repaired is False
    assert report.dropped_lines == 0
    assert report.reason is not None
    assert report.reason.startswith("failed to read session file: ")
    assert report.backup_path is None
    assert list(directory.iterdir()) == []
    assert other_files(tmp_path, directory) == []


def test_upstream_empty_errored_assistant_gets_fallback_text(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    objs = [
        header(),
        entry("u1", None, user("hello", n=1), n=1),
        entry("a1", "u1", bedrock_error_assistant(n=2), n=2),
        entry("u2", "a1", user("retry", n=3), n=3),
    ]
    write_jsonl(path, objs)
    original = path.read_bytes()

    report = repair(path, fix_messages=True)

    assert report.repaired is True
    assert report.dropped_lines == 0
    assert report.rewritten_assistant_messages == 1
    assert report.rewritten_user_messages == 0
    assert report.dropped_blank_user_messages == 0
    assert report.summary() == "rewrote 1 assistant message(s)"
    assert "dropped" not in report.summary()
    assert change_tuples(report) == [(3, "rewritten")]
    assert report.rewritten_line_numbers == [3]
    assert report.dropped_line_numbers == []

    lines = lines_of(path.read_bytes())
    assert len(lines) == 4
    assert lines[0] == b(objs[0])
    assert lines[1] == b(objs[1])
    assert lines[3] == b(objs[3])
    healed = json.loads(lines[2])
    assert healed["message"]["content"] == [{"type": "text", "text": STREAM_ERROR_FALLBACK_TEXT}]
    expected = json.loads(dump_line(objs[2]))
    expected["message"]["content"] = [{"type": "text", "text": STREAM_ERROR_FALLBACK_TEXT}]
    assert healed == expected
    # Only the content changes: key order of the entry and of the message is kept.
    assert list(healed) == list(objs[2])
    assert list(healed["message"]) == list(objs[2]["message"])
    assert report.backup_path is not None
    assert report.backup_path.read_bytes() == original


def test_upstream_blank_user_text_block_becomes_continue(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    objs = [
        header(),
        entry("msg-blank", None, user([text("")], n=1), n=1),
        entry("u2", "msg-blank", user("hello", n=2), n=2),
    ]
    write_jsonl(path, objs)
    original = path.read_bytes()

    report = repair(path, fix_messages=True)

    assert report.repaired is True
    assert report.dropped_lines == 0
    assert report.rewritten_user_messages == 1
    assert report.dropped_blank_user_messages == 0
    assert report.rewritten_assistant_messages == 0
    assert report.summary() == "rewrote 1 user message(s)"
    assert change_tuples(report) == [(2, "rewritten")]

    lines = lines_of(path.read_bytes())
    assert len(lines) == 3
    assert lines[0] == b(objs[0])
    assert lines[2] == b(objs[2])
    rewritten = json.loads(lines[1])
    assert rewritten["id"] == "msg-blank"
    assert rewritten["message"]["content"] == [{"type": "text", "text": BLANK_USER_FALLBACK_TEXT}]
    expected = json.loads(dump_line(objs[1]))
    expected["message"]["content"] = [text(BLANK_USER_FALLBACK_TEXT)]
    assert rewritten == expected
    assert report.backup_path is not None
    assert report.backup_path.read_bytes() == original


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param("   ", BLANK_USER_FALLBACK_TEXT, id="blank-string"),
        pytest.param("", BLANK_USER_FALLBACK_TEXT, id="empty-string"),
        pytest.param(" \t\n ", BLANK_USER_FALLBACK_TEXT, id="whitespace-string"),
        pytest.param([text("   "), image()], [image()], id="blank-text-and-image"),
        pytest.param([text("  "), text("\n")], [text(BLANK_USER_FALLBACK_TEXT)], id="all-blank"),
        pytest.param([], None, id="empty-array-kept"),
        pytest.param(
            [text(" "), {"type": "text", "text": 5}],
            [{"type": "text", "text": 5}],
            id="non-string-text-kept",
        ),
    ],
)
def test_upstream_blank_user_content_variants(tmp_path: Path, content: Any, expected: Any) -> None:
    path = tmp_path / "session.jsonl"
    objs = [
        header(),
        entry("u1", None, user(content, n=1), n=1),
        entry("u2", "u1", user("next", n=2), n=2),
    ]
    write_jsonl(path, objs)
    original = path.read_bytes()

    report = repair(path, fix_messages=True)

    if expected is None:
        # "other content shapes kept": an empty array has no blank text block to remove.
        assert_untouched(report, path, original)
        return
    assert report.repaired is True
    assert report.rewritten_user_messages == 1
    assert report.dropped_lines == 0
    assert report.summary() == "rewrote 1 user message(s)"
    lines = lines_of(path.read_bytes())
    assert len(lines) == 3
    assert lines[0] == b(objs[0])
    assert lines[2] == b(objs[2])
    assert json.loads(lines[1])["message"]["content"] == expected
    assert report.backup_path is not None
    assert report.backup_path.read_bytes() == original


def test_upstream_errored_assistant_and_malformed_line_both_reported(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    head, broken = header(), entry("a1", None, bedrock_error_assistant(n=1), n=1)
    original = b(head) + b"\n" + b(broken) + b"\n" + b'{"type":"message"'
    path.write_bytes(original)

    report = repair(path, fix_messages=True)

    assert report.repaired is True
    assert report.dropped_lines == 1
    assert report.rewritten_assistant_messages == 1
    assert report.summary() == "dropped 1 malformed line(s), rewrote 1 assistant message(s)"
    assert "dropped 1 malformed line(s)" in report.summary()
    assert "rewrote 1 assistant message(s)" in report.summary()
    assert sorted(change_tuples(report)) == [(2, "rewritten"), (3, "dropped")]
    lines = lines_of(path.read_bytes())
    assert len(lines) == 2
    assert lines[0] == b(head)
    assert json.loads(lines[1])["message"]["content"] == [text(STREAM_ERROR_FALLBACK_TEXT)]
    assert report.backup_path is not None
    assert report.backup_path.read_bytes() == original


def test_upstream_silent_stop_assistant_with_empty_content_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    write_jsonl(
        path,
        [
            header(),
            entry("a1", None, assistant([], stop_reason="stop", n=1), n=1),
            entry("u1", "a1", user("hello", n=2), n=2),
        ],
    )
    original = path.read_bytes()

    report = repair(path)

    assert report.dropped_lines == 0
    assert report.rewritten_assistant_messages == 0
    assert_untouched(report, path, original)


def test_upstream_already_healed_assistant_is_not_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    healed = bedrock_error_assistant(n=1)
    healed["content"] = [text(STREAM_ERROR_FALLBACK_TEXT)]
    write_jsonl(
        path,
        [header(), entry("a1", None, healed, n=1), entry("u1", "a1", user("retry", n=2), n=2)],
    )
    original = path.read_bytes()

    report = repair(path)

    assert report.rewritten_assistant_messages == 0
    assert_untouched(report, path, original)


def test_repair_output_of_errored_assistant_is_idempotent(tmp_path: Path) -> None:
    # "A healed entry is byte-identical to a live stream-error turn, so the pass is idempotent."
    path = tmp_path / "session.jsonl"
    write_jsonl(
        path,
        [
            header(),
            entry("a1", None, bedrock_error_assistant(n=1), n=1),
            entry("u1", "a1", user("x")),
        ],
    )
    first = repair(path, fix_messages=True, backup="delete")
    assert first.repaired is True
    repaired_bytes = path.read_bytes()

    second = repair(path, fix_messages=True, now_ms=NOW_MS + 1)

    assert second.rewritten_assistant_messages == 0
    assert_untouched(second, path, repaired_bytes)


# G2 trimmed trailing assistant messages; G3 removed that (later upstream docs: "delivered assistant
# replies are preserved on disk"). clawctx follows G3, so every one of these is KEPT.


def test_g3_trailing_assistant_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    write_jsonl(
        path,
        [
            header(),
            entry("u1", None, user("hello", n=1), n=1),
            entry("a1", "u1", assistant([text("stale answer")], n=2), n=2),
        ],
    )
    original = path.read_bytes()

    report = repair(path)

    assert not hasattr(report, "trimmed_trailing_assistant_messages") or (
        report.trimmed_trailing_assistant_messages == 0
    )
    assert "trimmed" not in report.summary()
    assert_untouched(report, path, original)
    assert len(lines_of(path.read_bytes())) == 3


def test_g3_two_trailing_assistants_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    write_jsonl(
        path,
        [
            header(),
            entry("u1", None, user("hello", n=1), n=1),
            entry("a1", "u1", assistant([text("one")], n=2), n=2),
            entry("a2", "a1", assistant([text("two")], n=3), n=3),
        ],
    )
    original = path.read_bytes()

    report = repair(path)

    assert_untouched(report, path, original)
    assert len(lines_of(path.read_bytes())) == 4


def test_g3_assistant_followed_by_user_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    write_jsonl(
        path,
        [
            header(),
            entry("a1", None, assistant([text("hi")], n=1), n=1),
            entry("u1", "a1", user("hello", n=2), n=2),
        ],
    )
    original = path.read_bytes()

    assert_untouched(repair(path), path, original)


def test_g3_header_plus_only_assistant_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    write_jsonl(path, [header(), entry("a1", None, assistant([text("only")], n=1), n=1)])
    original = path.read_bytes()

    assert_untouched(repair(path), path, original)


def test_g3_trailing_assistant_kept_while_other_damage_is_repaired(tmp_path: Path) -> None:
    # With a real repair happening, the trailing assistant is still written back unchanged.
    path = tmp_path / "session.jsonl"
    head = header()
    u1 = entry("u1", None, user("hello", n=1), n=1)
    a1 = entry("a1", "u1", assistant([text("answer")], n=2), n=2)
    path.write_bytes(b(head) + b"\n" + b(u1) + b"\n" + b"garbage{\n" + b(a1) + b"\n")

    report = repair(path)

    assert report.repaired is True
    assert report.dropped_lines == 1
    assert "trimmed" not in report.summary()
    assert lines_of(path.read_bytes()) == [b(head), b(u1), b(a1)]


# -- reasons without a rewrite (session-file-repair.ts, repairSessionFileIfNeeded) -------------


@pytest.mark.parametrize("raw", ["", "   "])
def test_empty_path_is_missing_session_file(raw: str) -> None:
    report = clawctx.repair_session_file(raw)
    assert report.repaired is False
    assert report.dropped_lines == 0
    assert report.reason == "missing session file"
    assert report.backup_path is None


def test_missing_file_is_missing_session_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.jsonl"
    report = repair(path)
    assert report.repaired is False
    assert report.reason == "missing session file"
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "content",
    [b"", b"\n", b"\n\n   \n", b"\r\n\t\r\n"],
    ids=["empty", "newline", "blank-lines", "crlf-blank"],
)
def test_no_records_is_empty_session_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(content)
    report = repair(path)
    assert report.reason == "empty session file"
    assert report.dropped_lines == 0
    assert_untouched(report, path, content)


def test_only_malformed_lines_is_empty_session_file(tmp_path: Path) -> None:
    # repairSessionFileIfNeeded: entries are what JSON.parse accepted; with none left the reason is
    # "empty session file" (with the droppedLines count), not "invalid session header".
    path = tmp_path / "session.jsonl"
    content = b'{"type":"session","id":"torn\n'
    path.write_bytes(content)
    report = repair(path)
    assert report.reason == "empty session file"
    assert report.dropped_lines == 1
    assert report.repaired is False
    assert path.read_bytes() == content
    assert other_files(tmp_path, path) == []


@pytest.mark.parametrize(
    "first",
    [
        pytest.param({"type": "session", "id": ""}, id="empty-id"),
        pytest.param({"type": "session"}, id="no-id"),
        pytest.param({"type": "session", "id": 7}, id="numeric-id"),
        pytest.param({"type": "model_change", "id": "m1"}, id="other-type"),
    ],
)
def test_invalid_header_variants(tmp_path: Path, first: dict[str, Any]) -> None:
    path = tmp_path / "session.jsonl"
    content = b(first) + b"\n" + b(entry("u1", None, user("   "))) + b"\n" + b"garbage\n"
    path.write_bytes(content)
    report = repair(path)
    assert report.reason == "invalid session header"
    assert report.dropped_lines == 1
    assert report.rewritten_user_messages == 0
    assert_untouched(report, path, content)


def test_garbage_before_header_is_dropped_and_header_accepted(tmp_path: Path) -> None:
    # The header check applies to the first *entry*; a malformed line before it is dropped.
    path = tmp_path / "session.jsonl"
    head, u1 = header(), entry("u1", None, user("hello"))
    path.write_bytes(b"#!garbage\n" + b(head) + b"\n" + b(u1) + b"\n")

    report = repair(path)

    assert report.repaired is True
    assert report.dropped_lines == 1
    assert change_tuples(report) == [(1, "dropped")]
    assert lines_of(path.read_bytes()) == [b(head), b(u1)]


def test_missing_final_newline_is_left_alone(tmp_path: Path) -> None:
    # A missing final newline is no damage to OpenClaw 2026.3.13 (conformance cases
    # repair_session_file-002/-021): the file is untouched and gets no backup.
    path = tmp_path / "session.jsonl"
    head, u1 = header(), entry("u1", None, user("hello"))
    original = b(head) + b"\n" + b(u1)
    path.write_bytes(original)

    report = repair(path)

    assert report.repaired is False
    assert report.dropped_lines == 0
    assert change_tuples(report) == []
    assert path.read_bytes() == original
    assert report.backup_path is None
    assert other_files(tmp_path, path) == []


def test_missing_final_newline_is_added_when_the_file_is_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    head, u1 = header(), entry("u1", None, user("hello"))
    original = b(head) + b"\n" + b'{"type":"mess\n' + b(u1)
    path.write_bytes(original)

    report = repair(path)

    assert report.repaired is True
    assert report.dropped_lines == 1
    assert change_tuples(report) == [(2, "dropped"), (3, "rewritten")]
    assert report.summary() == "dropped 1 malformed line(s)"
    assert path.read_bytes() == b(head) + b"\n" + b(u1) + b"\n"
    assert report.backup_path is not None
    assert report.backup_path.read_bytes() == original


def test_invalid_arguments_raise(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "session.jsonl", [header()])
    with pytest.raises(ValueError):
        clawctx.repair_session_file(path, backup="sometimes")
    with pytest.raises(ValueError):
        clawctx.repair_session_file(path, lock_timeout=-1.0)
    with pytest.raises(TypeError):
        clawctx.repair_session_file(path, "keep")  # type: ignore[misc]


# ============================================================================================
# 2. Byte preservation of untouched lines
# ============================================================================================

UNUSUAL_LINES: list[bytes] = [
    # spaces after colons and commas
    b'{"type": "session", "version": 3, "id": "sess-unusual", "timestamp": '
    b'"2026-01-01T00:00:00.000Z", "cwd": "/repo"}',
    # escaped unicode, "1.0" number, "\/" escape
    b'{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
    b'"message":{"role":"user","content":"caf\\u00e9 \\/ na\\u00efve","timestamp":1.0}}',
    # unusual key order, exponent number, surrogate-pair escape
    b'{"message":{"stopReason":"stop","content":[{"text":"ok \\ud83d\\ude00","type":"text"}],'
    b'"role":"assistant","usage":{"input":1E2,"output":-0.0},"timestamp":1767225602000},'
    b'"timestamp":"2026-01-01T00:00:02.000Z","parentId":"u1","id":"a1","type":"message"}',
    # trailing whitespace and a tab inside the object
    b'{"type":"model_change",\t"id":"m1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z",'
    b'"provider":"anthropic","modelId":"claude-sonnet-4-5"}  \t',
    # literal non-ASCII characters and a nested empty object/array
    '{"type":"custom","id":"c1","parentId":"m1","timestamp":"2026-01-01T00:00:04.000Z",'
    '"customType":"note","data":{"txt":"Grüße ✓ 日本","empty":{},"list":[]}}'.encode(),
    b'{"type":"message","id":"u2","parentId":"c1","timestamp":"2026-01-01T00:00:05.000Z",'
    b'"message":{"role":"user","content":[{"type":"text","text":"more"}],"timestamp":12.50}}',
]

DAMAGED_LINES: dict[str, tuple[bytes, str | None]] = {
    # name: (bytes of the damaged line, kind of change or None when the line disappears)
    "torn": (b'{"type":"message","id":"x1","parentId":"u2","timestamp":"2026-01-01T00:0', None),
    "blank-user": (
        b'{"type":"message","id":"x1","parentId":"u2","timestamp":"2026-01-01T00:00:06.000Z",'
        b'"message":{"role":"user","content":"  ","timestamp":1.0}}',
        "rewritten",
    ),
    "errored-assistant": (
        b'{"type": "message", "id": "x1", "parentId": "u2", "timestamp": '
        b'"2026-01-01T00:00:06.000Z", "message": {"role": "assistant", "content": [], '
        b'"stopReason": "error", "timestamp": 1.0}}',
        "rewritten",
    ),
    "null-role": (
        b'{"type":"message","id":"x1","parentId":"u2","timestamp":"2026-01-01T00:00:06.000Z",'
        b'"message":{"role":null,"content":"hi"}}',
        None,
    ),
}


@pytest.mark.parametrize("damage", sorted(DAMAGED_LINES))
@pytest.mark.parametrize("position", [1, 3, 6])
def test_unusual_formatting_survives_byte_for_byte(
    tmp_path: Path, damage: str, position: int
) -> None:
    damaged, kind = DAMAGED_LINES[damage]
    lines = list(UNUSUAL_LINES)
    lines.insert(position, damaged)
    path = tmp_path / "session.jsonl"
    original = b"\n".join(lines) + b"\n"
    path.write_bytes(original)
    # sanity: every unusual line is valid JSON as written
    for line in UNUSUAL_LINES:
        assert isinstance(json.loads(line), dict)

    report = repair(path, fix_messages=True)

    assert report.repaired is True
    out = lines_of(path.read_bytes())
    if kind is None:
        assert out == UNUSUAL_LINES
        assert report.dropped_lines == 1
        assert change_tuples(report) == [(position + 1, "dropped")]
    else:
        assert out[:position] == UNUSUAL_LINES[:position]
        assert out[position + 1 :] == UNUSUAL_LINES[position:]
        assert len(out) == len(UNUSUAL_LINES) + 1
        assert out[position] != damaged
        fixed = json.loads(out[position])
        expected = json.loads(damaged)
        if damage == "blank-user":
            expected["message"]["content"] = BLANK_USER_FALLBACK_TEXT
            assert report.rewritten_user_messages == 1
        else:
            expected["message"]["content"] = [text(STREAM_ERROR_FALLBACK_TEXT)]
            assert report.rewritten_assistant_messages == 1
        assert fixed == expected
        assert report.dropped_lines == 0
        assert change_tuples(report) == [(position + 1, kind)]
    assert report.backup_path is not None
    assert report.backup_path.read_bytes() == original


def test_rewritten_line_is_json_stringify_shaped(tmp_path: Path) -> None:
    # A rewritten line is what JSON.stringify writes for the corrected object: compact, and
    # numbers written the JavaScript way (1.0 -> 1).
    path = tmp_path / "session.jsonl"
    damaged = DAMAGED_LINES["blank-user"][0]
    path.write_bytes(UNUSUAL_LINES[0] + b"\n" + damaged + b"\n")

    repair(path, fix_messages=True)

    out = lines_of(path.read_bytes())
    expected = json.loads(damaged)
    expected["message"]["content"] = BLANK_USER_FALLBACK_TEXT
    expected["message"]["timestamp"] = 1
    assert out[1] == dump_line(expected).encode()


# ============================================================================================
# 3. Truncation at many byte offsets of a real session
# ============================================================================================


def _g3_fixed(line: bytes) -> dict[str, Any] | None:
    """The corrected record if G3's per-record rules (empty error assistant turn, blank user text)
    rewrite this clean line."""
    obj = json.loads(line)
    message = obj.get("message") if obj.get("type") == "message" else None
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    fixed: Any = None
    if message.get("role") == "assistant" and message.get("stopReason") == "error":
        if content == []:
            fixed = [text(STREAM_ERROR_FALLBACK_TEXT)]
    elif message.get("role") == "user":
        if isinstance(content, str) and not content.strip():
            fixed = BLANK_USER_FALLBACK_TEXT
        elif isinstance(content, list):
            kept = [
                c
                for c in content
                if not (
                    isinstance(c, dict)
                    and c.get("type") == "text"
                    and isinstance(c.get("text"), str)
                    and not c["text"].strip()
                )
            ]
            if len(kept) != len(content):
                fixed = kept or [text(BLANK_USER_FALLBACK_TEXT)]
    if fixed is None:
        return None
    out = json.loads(line)
    out["message"]["content"] = fixed
    return out


def _truncation_offsets(data: bytes) -> list[int]:
    newlines = [i for i, c in enumerate(data) if c == 0x0A]
    starts = [0, *(i + 1 for i in newlines[:-1])]
    first_line_end = newlines[0] + 1
    offsets: set[int] = {first_line_end, len(data), len(data) - 1}
    count = len(newlines)
    # 15 lines spread over the file; for each: just after the newline before it (line start),
    # one byte in, the middle of the line, and right before its newline.
    for k in range(15):
        line_index = 1 + (count - 2) * k // 14
        start, end = starts[line_index], newlines[line_index]
        offsets.update({start, start + 1, (start + end) // 2, end})
    return sorted(o for o in offsets if first_line_end <= o <= len(data))


def test_truncation_at_many_offsets(tmp_path: Path, pi_fixture: Any) -> None:
    fixture = pi_fixture("before-compaction.jsonl")
    data = fixture.read_bytes()
    assert data.endswith(b"\n")
    all_lines = lines_of(data)
    # Lines G3 rewrites anyway (the fixture holds an empty errored assistant turn); they are
    # compared as parsed JSON, every other complete line byte for byte.
    fixes = {i + 1: f for i, line in enumerate(all_lines) if (f := _g3_fixed(line)) is not None}
    assert fixes, "expected the fixture to contain at least one record G3 rewrites"
    offsets = _truncation_offsets(data)
    assert len(offsets) >= 55

    failures: list[str] = []
    for n, offset in enumerate(offsets):
        work = tmp_path / f"t{n}"
        work.mkdir()
        path = work / "session.jsonl"
        truncated = data[:offset]
        path.write_bytes(truncated)
        last_nl = truncated.rfind(b"\n")
        complete_lines = truncated[: last_nl + 1].split(b"\n")[:-1]
        tail = truncated[last_nl + 1 :]
        tail_no = len(complete_lines) + 1
        tail_is_record = bool(tail) and data[offset : offset + 1] == b"\n"
        fixed_here = sorted(i for i in fixes if i <= len(complete_lines))

        report = repair(path, fix_messages=True, now_ms=NOW_MS + n)
        result = path.read_bytes()

        def check(cond: bool, what: str, offset: int = offset, report: Any = report) -> None:
            if not cond:
                failures.append(f"offset {offset}: {what}; {report!r} {report.changes}")

        expected_changes = [(i, "rewritten") for i in fixed_here]
        kept = list(complete_lines)
        if tail_is_record:
            # complete last record without its newline: kept; the newline is added only when
            # the file is rewritten anyway (it is no damage to OpenClaw 2026.3.13)
            kept.append(tail)
            if fixed_here:
                expected_changes.append((tail_no, "rewritten"))
        elif tail:
            expected_changes.append((tail_no, "dropped"))
        out = result.split(b"\n")
        if expected_changes:
            check(out[-1] == b"", "result does not end with a newline")
        out = out[:-1] if out[-1] == b"" else out
        check(len(out) == len(kept), f"{len(out)} lines instead of {len(kept)}")
        for i, (got, want) in enumerate(zip(out, kept, strict=False), start=1):
            if i in fixed_here:
                check(json.loads(got) == fixes[i], f"line {i} not rewritten as G3 does")
            else:
                check(got == want, f"line {i} not byte-identical")
        check(sorted(change_tuples(report)) == expected_changes, f"changes != {expected_changes}")
        expect_drop = bool(tail) and not tail_is_record
        check(report.dropped_lines == int(expect_drop), "dropped_lines wrong")
        check(report.dropped_line_numbers == ([tail_no] if expect_drop else []), "dropped nos")
        check(report.salvaged_records == 0, "records salvaged from a torn prefix")
        check(report.rewritten_assistant_messages == len(fixed_here), "assistant count wrong")
        check(report.repaired is bool(expected_changes), "repaired flag wrong")
        if expect_drop and not fixed_here:
            check(report.summary() == "dropped 1 malformed line(s)", "summary wrong")
        if expect_drop and fixed_here:
            want_summary = (
                f"dropped 1 malformed line(s), rewrote {len(fixed_here)} assistant message(s)"
            )
            check(report.summary() == want_summary, "summary wrong")
        if not expected_changes:
            check(result == truncated, "clean cut changed")
        if report.repaired:
            backup = report.backup_path
            check(backup is not None and backup.read_bytes() == truncated, "backup != input")
            if backup is not None and backup.exists():
                backup.unlink()
        check(other_files(work, path) == [], "stray files left")

        again = repair(path, fix_messages=True, now_ms=NOW_MS + 100_000 + n)
        check(again.repaired is False, "second repair still repairs")
        check(path.read_bytes() == result, "second repair changed the file")
        path.unlink()
        work.rmdir()

    assert failures == [], "\n".join(failures[:20])


def test_truncation_inside_header(tmp_path: Path, pi_fixture: Any) -> None:
    # A file cut inside its header line has no entries at all: "empty session file" with the
    # torn line counted (repairSessionFileIfNeeded), and no rewrite. Cut right before the header's newline, the
    # header is complete and only gets its newline.
    data = pi_fixture("before-compaction.jsonl").read_bytes()
    first_nl = data.index(b"\n")
    for offset in (1, 40, first_nl // 2, first_nl - 1):
        work = tmp_path / f"cut{offset}"
        work.mkdir()
        path = work / "session.jsonl"
        truncated = data[:offset]
        path.write_bytes(truncated)
        report = repair(path)
        assert (offset, report.reason) == (offset, "empty session file")
        assert report.repaired is False
        assert report.dropped_lines == 1
        assert path.read_bytes() == truncated
        assert other_files(work, path) == []

    # The whole header without its newline is no damage to OpenClaw 2026.3.13 (conformance
    # case repair_session_file-021): untouched.
    path = tmp_path / "whole-header.jsonl"
    path.write_bytes(data[:first_nl])
    report = repair(path)
    assert report.repaired is False
    assert path.read_bytes() == data[:first_nl]


# ============================================================================================
# 4. Damage kinds
# ============================================================================================


def _session(n_messages: int = 4) -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = [header()]
    parent = None
    for i in range(n_messages):
        eid = f"e{i:07d}"
        msg = user(f"question {i}", n=i) if i % 2 == 0 else assistant([text(f"answer {i}")], n=i)
        objs.append(entry(eid, parent, msg, n=i + 1))
        parent = eid
    return objs


def test_crlf_file_with_damage_keeps_crlf_on_kept_lines(tmp_path: Path) -> None:
    objs = _session(4)
    blank = entry("blank01", "e0000003", user("   ", n=9), n=9)
    path = tmp_path / "session.jsonl"
    raw = [b(o) for o in objs]
    content = (
        b"".join(line + b"\r\n" for line in raw[:3])
        + b'{"type":"message","id":"torn\r\n'
        + b"".join(line + b"\r\n" for line in raw[3:])
        + b(blank)
        + b"\r\n"
    )
    path.write_bytes(content)

    report = repair(path, fix_messages=True)

    assert report.repaired is True
    assert report.dropped_lines == 1
    assert report.rewritten_user_messages == 1
    assert sorted(change_tuples(report)) == [(4, "dropped"), (7, "rewritten")]
    data = path.read_bytes()
    out = data.split(b"\n")
    assert out[-1] == b""
    out = out[:-1]
    assert out[:5] == [line + b"\r" for line in raw]
    assert len(out) == 6
    assert json.loads(out[5])["message"]["content"] == BLANK_USER_FALLBACK_TEXT
    assert report.backup_path is not None
    assert report.backup_path.read_bytes() == content


def test_kept_lines_keep_their_bytes_when_the_file_is_rewritten(tmp_path: Path) -> None:
    # OpenClaw 2026.3.13 re-serializes every kept entry with JSON.stringify (CRLF becomes LF,
    # spacing, escapes and key order change; conformance cases repair_session_file-010/-032/
    # -189/-201/-202). clawctx rewrites only the dropped line: every other line, its CRLF
    # ending included, keeps its exact bytes, so nothing but the damage changes on disk.
    spaced = b'{"type": "session", "id": "x", "version": 3}'
    objs = _session(2)
    crlf = b(objs[1]) + b"\r"
    escaped = b'{"type":"message","id":"e9","parentId":"e0000001","timestamp":"2026-01-01T00:00:09.000Z","message":{"role":"user","content":"caf\\u00e9 1.50","timestamp":9}}'
    content = b"\n".join([spaced, crlf, b'{"type":"mess', escaped]) + b"\n"
    path = tmp_path / "session.jsonl"
    path.write_bytes(content)

    report = repair(path)

    assert report.repaired is True
    assert report.dropped_lines == 1
    assert change_tuples(report) == [(3, "dropped")]
    assert path.read_bytes() == b"\n".join([spaced, crlf, escaped]) + b"\n"
    assert report.backup_path is not None
    assert report.backup_path.read_bytes() == content


def test_crlf_file_with_unterminated_last_line(tmp_path: Path) -> None:
    objs = _session(2)
    path = tmp_path / "session.jsonl"
    content = b"".join(b(o) + b"\r\n" for o in objs) + b'{"type":"mess'
    path.write_bytes(content)

    report = repair(path)

    assert report.repaired is True
    assert report.dropped_lines == 1
    assert path.read_bytes() == b"".join(b(o) + b"\r\n" for o in objs)


def test_utf8_bom_before_header_is_an_invalid_header(tmp_path: Path) -> None:
    # OpenClaw 2026.3.13 cannot parse a header behind a BOM (conformance cases
    # repair_session_file-012/-013): "invalid session header", the file is left alone.
    objs = _session(3)
    path = tmp_path / "session.jsonl"
    clean = b"".join(b(o) + b"\n" for o in objs)
    content = b"\xef\xbb\xbf" + clean
    path.write_bytes(content)

    report = repair(path)

    assert report.repaired is False
    assert report.dropped_lines == 1
    assert report.reason == "invalid session header"
    assert path.read_bytes() == content
    assert report.changes == []
    assert report.backup_path is None
    again = repair(path, now_ms=NOW_MS + 1)
    assert again.repaired is False
    assert again.changes == []
    assert path.read_bytes() == content


def test_utf8_bom_only_header_without_other_damage_header_check(tmp_path: Path) -> None:
    # A header behind a BOM is not JSON to OpenClaw 2026.3.13 (conformance case
    # repair_session_file-016): with nothing else in the file it is "empty session file".
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b(header()) + b"\n")
    report = repair(path)
    assert report.reason == "empty session file"
    assert report.repaired is False
    assert path.read_bytes() == b"\xef\xbb\xbf" + b(header()) + b"\n"


def test_nul_run_between_two_records_on_one_line(tmp_path: Path) -> None:
    objs = _session(4)
    raw = [b(o) for o in objs]
    path = tmp_path / "session.jsonl"
    content = b"\n".join([raw[0], raw[1], raw[2] + b"\0" * 37 + raw[3], raw[4]]) + b"\n"
    path.write_bytes(content)

    report = repair(path)

    assert report.repaired is True
    assert report.dropped_lines == 0
    assert [c.line for c in report.changes] == [3]
    assert report.changes[0].kind != "dropped"
    assert lines_of(path.read_bytes()) == raw


def test_nul_line_in_place_of_a_line(tmp_path: Path) -> None:
    objs = _session(4)
    raw = [b(o) for o in objs]
    path = tmp_path / "session.jsonl"
    content = raw[0] + b"\n" + raw[1] + b"\n" + b"\0" * 512 + b"\n" + b"\n".join(raw[2:]) + b"\n"
    path.write_bytes(content)

    report = repair(path)

    assert report.repaired is True
    assert report.dropped_lines == 1
    assert change_tuples(report) == [(3, "dropped")]
    assert lines_of(path.read_bytes()) == raw


def test_nul_run_then_record_without_newline_between(tmp_path: Path) -> None:
    # A zero-filled block left by a crash, the next writer appending right after it.
    objs = _session(4)
    raw = [b(o) for o in objs]
    path = tmp_path / "session.jsonl"
    content = b"\n".join(raw[:3]) + b"\n" + b"\0" * 4096 + raw[3] + b"\n" + raw[4] + b"\n"
    path.write_bytes(content)

    report = repair(path)

    assert report.repaired is True
    assert report.dropped_lines == 0
    assert [c.line for c in report.changes] == [4]
    assert lines_of(path.read_bytes()) == raw


def test_nul_tail_at_end_of_file_is_dropped(tmp_path: Path) -> None:
    objs = _session(2)
    raw = [b(o) for o in objs]
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(raw) + b"\n" + b"\0" * 100)

    report = repair(path)

    assert report.repaired is True
    assert report.dropped_lines == 1
    assert change_tuples(report) == [(len(raw) + 1, "dropped")]
    assert lines_of(path.read_bytes()) == raw


def test_invalid_utf8_inside_a_message_string(tmp_path: Path) -> None:
    objs = _session(4)
    raw = [b(o) for o in objs]
    bad = (
        b'{"type":"message","id":"bad00001","parentId":"e0000003","timestamp":'
        b'"2026-01-01T00:01:00.000Z","message":{"role":"user","content":"caf\xc3 ok \xff\xfe end",'
        b'"timestamp":1767225600100}}'
    )
    path = tmp_path / "session.jsonl"
    content = b"\n".join([*raw[:3], bad, *raw[3:]]) + b"\n"
    path.write_bytes(content)

    # OpenClaw 2026.3.13 reads the line lossily and finds valid JSON (conformance cases
    # repair_session_file-014/-036): the file is left alone.
    assert repair(path).repaired is False
    assert path.read_bytes() == content

    # When another line is damaged, the line keeps its exact bytes (upstream would write it
    # back with U+FFFD in place of the invalid bytes, in the backup too).
    damaged = content + b'{"type":"mess\n'
    path.write_bytes(damaged)
    report = repair(path)

    assert report.repaired is True
    assert report.dropped_lines == 1
    assert [c.line for c in report.changes] == [len(raw) + 2]
    assert report.changes[0].kind == "dropped"
    out = lines_of(path.read_bytes())
    assert len(out) == len(raw) + 1
    assert out[:3] == raw[:3]
    assert out[4:] == raw[3:]
    assert out[3] == bad
    kept = json.loads(out[3].decode("utf-8", errors="replace"))
    assert kept["id"] == "bad00001"
    assert kept["message"]["content"] == "caf\ufffd ok \ufffd\ufffd end"
    expected = json.loads(bad.decode("utf-8", errors="replace"))
    assert kept == expected
    assert report.backup_path is not None
    assert report.backup_path.read_bytes() == damaged


def test_torn_record_followed_by_complete_record_on_same_line(tmp_path: Path) -> None:
    objs = _session(4)
    raw = [b(o) for o in objs]
    torn = raw[3][: len(raw[3]) // 2]
    path = tmp_path / "session.jsonl"
    content = b"\n".join(raw[:3]) + b"\n" + torn + raw[4] + b"\n"
    path.write_bytes(content)

    report = repair(path)

    assert report.repaired is True
    assert report.salvaged_records == 1
    assert change_tuples(report) == [(4, "salvaged")]
    assert "salvaged 1 record(s)" in report.summary()
    assert lines_of(path.read_bytes()) == [*raw[:3], raw[4]]
    assert report.backup_path is not None
    assert report.backup_path.read_bytes() == content


def test_torn_record_followed_by_complete_record_mid_file(tmp_path: Path) -> None:
    objs = _session(6)
    raw = [b(o) for o in objs]
    torn = raw[2][:60]
    path = tmp_path / "session.jsonl"
    content = b"\n".join([raw[0], raw[1], torn + raw[3], *raw[4:]]) + b"\n"
    path.write_bytes(content)

    report = repair(path)

    assert report.repaired is True
    assert report.salvaged_records == 1
    assert lines_of(path.read_bytes()) == [raw[0], raw[1], *raw[3:]]
    assert [c.line for c in report.changes] == [3]


def test_two_complete_records_glued_on_one_line(tmp_path: Path) -> None:
    objs = _session(4)
    raw = [b(o) for o in objs]
    path = tmp_path / "session.jsonl"
    content = b"\n".join([raw[0], raw[1], raw[2] + raw[3], raw[4]]) + b"\n"
    path.write_bytes(content)

    report = repair(path)

    assert report.repaired is True
    assert report.dropped_lines == 0
    assert [c.line for c in report.changes] == [3]
    assert report.changes[0].kind != "dropped"
    assert lines_of(path.read_bytes()) == raw


def test_three_records_glued_with_whitespace_between(tmp_path: Path) -> None:
    objs = _session(4)
    raw = [b(o) for o in objs]
    path = tmp_path / "session.jsonl"
    content = b"\n".join([raw[0], raw[1] + b" " + raw[2] + b"\t" + raw[3], raw[4]]) + b"\n"
    path.write_bytes(content)

    report = repair(path)

    assert report.repaired is True
    assert report.dropped_lines == 0
    assert lines_of(path.read_bytes()) == raw


def test_blank_lines_are_kept_when_clean(tmp_path: Path) -> None:
    raw = [b(o) for o in _session(2)]
    path = tmp_path / "session.jsonl"
    content = raw[0] + b"\n\n" + raw[1] + b"\n   \n\t\n" + raw[2] + b"\n\n"
    path.write_bytes(content)

    report = repair(path)

    assert_untouched(report, path, content)


def test_blank_lines_are_kept_when_other_lines_are_repaired(tmp_path: Path) -> None:
    raw = [b(o) for o in _session(2)]
    path = tmp_path / "session.jsonl"
    content = raw[0] + b"\n\n" + raw[1] + b"\n   \nnot json\n" + raw[2] + b"\n\n"
    path.write_bytes(content)

    report = repair(path)

    assert report.repaired is True
    assert report.dropped_lines == 1
    assert change_tuples(report) == [(5, "dropped")]
    assert path.read_bytes() == raw[0] + b"\n\n" + raw[1] + b"\n   \n" + raw[2] + b"\n\n"


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param({"role": "", "content": "x"}, id="empty-role"),
        pytest.param({"role": "   ", "content": "x"}, id="blank-role"),
        pytest.param({"content": "x"}, id="missing-role"),
        pytest.param({"role": None, "content": "x"}, id="null-role"),
        pytest.param({"role": 3, "content": "x"}, id="numeric-role"),
        pytest.param(None, id="null-message"),
        pytest.param("user: hi", id="string-message"),
        pytest.param([{"role": "user"}], id="array-message"),
        pytest.param(..., id="missing-message"),
    ],
)
def test_message_without_role_is_dropped(tmp_path: Path, bad: Any) -> None:
    raw = [b(o) for o in _session(2)]
    bad_entry: dict[str, Any] = {
        "type": "message",
        "id": "badrole1",
        "parentId": "e0000001",
        "timestamp": ts(30),
    }
    if bad is not ...:
        bad_entry["message"] = bad
    path = tmp_path / "session.jsonl"
    content = b"\n".join([raw[0], raw[1], b(bad_entry), raw[2]]) + b"\n"
    path.write_bytes(content)

    report = repair(path, fix_messages=True)

    assert report.repaired is True
    assert report.dropped_lines == 1
    assert report.summary() == "dropped 1 malformed line(s)"
    assert change_tuples(report) == [(3, "dropped")]
    assert lines_of(path.read_bytes()) == raw


def test_non_message_entries_without_role_are_kept(tmp_path: Path) -> None:
    # The role check applies to type "message" only.
    path = tmp_path / "session.jsonl"
    objs = [
        header(),
        {
            "type": "model_change",
            "id": "m1",
            "parentId": None,
            "timestamp": ts(1),
            "provider": "anthropic",
            "modelId": "claude",
        },
        {
            "type": "custom",
            "id": "c1",
            "parentId": "m1",
            "timestamp": ts(2),
            "customType": "x",
            "data": {"message": None},
        },
        {"type": "unknown_future_type", "id": "f1", "parentId": "c1", "timestamp": ts(3)},
    ]
    write_jsonl(path, objs)
    original = path.read_bytes()
    assert_untouched(repair(path), path, original)


# ============================================================================================
# 5. Atomicity and safety
# ============================================================================================


def _damaged_session(path: Path) -> bytes:
    raw = [b(o) for o in _session(3)]
    content = b"\n".join(raw) + b"\n" + b'{"type":"message","id":"tor'
    path.write_bytes(content)
    return content


def test_file_mode_is_preserved(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    _damaged_session(path)
    os.chmod(path, 0o640)

    report = repair(path, backup="delete")

    assert report.repaired is True
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_file_mode_is_preserved_with_backup_kept(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    _damaged_session(path)
    os.chmod(path, 0o604)

    report = repair(path)

    assert report.repaired is True
    assert stat.S_IMODE(path.stat().st_mode) == 0o604
    assert report.backup_path is not None
    assert stat.S_IMODE(report.backup_path.stat().st_mode) == 0o604


def _directory_is_really_read_only(directory: Path) -> bool:
    probe = directory / ".probe"
    try:
        probe.write_bytes(b"")
    except PermissionError:
        return True
    probe.unlink()
    return False


def test_read_only_directory_leaves_original_untouched(tmp_path: Path) -> None:
    work = tmp_path / "ro"
    work.mkdir()
    path = work / "session.jsonl"
    content = _damaged_session(path)
    inode = path.stat().st_ino
    os.chmod(work, 0o500)
    try:
        if not _directory_is_really_read_only(work):
            pytest.skip("directory stays writable (running as root)")
        try:
            report = repair(path)
        except clawctx.RepairError:
            pass
        else:
            assert report.repaired is False
            assert report.reason is not None
            assert "repair failed" in report.reason
        assert path.read_bytes() == content
        assert path.stat().st_ino == inode
        assert other_files(work, path) == [], "temp or backup file left"
    finally:
        os.chmod(work, 0o700)


def test_failed_rewrite_raises_and_leaves_original_untouched(tmp_path: Path) -> None:
    # Works as root too: the temp file's name (".<name>.clawctx-repair-<pid>-<now>.tmp") is occupied
    # by a directory, so the rewrite cannot happen.
    path = tmp_path / "session.jsonl"
    content = _damaged_session(path)
    inode = path.stat().st_ino
    blocker = tmp_path / f".{path.name}.clawctx-repair-{os.getpid()}-{NOW_MS}.tmp"
    blocker.mkdir()

    with pytest.raises(clawctx.RepairError):
        repair(path, now_ms=NOW_MS)

    assert path.read_bytes() == content
    assert path.stat().st_ino == inode
    assert blocker.is_dir() and list(blocker.iterdir()) == []
    assert other_files(tmp_path, path, blocker) == [], "temp or backup file left"
    assert issubclass(clawctx.RepairError, clawctx.ClawctxError)


def test_no_temp_file_remains_after_success(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    _damaged_session(path)
    report = repair(path)
    assert report.repaired is True
    assert report.backup_path is not None
    leftovers = other_files(tmp_path, path, report.backup_path)
    assert leftovers == []
    assert not any(name.endswith(".tmp") for name in os.listdir(tmp_path))


def test_repair_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    _damaged_session(path)
    first = repair(path, backup="delete")
    assert first.repaired is True
    after_first = path.read_bytes()
    inode = path.stat().st_ino
    mtime = path.stat().st_mtime_ns

    second = repair(path, now_ms=NOW_MS + 1)

    assert_untouched(second, path, after_first)
    assert path.stat().st_ino == inode
    assert path.stat().st_mtime_ns == mtime


@pytest.mark.parametrize(
    "line", [b"[1,2]", b'"a string"', b"42", b"null", b"true", b'[{"type":"message"}]', b"-0.5e3"]
)
def test_non_object_json_lines_are_kept(tmp_path: Path, line: bytes) -> None:
    # OpenClaw 2026.3.13 keeps valid non-object JSON lines (conformance case
    # repair_session_file-006): alone they are no damage, and a rewrite keeps them too.
    objs = _session(2)
    path = tmp_path / "session.jsonl"
    content = b"".join(b(o) + b"\n" for o in objs) + line + b"\n"
    path.write_bytes(content)
    report = repair(path)
    assert report.repaired is False
    assert path.read_bytes() == content
    path.write_bytes(content + b'{"type":"mess\n')
    report = repair(path, now_ms=NOW_MS + 1)
    assert report.repaired is True
    assert report.dropped_lines == 1
    assert path.read_bytes() == content


def test_js_whitespace_lines_are_blank(tmp_path: Path) -> None:
    # Lines blank after JavaScript's trim() (NBSP, U+2028, a lone BOM) are skipped upstream
    # (conformance case repair_session_file-051), not dropped as malformed.
    objs = _session(2)
    path = tmp_path / "session.jsonl"
    content = (
        b(objs[0])
        + b"\n\xc2\xa0\n"
        + b(objs[1])
        + b"\n\xe2\x80\xa8 \n\xef\xbb\xbf\n"
        + b(objs[2])
        + b"\n"
    )
    path.write_bytes(content)
    report = repair(path)
    assert report.repaired is False
    assert report.reason is None
    assert path.read_bytes() == content


def test_repair_warns_like_upstream(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # OpenClaw 2026.3.13 warns on a repair and on a damaged file it skips for its header.
    objs = _session(2)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(b(o) + b"\n" for o in objs) + b'{"type":"mess\n')
    with caplog.at_level(logging.DEBUG, logger="clawctx"):
        repair(path)
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "session file repaired: dropped 1 malformed line(s) (session.jsonl)")
    ]
    caplog.clear()
    path.write_bytes(b(objs[1]) + b"\n" + b(objs[0]) + b"\nnot json\n")
    with caplog.at_level(logging.DEBUG, logger="clawctx"):
        report = repair(path)
    assert report.reason == "invalid session header"
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "session file repair skipped: invalid session header (session.jsonl)")
    ]
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="clawctx"):
        repair(tmp_path / "missing.jsonl")
        path.write_bytes(b"".join(b(o) + b"\n" for o in objs))
        repair(path)
    assert caplog.records == []


def test_padded_path_is_trimmed(tmp_path: Path) -> None:
    objs = _session(2)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(b(o) + b"\n" for o in objs) + b'{"type":"mess\n')
    report = clawctx.repair_session_file(f"  {path}\n", now_ms=NOW_MS)
    assert report.repaired is True
    assert report.dropped_lines == 1
    assert path.read_bytes() == b"".join(b(o) + b"\n" for o in objs)


def test_clean_file_is_not_rewritten(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "session.jsonl", _session(6))
    original = path.read_bytes()
    inode = path.stat().st_ino
    mtime = path.stat().st_mtime_ns

    report = repair(path)

    assert report.dropped_lines == 0
    assert report.summary() == ""
    assert_untouched(report, path, original)
    assert path.stat().st_ino == inode
    assert path.stat().st_mtime_ns == mtime


def test_held_lock_raises_session_lock_error(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    content = _damaged_session(path)
    with open(path, "rb") as holder:
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)
        try:
            with pytest.raises(clawctx.SessionLockError):
                repair(path, lock_timeout=0.2)
        finally:
            fcntl.flock(holder.fileno(), fcntl.LOCK_UN)
    assert path.read_bytes() == content
    assert other_files(tmp_path, path) == []
    # once the lock is free the repair goes through
    assert repair(path).repaired is True


# ============================================================================================
# 6. Property: valid lines keep their bytes, only garbage is dropped
# ============================================================================================

_WORDS = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=24,
).map(lambda s: "w" + s)  # never blank after any kind of trim


@st.composite
def _message_entry(draw: st.DrawFn, eid: str, parent: str | None, n: int) -> dict[str, Any]:
    kind = draw(st.sampled_from(["user-str", "user-blocks", "assistant", "tool", "silent"]))
    if kind == "user-str":
        msg = user(draw(_WORDS), n=n)
    elif kind == "user-blocks":
        blocks = [text(draw(_WORDS))]
        if draw(st.booleans()):
            blocks.append(image())
        msg = user(blocks, n=n)
    elif kind == "assistant":
        content: list[dict[str, Any]] = [text(draw(_WORDS))]
        if draw(st.booleans()):
            content.append(
                {
                    "type": "toolCall",
                    "id": f"call_{n}",
                    "name": "read",
                    "arguments": {"path": draw(_WORDS), "limit": draw(st.integers(0, 10**6))},
                }
            )
        stop = draw(st.sampled_from(["stop", "toolUse", "error", "aborted", "length"]))
        msg = assistant(content, stop_reason=stop, n=n)
    elif kind == "tool":
        msg = {
            "role": "toolResult",
            "toolCallId": f"call_{n}",
            "toolName": "read",
            "content": [text(draw(_WORDS))],
            "isError": draw(st.booleans()),
            "timestamp": NOW_MS + n,
        }
    else:
        msg = assistant([], stop_reason="stop", n=n)  # silent NO_REPLY turn: kept
    return entry(eid, parent, msg, n=n)


@st.composite
def _valid_entry(draw: st.DrawFn, eid: str, parent: str | None, n: int) -> dict[str, Any]:
    kind = draw(st.sampled_from(["message", "message", "message", "model", "thinking", "label"]))
    base = {"id": eid, "parentId": parent, "timestamp": ts(n)}
    if kind == "message":
        return draw(_message_entry(eid, parent, n))
    if kind == "model":
        return {"type": "model_change", **base, "provider": "anthropic", "modelId": draw(_WORDS)}
    if kind == "thinking":
        level = draw(st.sampled_from(["off", "low", "high"]))
        return {"type": "thinking_level_change", **base, "thinkingLevel": level}
    return {"type": "label", **base, "targetId": parent or eid, "label": draw(_WORDS)}


def _format(obj: dict[str, Any], style: str) -> bytes:
    if style == "compact":
        return dump_line(obj).encode()
    if style == "spaced":
        return json.dumps(obj, ensure_ascii=False).encode()
    if style == "ascii":
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=True).encode()
    return dump_line(obj).encode() + b" \t"  # trailing whitespace


def _contains_json_object(data: bytes) -> bool:
    """Whether any '{' in the (lossily decoded) bytes starts a complete JSON object."""
    textual = data.decode("utf-8", errors="replace")
    decoder = json.JSONDecoder()
    for i, ch in enumerate(textual):
        if ch == "{":
            try:
                value, _ = decoder.raw_decode(textual, i)
            except ValueError:
                continue
            if isinstance(value, dict):
                return True
    return False


def _is_blank(data: bytes) -> bool:
    return all(c in b" \t\r" for c in data)


# JavaScript's `trim()` whitespace (WhiteSpace and LineTerminator, BOM included).
_JS_WHITESPACE = "\t\n\v\f\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def _upstream_keeps(data: bytes) -> bool:
    """Whether OpenClaw 2026.3.13 keeps the line rather than dropping it: blank after JS
    `trim()`, or any valid JSON value (a number, a string, an array) after a lossy decode."""
    textual = data.decode("utf-8", errors="replace")
    if not textual.strip(_JS_WHITESPACE):
        return True
    try:
        json.loads(textual)
    except ValueError:
        return False
    return True


_JUNK_TEXT = st.text(
    alphabet=st.sampled_from(list('{}[]":,ab1 \t\r\x00\\/eé✓')), min_size=1, max_size=40
).map(lambda s: s.encode())
_JUNK_BYTES = st.binary(min_size=1, max_size=40).map(lambda bs: bs.replace(b"\n", b"\xff"))
_NULS = st.integers(1, 300).map(lambda k: b"\0" * k)


@st.composite
def _session_with_garbage(draw: st.DrawFn) -> tuple[list[bytes], list[bool], bool]:
    """Returns (lines, is_garbage flags, final line unterminated)."""
    count = draw(st.integers(1, 12))
    head = _format(header(), draw(st.sampled_from(["compact", "spaced"])))
    lines: list[bytes] = [head]
    flags: list[bool] = [False]
    parent: str | None = None
    valid: list[bytes] = []
    for i in range(count):
        eid = f"{i + 1:08x}"
        obj = draw(_valid_entry(eid, parent, i + 1))
        parent = eid
        style = draw(st.sampled_from(["compact", "compact", "spaced", "ascii", "trailing"]))
        valid.append(_format(obj, style))
    torn_source = [dump_line(draw(_valid_entry("t0000001", None, 99))).encode() for _ in range(2)]
    for line in valid:
        for _ in range(draw(st.integers(0, 2))):
            g = draw(
                st.one_of(
                    _JUNK_TEXT,
                    _JUNK_BYTES,
                    _NULS,
                    st.sampled_from(torn_source).flatmap(
                        lambda s: st.integers(1, len(s) - 1).map(lambda k, s=s: s[:k])
                    ),
                )
            )
            # Lines upstream keeps (valid non-object JSON, JS-blank lines) are not garbage: they
            # have their own tests (conformance cases repair_session_file-006/-051).
            if _is_blank(g) or _contains_json_object(g) or _upstream_keeps(g):
                continue
            lines.append(g)
            flags.append(True)
        lines.append(line)
        flags.append(False)
    unterminated = False
    if draw(st.booleans()):
        source = draw(st.sampled_from(torn_source))
        tail = source[: draw(st.integers(1, len(source) - 1))]
        lines.append(tail)
        flags.append(True)
        unterminated = True
    return lines, flags, unterminated


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=_session_with_garbage())
def test_property_valid_lines_kept_garbage_dropped(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[list[bytes], list[bool], bool]
) -> None:
    lines, flags, unterminated = case
    work = tmp_path_factory.mktemp("prop")
    path = work / "session.jsonl"
    content = b"\n".join(lines) + (b"" if unterminated else b"\n")
    path.write_bytes(content)
    garbage_numbers = [i + 1 for i, g in enumerate(flags) if g]
    kept = [line for line, g in zip(lines, flags, strict=True) if not g]

    report = repair(path)

    result = path.read_bytes()
    if garbage_numbers:
        assert result == b"".join(line + b"\n" for line in kept)
    else:
        # Nothing to repair: untouched, even without a final newline (OpenClaw 2026.3.13).
        assert result == content
    assert report.dropped_lines == len(garbage_numbers)
    assert report.dropped_line_numbers == garbage_numbers
    assert change_tuples(report) == [(n, "dropped") for n in garbage_numbers]
    assert report.salvaged_records == 0
    assert report.rewritten_assistant_messages == 0
    assert report.rewritten_user_messages == 0
    assert report.repaired is bool(garbage_numbers)
    if garbage_numbers:
        assert report.backup_path is not None
        assert report.backup_path.read_bytes() == content
        assert other_files(work, path, report.backup_path) == []
    else:
        assert report.backup_path is None
        assert other_files(work, path) == []
    assert repair(path, now_ms=NOW_MS + 1).repaired is False
