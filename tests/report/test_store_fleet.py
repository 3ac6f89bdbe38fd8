"""OpenClaw SQLite stores in the fleet report and ``clawctx.dask`` (issue 30, item 3): a
directory's ``openclaw-agent.sqlite`` files are found beside its ``*.jsonl`` files and give one
row per session window, named ``STORE#SESSION_ID``, with the numbers of the same records read
as a JSONL file. The Dask test runs on a real ``distributed.LocalCluster`` (two worker
processes); ``repair_sessions`` never lists a store."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx.history import message_columns, read_leaf_context, scan_sessions
from clawctx.history.store import write_store

HAS_DASK = all(
    importlib.util.find_spec(name) is not None for name in ("dask", "distributed", "fsspec")
)


def _session(path: Path, sid: str, turns: int) -> Path:
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": sid, "timestamp": "t", "cwd": "/p"}
    ]
    parent = None
    for n in range(turns):
        role = "user" if n % 2 == 0 else "assistant"
        message: dict[str, Any] = {
            "role": role,
            "content": [{"type": "text", "text": f"{sid} turn {n} " + "y" * (10 * n)}],
            "timestamp": 1773478800000 + n,
        }
        if role == "assistant":
            message.update(api="anthropic-messages", provider="anthropic", model="m")
            message["stopReason"] = "stop"
        entry = {"type": "message", "id": f"{sid[:2]}{n:06d}", "parentId": parent}
        entry.update(timestamp="2026-03-14T09:00:00.000Z", message=message)
        lines.append(entry)
        parent = entry["id"]
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))
    return path


@pytest.fixture
def agents(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    """``agents/a/agent/openclaw-agent.sqlite`` (sessions s1, s2), a legacy JSONL file, and a
    store that cannot be read; returns the root and each store session's JSONL twin."""
    root = tmp_path / "agents"
    (root / "a" / "agent").mkdir(parents=True)
    (root / "a" / "sessions").mkdir(parents=True)
    twins = tmp_path / "twins"
    twins.mkdir()
    s1 = _session(twins / "s1.jsonl", "s1", 6)
    s2 = _session(twins / "s2.jsonl", "s2", 9)
    store = root / "a" / "agent" / "openclaw-agent.sqlite"
    write_store(s1, store)
    # A second window of the same key, appended as the Gateway would (one transaction).
    conn = sqlite3.connect(store, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(
        "INSERT INTO session_windows (session_id, session_key, previous_session_id, reason, "
        "created_at, updated_at) VALUES ('s2', 'agent:main:main', 's1', 'reset', "
        "9999999999999, 9999999999999)"
    )
    conn.executemany(
        "INSERT INTO transcript_events VALUES ('s2', ?, ?, 0)",
        enumerate(s2.read_text().splitlines()),
    )
    conn.execute("COMMIT")
    conn.close()
    _session(root / "a" / "sessions" / "legacy.jsonl", "legacy", 4)
    broken = root / "b" / "agent" / "openclaw-agent.sqlite"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"SQLite format 3\x00" + b"\xff" * 8000)
    return root, {f"{store}#s1": s1, f"{store}#s2": s2}


def test_fleet_report_counts_store_sessions(agents: tuple[Path, dict[str, Path]]) -> None:
    pytest.importorskip("matplotlib")
    from clawctx.report import fleet_stats

    root, twins = agents
    stats = fleet_stats([root])
    names = [str(p) for p in stats.paths]
    assert sorted(names) == sorted([*twins, str(root / "a" / "sessions" / "legacy.jsonl")])
    for name, twin in twins.items():
        (expected,) = scan_sessions([twin])
        i = names.index(name)
        assert int(stats.messages[i]) == expected.messages
        assert int(stats.tokens[i]) == expected.estimated_tokens
        assert int(stats.sizes[i]) == expected.size_bytes
    [(bad, reason)] = stats.errors
    assert bad == root / "b" / "agent" / "openclaw-agent.sqlite" and "store" in reason


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    if not HAS_DASK:
        pytest.skip(
            'dask, distributed and fsspec are the "dask" extra: pip install "clawctx[dask]"'
        )
    import distributed

    python_dir = str(Path(clawctx.__file__).resolve().parent.parent)
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            env={"PYTHONPATH": python_dir},
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def test_dask_reads_store_sessions_on_a_cluster(
    client: Any, agents: tuple[Path, dict[str, Path]]
) -> None:
    import pandas as pd

    from clawctx.dask import list_sessions, read_messages, read_sessions, repair_sessions

    root, twins = agents
    store = root / "a" / "agent" / "openclaw-agent.sqlite"
    broken = root / "b" / "agent" / "openclaw-agent.sqlite"
    assert str(store) in list_sessions(root)
    rows = client.compute(read_sessions(root, partition_bytes=1)).result()
    by_path = {row["path"]: row for row in rows.to_dict("records")}
    assert set(by_path) == {*twins, str(root / "a" / "sessions" / "legacy.jsonl"), str(broken)}
    for name, twin in twins.items():
        (expected,) = scan_sessions([twin])
        assert by_path[name]["messages"] == expected.messages
        assert by_path[name]["estimated_tokens"] == expected.estimated_tokens
        assert pd.isna(by_path[name]["error"])
    assert "store" in by_path[str(broken)]["error"]

    messages = client.compute(read_messages(root, partition_bytes=1)).result()
    for name, twin in twins.items():
        got = messages[messages["path"] == name]
        expected_columns = message_columns(read_leaf_context(twin).messages)
        assert list(got["estimated_tokens"]) == list(expected_columns["estimated_tokens"])
        assert list(got["role"]) == list(expected_columns["role"])
    assert not (messages["path"] == str(broken)).any()

    before = store.read_bytes()
    reports = client.compute(repair_sessions(root)).result()
    assert all("sqlite" not in r["path"] for r in reports)
    assert store.read_bytes() == before
