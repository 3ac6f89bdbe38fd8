"""Every command takes an OpenClaw SQLite store (issue 30, item 3): ``inspect STORE`` lists its
sessions, ``--session ID`` picks one where one session is meant, ``scan`` and the fleet report
find ``openclaw-agent.sqlite`` beside ``*.jsonl``, ``convert`` writes a store's session as JSONL
and a JSONL session into a new store. The store is never written."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from clawctx import Session
from clawctx.errors import StoreError
from clawctx.history.store import open_store, write_store
from tests.cli.conftest import call, result, session_lines, text, write_session

Run = Callable[..., tuple[int, str, str]]
SID = "5a1e0000-0000-4000-8000-000000000001"


def _store(tmp_path: Path, name: str = "openclaw-agent.sqlite") -> tuple[Path, Path]:
    """A store holding one session (with an unanswered tool call), and its JSONL twin."""
    twin = write_session(
        tmp_path / "twin.jsonl",
        session_lines(
            [text("user", "hi"), call("c1"), result("c1"), text("assistant", "done"), call("c2")]
        ),
    )
    store = tmp_path / name
    write_store(twin, store)
    return store, twin


def _fingerprint(store: Path) -> tuple[bytes, int, bytes]:
    """The database file and its WAL's content. (A reader of a WAL database may create an
    empty ``-wal`` and the ``-shm`` index beside it, as every SQLite reader does; the Gateway
    keeps both anyway.)"""
    wal = store.with_name(store.name + "-wal")
    return store.read_bytes(), store.stat().st_mtime_ns, wal.read_bytes() if wal.exists() else b""


def test_inspect_store_lists_sessions_and_session_matches_twin(
    tmp_path: Path, run_cli: Run
) -> None:
    store, twin = _store(tmp_path)
    before = _fingerprint(store)
    status, out, err = run_cli("inspect", str(store))
    assert status == 0, err
    assert SID in out and "agent:main:main" in out and "6 records" in out
    status, out, _ = run_cli("inspect", str(store), "--json")
    listing = json.loads(out)
    assert listing["store"] is True and listing["schema_version"] == 19
    assert [w["session_id"] for w in listing["sessions"]] == [SID]

    status, out, err = run_cli("inspect", str(store), "--session", SID, "--json")
    assert status == 0, err
    from_store = json.loads(out)
    _, out, _ = run_cli("inspect", str(twin), "--json")
    from_twin = json.loads(out)
    assert from_store.pop("path") == f"{store}#{SID}"
    from_twin.pop("path")
    assert from_store == from_twin

    status, out, _ = run_cli("inspect", "--check", str(store))
    assert status == 0 and out.strip() == f"{store}#{SID}: ok"

    status, _, err = run_cli("inspect", str(store), "--session", "nope")
    assert status == 1 and "no session 'nope'" in err and SID in err
    assert _fingerprint(store) == before


def test_convert_store_to_jsonl_and_jsonl_to_store(tmp_path: Path, run_cli: Run) -> None:
    store, twin = _store(tmp_path)
    before = _fingerprint(store)
    out_jsonl = tmp_path / "out.jsonl"
    status, _, err = run_cli("convert", str(store), "-o", str(out_jsonl))
    assert status == 1 and "--session" in err and not out_jsonl.exists()
    status, out, err = run_cli("convert", str(store), "--session", SID, "-o", str(out_jsonl))
    assert status == 0, err
    assert "6 line(s)" in out
    # The records in seq order, one line each: the twin's lines exactly.
    assert out_jsonl.read_bytes() == twin.read_bytes()
    status, _, err = run_cli("convert", str(store), "--session", SID, "-o", str(out_jsonl))
    assert status == 1 and "exists" in err
    assert _fingerprint(store) == before

    new = tmp_path / "new.sqlite"
    status, out, err = run_cli("convert", str(out_jsonl), "-o", str(new), "--json")
    assert status == 0, err
    assert json.loads(out)["session_id"] == SID
    assert sorted(p.name for p in tmp_path.glob("new.sqlite*")) == ["new.sqlite"]
    conn = sqlite3.connect(new)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 19
    finally:
        conn.close()
    with open_store(new) as s:
        assert s.records(SID) == twin.read_bytes()
    # Never replaced, even with --force; nothing half-written is left behind on refusal.
    status, _, err = run_cli("convert", str(out_jsonl), "-o", str(new), "--force")
    assert status == 1 and "never replaced" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    status, _, err = run_cli("convert", str(bad), "-o", str(tmp_path / "bad.sqlite"))
    assert status == 1 and not (tmp_path / "bad.sqlite").exists()
    assert not list(tmp_path.glob(".bad.sqlite.*"))


def test_assemble_and_doctor_take_a_store_session(tmp_path: Path, run_cli: Run) -> None:
    store, twin = _store(tmp_path)
    before = _fingerprint(store)
    status, _, err = run_cli("assemble", str(store), "--prompt", "next")
    assert status == 1 and "--session" in err
    status, out, err = run_cli(
        "assemble", str(store), "--session", SID, "--prompt", "next", "--json"
    )
    assert status == 0, err
    _, twin_out, _ = run_cli("assemble", str(twin), "--prompt", "next", "--json")

    def messages(text: str) -> list[dict[str, object]]:
        # The synthetic result for the unanswered call is stamped with the clock: drop it.
        found: list[dict[str, object]] = json.loads(text)["messages"]
        return [{k: v for k, v in m.items() if k != "timestamp"} for m in found]

    assert messages(out) == messages(twin_out)

    status, out, err = run_cli("doctor", str(store), "--session", SID, "--json")
    _, twin_out, _ = run_cli("doctor", str(twin), "--json")
    (from_store,), (from_twin,) = json.loads(out), json.loads(twin_out)
    assert from_store.pop("path") == f"{store}#{SID}"
    from_twin.pop("path")
    assert from_store == from_twin
    assert from_store["findings"], "the unanswered call c2 is a finding"
    status, _, err = run_cli("doctor", str(store), "--session", SID, "--fix")
    assert status == 1 and "never writes a store" in err
    assert _fingerprint(store) == before


def test_scan_finds_stores_beside_jsonl(tmp_path: Path, run_cli: Run) -> None:
    agents = tmp_path / "agents"
    (agents / "main" / "agent").mkdir(parents=True)
    (agents / "main" / "sessions").mkdir(parents=True)
    store, twin = _store(agents / "main" / "agent")
    twin.rename(agents / "main" / "sessions" / "old.jsonl")
    broken = agents / "other" / "agent" / "openclaw-agent.sqlite"
    broken.parent.mkdir(parents=True)
    conn = sqlite3.connect(broken)
    conn.execute("CREATE TABLE unrelated (x)")
    conn.commit()
    conn.close()
    status, out, err = run_cli("scan", str(agents), "--json")
    records = [json.loads(line) for line in out.splitlines()]
    by_path = {r["path"]: r for r in records}
    assert set(by_path) == {
        str(agents / "main" / "agent" / f"openclaw-agent.sqlite#{SID}"),
        str(agents / "main" / "sessions" / "old.jsonl"),
        str(broken),
    }
    from_store = by_path[f"{store}#{SID}"]
    from_file = by_path[str(agents / "main" / "sessions" / "old.jsonl")]
    assert from_store["error"] is None
    for field in ("entries", "messages", "estimated_tokens", "unpaired_tool_calls", "leaf_id"):
        assert from_store[field] == from_file[field], field
    assert "schema" in by_path[str(broken)]["error"] and by_path[str(broken)]["format"] is None
    assert status == 1 and str(broken) in err


def test_report_store_as_fleet_and_one_session(tmp_path: Path, run_cli: Run) -> None:
    pytest.importorskip("matplotlib")
    store, _ = _store(tmp_path)
    fleet = tmp_path / "fleet.html"
    status, out, err = run_cli("report", str(store), "-o", str(fleet))
    assert status == 0, err
    assert "1 sessions" in out and SID in fleet.read_text()
    page = tmp_path / "one.html"
    status, out, err = run_cli("report", str(store), "--session", SID, "-o", str(page))
    assert status == 0, err
    assert "session" in out and page.stat().st_size > 1000


def test_session_open_dispatches_on_a_store(tmp_path: Path) -> None:
    store, twin = _store(tmp_path, name="agent.db")
    session = Session.open(store, session_id=SID)
    expected = Session.open(twin, read_only=True)
    assert isinstance(session, Session)
    assert [e["id"] for e in session.entries()] == [e["id"] for e in expected.entries()]
    assert session.context_messages() == expected.context_messages()
    with pytest.raises(StoreError, match="session_id") as info:
        Session.open(store)
    assert info.value.path == str(store)
