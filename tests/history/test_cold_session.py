"""``Session.open(path, lazy=True)``: a session that starts from the end of its file (the
leaf's context, as ``read_leaf_context`` reads it) and behaves as a full open — context,
refresh, appends — loading the rest of the file only when something asks for what lies before.
(The randomized comparison of the backward read on damaged files is in
rust/core/src/session/leaf_context.rs.)
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import clawctx
from benches.generate import generate_session
from clawctx.history import Session
from tests.conftest import dump_line
from tests.history.test_leaf_context import HEADER, compacted_session, message

MODEL = clawctx.ModelSpec("anthropic", "anthropic-messages", "claude-sonnet-4-5")
PI_MODEL: dict[str, Any] = {
    "id": "claude-sonnet-4-5",
    "name": "Claude Sonnet 4.5",
    "api": "anthropic-messages",
    "provider": "anthropic",
    "baseUrl": "https://api.anthropic.com",
    "reasoning": True,
    "input": ["text", "image"],
    "maxTokens": 64000,
}
REQUEST = clawctx.PromptRequest(text="Where are we?", session_key="agent:main:main")


def generated(tmp_path: Path, seed: int, damage: bool, name: str = "s.jsonl") -> Path:
    """Branches, compactions, thinking and model changes, labels, images; with ``damage``
    garbage lines, a NUL run and a torn last line (as test_leaf_context.py generates them)."""
    return generate_session(
        tmp_path / name,
        1_000_000,
        seed=seed,
        damage=damage,
        fixtures=None,
        compact_at_tokens=20_000,
    ).path


def counter_ids(start: int = 0x7F000000) -> Callable[[], str]:
    state = {"next": start}

    def factory() -> str:
        state["next"] += 1
        return f"{state['next']:08x}"

    return factory


def assert_same_context(cold: Session, full: Session, leaf_id: str | None = None) -> None:
    expected = full.context(leaf_id)
    assert cold.context_messages(leaf_id).to_json() == expected.messages.to_json()
    got = cold.context(leaf_id)
    assert got.messages.to_json() == expected.messages.to_json()
    assert (got.thinking_level, got.model) == (expected.thinking_level, expected.model)


def assert_same_session(cold: Session, full: Session) -> None:
    """Everything a full session exposes (this loads a lazy one)."""
    assert cold.entries() == full.entries()
    assert cold.tree() == full.tree()
    assert cold.labels == full.labels
    assert [(s.line, s.action, s.reason) for s in cold.skipped_lines] == [
        (s.line, s.action, s.reason) for s in full.skipped_lines
    ]
    assert cold.leaf_id == full.leaf_id
    assert not cold.is_lazy
    assert_same_context(cold, full)


# ---- reading --------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("damage", [False, True])
def test_the_context_is_the_full_opens(tmp_path: Path, seed: int, damage: bool) -> None:
    path = generated(tmp_path, seed, damage)
    full = Session.open(path, read_only=True)
    cold = Session.open(path, read_only=True, lazy=True)
    assert isinstance(cold, Session)
    assert cold.is_lazy
    assert cold.lazy_bytes_read is not None
    assert cold.lazy_bytes_read < path.stat().st_size
    assert cold.context_messages().to_json() == full.context().messages.to_json()
    assert cold.is_lazy, "the messages need only the end of the file"
    assert (cold.session_id, cold.leaf_id, cold.header) == (
        full.session_id,
        full.leaf_id,
        full.header,
    )
    assert (cold.version, cold.file_version, cold.path) == (
        full.version,
        full.file_version,
        full.path,
    )
    assert cold.has_entries() and full.has_entries()
    assert_same_context(cold, full)
    assert_same_session(cold, full)


def test_only_the_end_of_a_compacted_session_is_read(tmp_path: Path) -> None:
    path = compacted_session(tmp_path / "s.jsonl", 3000)
    cold = Session.open(path, read_only=True, lazy=True)
    assert cold.lazy_bytes_read is not None
    assert cold.lazy_bytes_read <= 256 * 1024 < path.stat().st_size
    roles = [m["role"] for m in cold.context_messages()]
    assert roles == ["compactionSummary", "assistant", "user", "user"]
    # The thinking level was set at the first entry: context() reads back for it.
    assert cold.context().thinking_level == "high"
    assert_same_context(cold, Session.open(path, read_only=True))


def test_files_a_full_open_must_handle_are_opened_in_full(tmp_path: Path) -> None:
    v1 = tmp_path / "v1.jsonl"
    v1.write_text(
        dump_line({"type": "session", "id": "s", "timestamp": "2026-01-01T00:00:00.000Z"})
        + "\n"
        + dump_line({"type": "message", "message": {"role": "user", "content": "hi"}})
        + "\n"
    )
    cold = Session.open(v1, read_only=True, lazy=True)
    assert not cold.is_lazy and cold.lazy_bytes_read is None
    assert cold.needs_migration
    # No compaction: the messages reach the root, so the whole file is read anyway.
    flat = generate_session(
        tmp_path / "flat.jsonl", 100_000, seed=1, fixtures=None, compact_at_tokens=None
    ).path
    assert not Session.open(flat, read_only=True, lazy=True).is_lazy
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(clawctx.SessionFormatError):
        Session.open(empty, read_only=True, lazy=True)
    with pytest.raises(FileNotFoundError):
        Session.open(tmp_path / "missing.jsonl", lazy=True)
    # A writable lazy open of an empty file starts it, as open() does.
    started = Session.open(empty, lazy=True, session_id="fresh", cwd="/w")
    assert started.session_id == "fresh" and len(started) == 0


# ---- the pipeline ---------------------------------------------------------------------------


def prepared_view(prepared: Any) -> dict[str, Any]:
    """What a request sends and reports (the "open" and "refresh" notes say how the file was
    read: from its end, or refreshed when a session is passed)."""
    return {
        "system_prompt": prepared.system_prompt,
        "messages": prepared.messages.to_json(),
        "prompt_message": prepared.prompt_message,
        "estimated_tokens": prepared.estimated_tokens,
        "pre_prompt_message_count": prepared.pre_prompt_message_count,
        "session": (prepared.session_id, prepared.session_file),
        "changes": [c for c in prepared.changes if c.stage not in ("open", "refresh")],
        "payload": json.dumps(prepared.request_payload(model=PI_MODEL), sort_keys=True),
    }


def pipeline(tmp_path: Path, *, read_only: bool) -> clawctx.ContextPipeline:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    (workspace / "AGENTS.md").write_text("Be brief.\n", encoding="utf-8")
    return clawctx.ContextPipeline(
        model=MODEL,
        workspace_dir=workspace,
        read_only=read_only,
        repair=False,
        now_ms=lambda: 1_700_000_000_000,
    )


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("damage", [False, True])
def test_prepare_on_a_path_equals_prepare_on_a_full_open(
    tmp_path: Path, seed: int, damage: bool
) -> None:
    path = generated(tmp_path, seed, damage)
    cold = pipeline(tmp_path, read_only=True).prepare(path, REQUEST)
    notes = [c.detail for c in cold.changes if c.stage == "open"]
    assert notes and "from the end of the file" in notes[0]
    full = pipeline(tmp_path, read_only=True).prepare(Session.open(path, read_only=True), REQUEST)
    assert prepared_view(cold) == prepared_view(full)


@pytest.mark.parametrize("seed", range(2))
def test_a_writable_prepare_writes_what_a_full_open_writes(tmp_path: Path, seed: int) -> None:
    """The model snapshot (google.ts ``appendModelSnapshot``) is appended with the leaf as
    parent; the two files differ only in the new entry's random id."""
    path = generated(tmp_path, seed, False)
    other = tmp_path / "other.jsonl"
    shutil.copyfile(path, other)
    cold = pipeline(tmp_path, read_only=False).prepare(path, REQUEST)
    full_session = Session.open(other, now_ms=lambda: 1_700_000_000_000)
    full = pipeline(tmp_path, read_only=False).prepare(full_session, REQUEST)
    view_cold, view_full = prepared_view(cold), prepared_view(full)
    view_cold["session"] = view_full["session"] = None
    assert view_cold == view_full
    cold_lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    full_lines = other.read_text(encoding="utf-8", errors="replace").splitlines()
    assert len(cold_lines) == len(full_lines)
    appended = [i for i, (a, b) in enumerate(zip(cold_lines, full_lines, strict=True)) if a != b]
    for i in appended:
        a, b = json.loads(cold_lines[i]), json.loads(full_lines[i])
        assert a.pop("id") != b.pop("id")
        assert a == b


