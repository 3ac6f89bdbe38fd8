"""OpenClaw's SQLite session store (issue 30) against the same records in a JSONL file.

Each generated session (the sizes of ``conftest.py``: 1 MB; ``CLAWCTX_BENCH_FULL=1`` adds 10 MB
and 100 MB, ``CLAWCTX_BENCH_1GB=1`` adds 1 GB) is written into a store with ``write_store``
(one ``transcript_events`` row per line). In the summary table the JSONL twin's run is the
``reference`` of each scenario, so "vs reference" is the JSONL time over the store's (below 1:
the store is slower). Targets: the leaf context within 2x the JSONL backward read, a full open
within 1.5x the JSONL open, a store scanned at the JSONL scan's MB/s or better, and 10,000
windows listed in under 100 ms (``test_list_10000_windows``).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import clawctx
from benches.conftest import measure
from benches.generate import GeneratedSession
from clawctx.history.scan import store_records
from clawctx.history.store import open_store, write_store

_stores: dict[Path, Path] = {}


@pytest.fixture(scope="session")
def store(session: GeneratedSession) -> Path:
    """The generated session written into a store (once per size)."""
    if session.path not in _stores:
        target = session.path.with_name("openclaw-agent.sqlite")
        write_store(session.path, target, session_id="bench")
        _stores[session.path] = target
    return _stores[session.path]


def _store_leaf(path: Path) -> int:
    with open_store(path) as s:
        return len(s.read_leaf_context("bench").messages)


def _jsonl_leaf(path: Path) -> int:
    return len(clawctx.read_leaf_context(path).messages)


def test_leaf_context_store(benchmark: Any, session: GeneratedSession, store: Path) -> None:
    count = measure(benchmark, "store leaf context", "store", session, _store_leaf, store)
    assert count == _jsonl_leaf(session.path)


def test_leaf_context_jsonl(benchmark: Any, session: GeneratedSession) -> None:
    assert measure(benchmark, "store leaf context", "reference", session, _jsonl_leaf, session.path)


def _store_open(path: Path) -> int:
    with open_store(path) as s:
        return len(s.open("bench").context().messages)


def _jsonl_open(path: Path) -> int:
    return len(clawctx.Session.open(path, read_only=True).context().messages)


def test_open_store(benchmark: Any, session: GeneratedSession, store: Path) -> None:
    count = measure(benchmark, "store open+context", "store", session, _store_open, store)
    assert count == _jsonl_open(session.path)


def test_open_jsonl(benchmark: Any, session: GeneratedSession) -> None:
    assert measure(benchmark, "store open+context", "reference", session, _jsonl_open, session.path)


def _store_scan(path: Path) -> int:
    [record] = store_records(path)
    assert record.error is None
    return int(record.to_dict()["entries"])


def _jsonl_scan(path: Path) -> int:
    [summary] = clawctx.scan_sessions([path], workers=1)
    return summary.entries


def test_scan_store(benchmark: Any, session: GeneratedSession, store: Path) -> None:
    entries = measure(benchmark, "store scan", "store", session, _store_scan, store)
    assert entries == _jsonl_scan(session.path)


def test_scan_jsonl(benchmark: Any, session: GeneratedSession) -> None:
    assert measure(benchmark, "store scan", "reference", session, _jsonl_scan, session.path)


WINDOWS = 10_000


@pytest.fixture(scope="module")
def many_windows(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of 10,000 windows (100 session keys, each a rollover chain of 100 windows)
    with three events each, inserted as one transaction."""
    directory = tmp_path_factory.mktemp("windows")
    seed = directory / "seed.jsonl"
    header = {"type": "session", "version": 3, "id": "w0", "timestamp": "t", "cwd": "/"}
    seed.write_text(json.dumps(header) + "\n")
    path = directory / "openclaw-agent.sqlite"
    write_store(seed, path, session_key="k0", session_id="w0")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    windows, events = [], []
    for n in range(1, WINDOWS):
        key, previous = f"k{n // 100}", f"w{n - 1}" if n % 100 else None
        windows.append((f"w{n}", key, previous, "rollover" if previous else "initial", n, n))
        entry = {"type": "message", "id": f"m{n}", "parentId": None, "timestamp": "t"}
        entry["message"] = {"role": "user", "content": f"hello {n}"}
        line = json.dumps(entry)
        events += [(f"w{n}", 0, json.dumps({**header, "id": f"w{n}"}), n)]
        events += [(f"w{n}", 1, line, n), (f"w{n}", 2, line.replace("m", "a", 1), n)]
    conn.executemany(
        "INSERT OR IGNORE INTO session_nodes VALUES (?, ?, '{}', 0)",
        {(w[1], w[0]) for w in windows},
    )
    conn.executemany(
        "INSERT INTO session_windows (session_id, session_key, previous_session_id, reason, "
        "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
        windows,
    )
    conn.executemany("INSERT INTO transcript_events VALUES (?, ?, ?, ?)", events)
    conn.execute("COMMIT")
    conn.close()
    return path


def _list(path: Path) -> int:
    with open_store(path) as s:
        return len(s.sessions())


def test_list_10000_windows(benchmark: Any, many_windows: Path) -> None:
    benchmark.group = "store list 10,000 windows"
    benchmark.extra_info.update(scenario="store list", impl="store", windows=WINDOWS)
    assert benchmark(_list, many_windows) == WINDOWS
