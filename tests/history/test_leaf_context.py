"""``read_leaf_context``: the last entry's context read from the end of the file gives what
``Session.open(path, read_only=True).context()`` gives, reading only as far back as needed.
(The randomized comparison on damaged files, chunk sizes of a few bytes and cyclic or
duplicated ids is in rust/core/src/session/leaf_context.rs.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import clawctx
from benches.generate import generate_session
from tests.conftest import dump_line, write_jsonl

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z"}
TS = "2026-01-01T00:00:00.000Z"


def full_context(path: Path) -> clawctx.SessionContext:
    return clawctx.Session.open(path, read_only=True).context()


def assert_same_context(leaf: clawctx.LeafContext, path: Path) -> None:
    expected = full_context(path)
    assert leaf.messages.to_json() == expected.messages.to_json()
    assert leaf.thinking_level == expected.thinking_level
    assert leaf.model == expected.model
    context = leaf.context()
    assert context.messages.to_json() == expected.messages.to_json()
    assert (context.thinking_level, context.model) == (expected.thinking_level, expected.model)


def message(id_: str, parent: str | None, text: str, role: str = "user") -> dict[str, Any]:
    body: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}]}
    if role == "assistant":
        body.update(provider="anthropic", model="claude", api="anthropic-messages")
    return {"type": "message", "id": id_, "parentId": parent, "timestamp": TS, "message": body}


def compacted_session(path: Path, history: int) -> Path:
    """A thinking level set at the start, a long history, a compaction keeping two entries."""
    entries: list[dict[str, Any]] = [
        HEADER,
        {
            "type": "thinking_level_change",
            "id": "t",
            "parentId": None,
            "timestamp": TS,
            "thinkingLevel": "high",
        },
    ]
    parent = "t"
    for i in range(history):
        entries.append(message(f"m{i}", parent, "old turn " * 40, "user" if i % 2 else "assistant"))
        parent = f"m{i}"
    entries.append(
        {
            "type": "compaction",
            "id": "c",
            "parentId": parent,
            "timestamp": TS,
            "summary": "earlier work",
            "firstKeptEntryId": f"m{history - 2}",
            "tokensBefore": 1234,
        }
    )
    entries.append(message("new", "c", "what next?"))
    return write_jsonl(path, entries)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("damage", [False, True])
@pytest.mark.parametrize("chunk_bytes", [1, 4096, 262144])
def test_generated_sessions_match_a_full_open(
    tmp_path: Path, seed: int, damage: bool, chunk_bytes: int
) -> None:
    """Branches, compactions, images, thinking, a torn last line and garbage lines."""
    path = generate_session(
        tmp_path / "s.jsonl",
        300_000,
        seed=seed,
        damage=damage,
        fixtures=None,
        compact_at_tokens=20_000,
    ).path
    assert_same_context(clawctx.read_leaf_context(path, chunk_bytes=chunk_bytes), path)


def test_generated_session_without_compaction_reads_the_whole_path(tmp_path: Path) -> None:
    path = generate_session(
        tmp_path / "s.jsonl", 200_000, seed=1, fixtures=None, compact_at_tokens=None
    ).path
    leaf = clawctx.read_leaf_context(path, chunk_bytes=1024)
    assert_same_context(leaf, path)


def test_real_pi_sessions_match_a_full_open(pi_fixture: Any) -> None:
    for name in ("before-compaction.jsonl", "large-session.jsonl"):
        path = pi_fixture(name)
        for chunk_bytes in (64, 262144):
            assert_same_context(clawctx.read_leaf_context(path, chunk_bytes=chunk_bytes), path)


def test_only_the_end_of_a_compacted_session_is_read(tmp_path: Path) -> None:
    path = compacted_session(tmp_path / "s.jsonl", 3000)
    size = path.stat().st_size
    leaf = clawctx.read_leaf_context(path, chunk_bytes=2048)
    assert not leaf.read_in_full
    assert leaf.file_size == size
    roles = [m["role"] for m in leaf.messages]
    assert roles == ["compactionSummary", "assistant", "user", "user"]
    assert leaf.bytes_read < 8192 < size
    # The latest assistant message is among the lines read: the model needs no more.
    assert leaf.model == {"provider": "anthropic", "modelId": "claude"}
    assert leaf.bytes_read < 8192
    # The thinking level was set at the start of the file: asking for it reads the rest.
    assert leaf.thinking_level == "high"
    assert leaf.bytes_read >= size - len(dump_line(HEADER)) - 1
    assert leaf.model == {"provider": "anthropic", "modelId": "claude"}
    assert_same_context(leaf, path)


def test_appends_after_opening_are_not_read(tmp_path: Path) -> None:
    path = compacted_session(tmp_path / "s.jsonl", 50)
    leaf = clawctx.read_leaf_context(path, chunk_bytes=512)
    size = leaf.file_size
    before = leaf.messages.to_json()
    with path.open("a") as f:
        f.write(dump_line(message("later", "new", "appended")) + "\n")
    assert leaf.thinking_level == "high"
    assert leaf.messages.to_json() == before
    assert leaf.file_size == size


def test_a_file_truncated_while_read_is_an_error_not_a_wrong_answer(tmp_path: Path) -> None:
    path = compacted_session(tmp_path / "s.jsonl", 200)
    leaf = clawctx.read_leaf_context(path, chunk_bytes=512)
    assert leaf.bytes_read < path.stat().st_size // 2
    os.truncate(path, 1000)
    with pytest.raises(clawctx.ClawctxError, match="shrank"):
        _ = leaf.thinking_level


def test_files_needing_a_full_open_are_opened_in_full(tmp_path: Path) -> None:
    v1 = tmp_path / "v1.jsonl"
    write_jsonl(
        v1,
        [
            {"type": "session", "id": "s", "timestamp": TS},
            {
                "type": "message",
                "timestamp": TS,
                "message": {"role": "user", "content": "hi", "timestamp": 1},
            },
        ],
    )
    leaf = clawctx.read_leaf_context(v1)
    assert leaf.read_in_full
    assert leaf.bytes_read == v1.stat().st_size
    assert [m["content"] for m in leaf.messages] == ["hi"]
    assert_same_context(leaf, v1)
    header_after_garbage = tmp_path / "late-header.jsonl"
    header_after_garbage.write_text(
        "not json\n" + dump_line(HEADER) + "\n" + dump_line(message("a", None, "x")) + "\n"
    )
    leaf = clawctx.read_leaf_context(header_after_garbage)
    assert not leaf.read_in_full
    assert_same_context(leaf, header_after_garbage)


def test_errors_are_those_of_a_read_only_open(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(clawctx.SessionFormatError):
        clawctx.read_leaf_context(empty)
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text('{"type":"message"}\n')
    with pytest.raises(clawctx.SessionFormatError):
        clawctx.read_leaf_context(garbage)
    with pytest.raises(FileNotFoundError):
        clawctx.read_leaf_context(tmp_path / "missing.jsonl")
    with pytest.raises(ValueError, match="chunk_bytes"):
        clawctx.read_leaf_context(garbage, chunk_bytes=0)


def test_a_header_only_session_has_an_empty_context(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [HEADER])
    leaf = clawctx.read_leaf_context(path)
    assert len(leaf.messages) == 0
    assert (leaf.thinking_level, leaf.model) == ("off", None)
    assert "LeafContext(messages=0" in repr(leaf)