# ---- refresh --------------------------------------------------------------------------------


def refresh_view(report: clawctx.RefreshReport) -> tuple[Any, ...]:
    return (report.mode, report.appended_entries, report.bytes_read, report.reason)


def test_refresh_reads_appended_lines(tmp_path: Path) -> None:
    path = generated(tmp_path, 0, True)
    cold = Session.open(path, read_only=True, lazy=True)
    full = Session.open(path, read_only=True)
    assert refresh_view(cold.refresh()) == refresh_view(full.refresh()) == ("unchanged", 0, 0, None)
    leaf = full.leaf_id
    with path.open("a", encoding="utf-8") as f:
        f.write("\n")  # ends the torn last line
        f.write(dump_line(message("later1", leaf, "appended by another writer")) + "\n")
        f.write(dump_line(message("later2", "later1", "answer", "assistant")) + "\n")
    assert refresh_view(cold.refresh()) == refresh_view(full.refresh())
    assert cold.is_lazy, "an incremental refresh reads only the new bytes"
    assert cold.leaf_id == full.leaf_id == "later2"
    assert_same_context(cold, full)
    assert_same_session(cold, full)


@pytest.mark.parametrize("change", ["truncated", "replaced", "rewritten"])
def test_refresh_after_truncation_replacement_or_rewrite_loads_in_full(
    tmp_path: Path, change: str
) -> None:
    path = generated(tmp_path, 1, False)
    cold = Session.open(path, read_only=True, lazy=True)
    full = Session.open(path, read_only=True)
    data = path.read_bytes()
    if change == "truncated":
        cut = data.rfind(b"\n", 0, len(data) // 2) + 1
        path.write_bytes(data[:cut])
    elif change == "replaced":
        other = tmp_path / "new.jsonl"
        other.write_bytes(data[: data.rfind(b"\n", 0, len(data) - 2) + 1])
        os.replace(other, path)
    else:
        # Same length, other bytes just before the end: the probe notices it.
        end = data.rfind(b'"', 0, len(data) - 2)
        path.write_bytes(data[:end] + b"X" + data[end + 1 :])
        full = Session.open(path, read_only=True)
        full_report = ("full", len(full), len(data), "the file was rewritten")
        cold_report = cold.refresh()
        assert refresh_view(cold_report) == full_report
        assert not cold.is_lazy
        assert_same_session(cold, full)
        return
    cold_report, full_report = cold.refresh(), full.refresh()
    assert refresh_view(cold_report) == refresh_view(full_report)
    assert cold_report.mode == "full" and cold_report.reason == f"the file was {change}"
    assert not cold.is_lazy
    assert_same_session(cold, full)


# ---- appends --------------------------------------------------------------------------------


def test_appends_write_what_a_full_session_writes(tmp_path: Path) -> None:
    path = generated(tmp_path, 2, True)
    other = tmp_path / "other.jsonl"
    shutil.copyfile(path, other)
    old_id = Session.open(path, read_only=True).entries()[3]["id"]
    sessions = []
    for p, lazy in ((path, True), (other, False)):
        # The first id drawn is an old entry's (in the part a lazy session has not read):
        # both must draw again.
        drawn = iter([old_id, "a0000001", "a0000002", "a0000003"])
        s = Session.open(p, lazy=lazy, now_ms=lambda: 1_700_000_000_000, id_factory=drawn.__next__)
        leaf = s.leaf_id
        first = s.append_message({"role": "user", "content": "hello", "timestamp": 1})
        assert first == "a0000001"
        assert s.get_entry(first)["parentId"] == leaf
        s.append_model_change("anthropic", "claude")
        s.append_thinking_level_change("high")
        sessions.append(s)
    cold, full = sessions
    assert cold.is_lazy
    assert path.read_bytes() == other.read_bytes()
    assert_same_context(cold, full)
    assert refresh_view(cold.refresh()) == refresh_view(full.refresh())
    assert_same_session(cold, full)
    assert_same_session(Session.open(path), Session.open(other))


def test_orphan_check_moves_the_leaf_without_loading(tmp_path: Path) -> None:
    path = compacted_session(tmp_path / "s.jsonl", 2000)
    cold = Session.open(path, lazy=True, now_ms=lambda: 5)
    full = Session.open(path, now_ms=lambda: 5)
    # What the orphaned-user check (hygiene.py) reads and does: the leaf, its parent, a branch.
    leaf = cold.get_entry("new")
    assert leaf == full.get_entry("new")
    assert cold.get_entry(leaf["parentId"]) == full.get_entry(leaf["parentId"])
    cold.branch(leaf["parentId"])
    assert cold.is_lazy
    assert cold.context_messages().to_json() == full.context("c").messages.to_json()
    assert cold.is_lazy
    cold_report = clawctx.history.detach_orphaned_trailing_user(Session.open(path, lazy=True))
    report = clawctx.history.detach_orphaned_trailing_user(full)
    assert (
        (cold_report.detached, cold_report.new_leaf_id)
        == (True, "c")
        == (
            report.detached,
            report.new_leaf_id,
        )
    )
    assert cold_report.messages.to_json() == report.messages.to_json()
    assert_same_context(cold, full)
    # The moved leaf survives the full load.
    assert cold.entries() == full.entries()
    assert cold.leaf_id == full.leaf_id == "c"
    cold.reset_leaf()
    assert cold.context_messages().to_json() == b"[]"


# ---- what lies before: a full load ------------------------------------------------------------

PAST: dict[str, Callable[[Session, str], Any]] = {
    "entries": lambda s, old: s.entries(),
    "len": lambda s, old: len(s),
    "repr": lambda s, old: repr(s),
    "entry_types": lambda s, old: s.entry_types(),
    "tree": lambda s, old: s.tree(),
    "labels": lambda s, old: s.labels,
    "name": lambda s, old: s.name,
    "skipped_lines": lambda s, old: [(x.line, x.reason) for x in s.skipped_lines],
    "get_entry": lambda s, old: s.get_entry(old),
    "get_label": lambda s, old: s.get_label(old),
    "branch_path": lambda s, old: s.branch_path(),
    "branch_path_old": lambda s, old: s.branch_path(old),
    "children": lambda s, old: s.children(old),
    "context_of_old": lambda s, old: s.context(old).messages.to_json(),
    "messages_of_old": lambda s, old: s.context_messages(old).to_json(),
    "branch": lambda s, old: (s.branch(old), s.leaf_id, s.context().messages.to_json()),
    "branch_with_summary": lambda s, old: s.get_entry(s.branch_with_summary(old, "sum"))[
        "parentId"
    ],
    "append_label": lambda s, old: s.get_entry(s.append_label(old, "mark"))["targetId"],
    "latest_custom_entry_absent": lambda s, old: s.latest_custom_entry(["never-written"]),
    "load_in_full": lambda s, old: (s.load_in_full(), None)[1],
    "prepare_compaction": lambda s, old: clawctx.prepare_compaction(s, None) is None,
}


@pytest.fixture
def past_pair(tmp_path: Path) -> tuple[Session, Session, str]:
    """A lazy and a full session on two copies of a damaged file, and an old entry's id."""
    path = generated(tmp_path, 0, True)
    other = tmp_path / "other.jsonl"
    shutil.copyfile(path, other)
    old = Session.open(path, read_only=True).entries()[2]["id"]
    cold = Session.open(path, lazy=True, now_ms=lambda: 7, id_factory=counter_ids())
    full = Session.open(other, now_ms=lambda: 7, id_factory=counter_ids())
    return cold, full, old


@pytest.mark.parametrize("name", sorted(PAST))
def test_every_accessor_of_the_past_loads_in_full(
    past_pair: tuple[Session, Session, str], name: str
) -> None:
    cold, full, old = past_pair
    assert cold.is_lazy
    got, expected = PAST[name](cold, old), PAST[name](full, old)
    if name == "repr":
        got, expected = got.replace(str(cold.path), ""), expected.replace(str(full.path), "")
    assert got == expected
    assert not cold.is_lazy
    assert_same_session(cold, full)


def test_the_end_of_the_file_needs_no_full_load(tmp_path: Path) -> None:
    path = generated(tmp_path, 0, False)
    full = Session.open(path, read_only=True)
    cold = Session.open(path, read_only=True, lazy=True)
    leaf = full.leaf_id
    assert leaf is not None
    assert cold.get_entry(leaf) == full.get_entry(leaf)
    parent = full.get_entry(leaf)["parentId"]
    assert cold.get_entry(parent) == full.get_entry(parent)
    custom = [e for e in full.entries() if e["type"] == "custom"][-1]["customType"]
    assert cold.latest_custom_entry([custom]) == full.latest_custom_entry([custom])
    cold.branch(parent)
    full.branch(parent)
    assert cold.context_messages().to_json() == full.context().messages.to_json()
    assert cold.is_lazy


def test_a_custom_entry_further_back_is_found_by_reading_back(tmp_path: Path) -> None:
    lines = [HEADER, {"type": "custom", "id": "k", "parentId": None, "customType": "mark"}]
    parent = "k"
    for i in range(3000):
        lines.append(message(f"m{i}", parent, "turn " * 40))
        parent = f"m{i}"
    lines.append(
        {
            "type": "compaction",
            "id": "c",
            "parentId": parent,
            "summary": "s",
            "firstKeptEntryId": parent,
            "tokensBefore": 1,
        }
    )
    path = tmp_path / "s.jsonl"
    path.write_text("".join(dump_line(x) + "\n" for x in lines))
    cold = Session.open(path, read_only=True, lazy=True)
    assert cold.is_lazy
    assert cold.latest_custom_entry(["mark"]) == Session.open(path).latest_custom_entry(["mark"])


# ---- threads --------------------------------------------------------------------------------


def test_threads_share_a_lazy_session(tmp_path: Path) -> None:
    path = generated(tmp_path, 1, True)
    full = Session.open(path, read_only=True)
    expected_messages = full.context().messages.to_json()
    expected_entries = full.entries()
    cold = Session.open(path, read_only=True, lazy=True)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(3):
                if i % 2:
                    assert cold.entries() == expected_entries
                else:
                    assert cold.context_messages().to_json() == expected_messages
                    assert cold.refresh().mode == "unchanged"
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert not cold.is_lazy
