"""Session.refresh() (incremental reload) and scan_sessions (parallel summaries)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import clawctx

T0 = 1767225600000


def user(text: str, ts: int = 1) -> dict[str, object]:
    return {"role": "user", "content": text, "timestamp": ts}


def assistant(text: str, ts: int = 2) -> dict[str, object]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "provider": "p",
        "model": "m",
        "stopReason": "stop",
        "timestamp": ts,
    }


def make(tmp_path: Path) -> tuple[Path, clawctx.Session]:
    path = tmp_path / "s.jsonl"
    writer = clawctx.Session.create(path, cwd="/", now_ms=T0, fsync=False)
    writer.append_message(user("one"))
    return path, writer


def same_as_fresh_open(session: clawctx.Session, path: Path) -> None:
    fresh = clawctx.Session.open(path)
    assert session.entries() == fresh.entries()
    assert session.leaf_id == fresh.leaf_id
    assert session.context().messages == fresh.context().messages
    assert [s.line for s in session.skipped_lines] == [s.line for s in fresh.skipped_lines]


def test_unchanged_and_incremental(tmp_path: Path) -> None:
    path, writer = make(tmp_path)
    reader = clawctx.Session.open(path)
    report = reader.refresh()
    assert (report.mode, report.appended_entries, report.bytes_read) == ("unchanged", 0, 0)
    size_before = path.stat().st_size
    writer.append_message(assistant("two"))
    writer.append_message(user("three"))
    report = reader.refresh()
    assert report.mode == "incremental"
    assert report.appended_entries == 2
    assert report.bytes_read == path.stat().st_size - size_before
    assert report.reason is None
    assert reader.leaf_id == writer.leaf_id
    assert reader.context().messages.roles() == ["user", "assistant", "user"]
    same_as_fresh_open(reader, path)


def test_own_appends_are_not_read_twice(tmp_path: Path) -> None:
    path, writer = make(tmp_path)
    reader = clawctx.Session.open(path)
    reader.append_message(assistant("mine"))
    assert reader.refresh().mode == "unchanged"
    # Interleaved: another writer appends, then we do; refresh reads theirs and skips ours.
    writer.append_message(user("theirs"))
    reader.append_message(assistant("mine again"))
    report = reader.refresh()
    assert report.mode == "incremental"
    assert report.appended_entries == 1
    assert len(reader) == 4
    assert len({e["id"] for e in reader.entries()}) == 4


def test_truncation_replacement_and_rewrite_fall_back_to_full_load(tmp_path: Path) -> None:
    path, writer = make(tmp_path)
    writer.append_message(assistant("two"))
    reader = clawctx.Session.open(path)
    with path.open("r+b") as f:
        f.truncate(path.stat().st_size - 10)
    report = reader.refresh()
    assert (report.mode, report.reason) == ("full", "the file was truncated")
    same_as_fresh_open(reader, path)

    replacement = tmp_path / "other.jsonl"
    shutil.copy(path, replacement)
    os.replace(replacement, path)
    assert reader.refresh().reason == "the file was replaced"

    # Same inode, same size, different bytes before the boundary: a rewrite.
    data = path.read_bytes()
    changed = data.replace(b'"one"', b'"ONE"')
    assert len(changed) == len(data) and changed != data
    with path.open("r+b") as f:
        f.write(changed)
    with path.open("ab") as f:
        f.write(b"\n")
    report = reader.refresh()
    assert (report.mode, report.reason) == ("full", "the file was rewritten")
    assert reader.context().messages[0]["content"] == "ONE"


def test_torn_last_line_is_read_again_once_complete(tmp_path: Path) -> None:
    path, writer = make(tmp_path)
    record = json.dumps(
        {
            "type": "message",
            "id": "abcd1234",
            "parentId": writer.leaf_id,
            "timestamp": "2026-01-01T00:00:05.000Z",
            "message": user("late"),
        },
        separators=(",", ":"),
    )
    with path.open("a") as f:
        f.write(record[:20])
    reader = clawctx.Session.open(path)
    assert [s.line for s in reader.skipped_lines] == [3]
    with path.open("a") as f:
        f.write(record[20:] + "\n")
    report = reader.refresh()
    assert report.mode == "incremental"
    assert report.appended_entries == 1
    assert reader.leaf_id == "abcd1234"
    assert reader.get_entry("abcd1234") is not None
    assert reader.skipped_lines == []
    same_as_fresh_open(reader, path)


def test_cached_token_facts_survive_refresh(tmp_path: Path) -> None:
    path, writer = make(tmp_path)
    reader = clawctx.Session.open(path)
    before = reader.context().messages.token_counts().tolist()
    writer.append_message(assistant("x" * 400))
    reader.refresh()
    after = reader.context().messages.token_counts().tolist()
    assert after[: len(before)] == before
    assert after[-1] == 100


def test_unsaved_migration_forces_full_load_and_memory_sessions_are_unchanged(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v1.jsonl"
    path.write_text(
        '{"type":"session","id":"x","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}\n'
    )
    session = clawctx.Session.open(path)
    with path.open("a") as f:
        f.write(
            json.dumps(
                {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z", "message": user("hi")}
            )
            + "\n"
        )
    report = session.refresh()
    assert (report.mode, report.reason) == ("full", "the session has an unsaved migration")
    assert len(session) == 1 and session.needs_migration
    assert clawctx.Session.in_memory().refresh().mode == "unchanged"


APPENDER = textwrap.dedent(
    """
    import sys, clawctx
    session = clawctx.Session.open(sys.argv[1], fsync=False)
    for i in range(int(sys.argv[2])):
        session.append_message({"role": "user", "content": f"w{i}", "timestamp": i})
    """
)


def test_refresh_while_another_process_appends(tmp_path: Path) -> None:
    path, _ = make(tmp_path)
    reader = clawctx.Session.open(path)
    count = 300
    with subprocess.Popen([sys.executable, "-c", APPENDER, str(path), str(count)]) as proc:
        while proc.poll() is None:
            reader.refresh()
        assert proc.wait() == 0
    reader.refresh()
    assert len(reader) == 1 + count
    same_as_fresh_open(reader, path)


def test_scan_sessions_in_order_with_errors_and_progress(tmp_path: Path) -> None:
    paths = []
    for n in range(6):
        path = tmp_path / f"s{n}.jsonl"
        session = clawctx.Session.create(path, cwd=f"/w{n}", session_id=f"id-{n}", fsync=False)
        for i in range(n):
            session.append_message(user("x" * 8, i))
        paths.append(path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("garbage\n")
    paths.insert(2, bad)
    paths.append(tmp_path / "missing.jsonl")
    seen: list[tuple[int, int]] = []
    out = clawctx.scan_sessions(
        paths, workers=2, progress=lambda done, total: seen.append((done, total))
    )
    assert [s.path for s in out] == paths
    assert out[2].error is not None and "no valid JSON record" in out[2].error
    assert out[-1].error is not None
    good = [s for s in out if s.error is None]
    assert [s.session_id for s in good] == [f"id-{n}" for n in range(6)]
    assert [s.entries for s in good] == list(range(6))
    assert [s.estimated_tokens for s in good] == [2 * n for n in range(6)]
    assert good[3].cwd == "/w3" and good[3].context_messages == 3
    assert good[0].size_bytes == paths[0].stat().st_size
    assert seen == [(i, len(paths)) for i in range(1, len(paths) + 1)]


def test_scan_sessions_progress_errors_are_raised(tmp_path: Path) -> None:
    path, _ = make(tmp_path)

    def boom(done: int, total: int) -> None:
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        clawctx.scan_sessions([path, path], progress=boom)
    assert clawctx.scan_sessions([]) == []


def test_scan_sessions_on_real_fixtures(pi_fixture: object) -> None:
    assert callable(pi_fixture)
    paths = [pi_fixture("large-session.jsonl"), pi_fixture("before-compaction.jsonl")]
    out = clawctx.scan_sessions(paths)
    for summary, path in zip(out, paths, strict=True):
        session = clawctx.Session.open(path, read_only=True)
        assert summary.error is None
        assert summary.entries == len(session)
        assert summary.migration_needed is True
        assert summary.context_messages == len(session.context().messages)
        assert summary.estimated_tokens == int(session.context().messages.token_counts().sum())


def test_cached_context_always_equals_a_full_rebuild(tmp_path: Path) -> None:
    """Session.context() extends its last context when entries follow its leaf; after any mix
    of appends, branches, compactions and duplicate ids it must equal a rebuild from scratch."""
    import random

    rng = random.Random(5)
    session = clawctx.Session.create(tmp_path / "s.jsonl", cwd="/", now_ms=T0, fsync=False)
    for step in range(120):
        action = rng.choice(
            ["user", "assistant", "assistant", "branch", "compaction", "thinking", "dup"]
        )
        ids = [e["id"] for e in session.entries()]
        if action == "user":
            session.append_message(user(f"u{step}", step))
        elif action == "assistant":
            session.append_message(assistant(f"a{step}", step))
        elif action == "branch" and ids:
            session.branch(rng.choice(ids))
        elif action == "compaction" and ids:
            session.append_compaction(f"summary {step}", rng.choice(ids), step)
        elif action == "thinking":
            session.append_thinking_level_change(rng.choice(["low", "high"]))
        elif action == "dup" and ids and session.leaf_id is not None:
            # Another writer appends an entry that reuses an existing id.
            with session.path.open("a") as f:  # type: ignore[union-attr]
                f.write(
                    json.dumps(
                        {
                            "type": "message",
                            "id": rng.choice(ids),
                            "parentId": session.leaf_id,
                            "timestamp": "2026-01-01T00:00:09.000Z",
                            "message": user(f"dup{step}"),
                        },
                        separators=(",", ":"),
                    )
                    + "\n"
                )
            session.refresh()
        cached = session.context()
        rebuilt = clawctx.build_session_context(session.entries(), session.leaf_id)
        assert cached.messages == rebuilt.messages, step
        assert (cached.thinking_level, cached.model) == (rebuilt.thinking_level, rebuilt.model), (
            step
        )
