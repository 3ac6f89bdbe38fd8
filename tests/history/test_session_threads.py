"""A `Session` shared by threads: no call fails because another thread is inside the object
(before: `RuntimeError: Already borrowed` on every overlapping call), reads see a consistent
state while appends are in flight, and the file is valid afterwards."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

from clawctx.history import Session

THREADS = 8
APPENDS = 40


def _run_threads(workers: list[Callable[[], None]]) -> list[BaseException]:
    errors: list[BaseException] = []
    start = threading.Barrier(len(workers))

    def run(work: Callable[[], None]) -> None:
        try:
            start.wait()
            work()
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
        assert not t.is_alive(), "a thread hung (deadlock)"
    return errors


def _message(writer: int, i: int) -> dict[str, object]:
    return {"role": "user", "content": f"w{writer} m{i}", "timestamp": 1_767_225_600_000 + i}


def test_appends_reads_and_refresh_from_many_threads(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session.create(path, cwd="/tmp", fsync=False)
    observed: list[list[int]] = []

    def writer(n: int) -> Callable[[], None]:
        def work() -> None:
            for i in range(APPENDS):
                entry_id = session.append_message(_message(n, i))
                # The entry just appended is visible at once to the thread that made it.
                assert session.get_entry(entry_id) is not None
                if i % 10 == 0:
                    session.append_custom_entry("progress", {"writer": n, "i": i})

        return work

    def reader() -> None:
        lengths: list[int] = []
        observed.append(lengths)
        for _ in range(APPENDS):
            entries = session.entries()
            # A consistent snapshot: every parent of a listed entry is listed before it.
            seen: set[str] = set()
            for entry in entries:
                assert entry["parentId"] is None or entry["parentId"] in seen
                seen.add(entry["id"])
            assert len(session) >= len(entries)
            path_entries = session.branch_path()
            # One call, one state: the branch is an unbroken parent chain from a root.
            assert all(
                e["parentId"] == (path_entries[i - 1]["id"] if i else None)
                for i, e in enumerate(path_entries)
            )
            session.context()
            session.tree()
            repr(session)
            lengths.append(len(entries))

    def refresher() -> None:
        for _ in range(APPENDS):
            report = session.refresh()
            assert report.mode in ("unchanged", "incremental")

    workers = [writer(n) for n in range(THREADS // 2)]
    workers += [reader for _ in range(THREADS // 4)]
    workers += [refresher for _ in range(THREADS // 4)]
    errors = _run_threads(workers)
    assert errors == []

    expected = (THREADS // 2) * (APPENDS + APPENDS // 10)
    assert len(session) == expected
    # Each reader saw the session only grow.
    assert observed and all(lengths == sorted(lengths) for lengths in observed)
    # The file holds every append once, each line valid JSON, and reopens to the same state.
    lines = path.read_text().splitlines()
    assert len(lines) == expected + 1
    assert all(isinstance(json.loads(line), dict) for line in lines)
    reopened = Session.open(path)
    assert reopened.skipped_lines == []
    assert [e["id"] for e in reopened.entries()] == [e["id"] for e in session.entries()]
    texts = sorted(e["message"]["content"] for e in reopened.entries() if e["type"] == "message")
    assert texts == sorted(f"w{n} m{i}" for n in range(THREADS // 2) for i in range(APPENDS))


def test_the_python_subclass_is_shared_the_same_way(tmp_path: Path) -> None:
    # `clawctx.history.Session` is a Python subclass of the native class.
    session = Session.in_memory(cwd="/tmp")
    assert type(session) is Session

    def work() -> None:
        for i in range(APPENDS):
            session.append_message(_message(0, i))
            session.branch_path()

    assert _run_threads([work] * THREADS) == []
    assert len(session) == THREADS * APPENDS


def test_a_callback_may_call_back_into_its_session() -> None:
    # The id factory and the clock run before the session lock is taken (issue 33, N5), so a
    # callback may read the session it was called from (before: RuntimeError).
    holder: list[Session] = []
    seen: list[object] = []

    def id_factory() -> str:
        seen.append(holder[0].leaf_id)
        return f"x{len(seen):07d}"

    session = Session.in_memory(cwd="/tmp", id_factory=id_factory)
    holder.append(session)
    assert session.append_message(_message(0, 0)) == "x0000001"
    assert session.append_message(_message(0, 1)) == "x0000002"
    assert seen == [None, "x0000001"]
    assert len(session) == 2


def test_a_read_does_not_wait_for_an_appends_clock(tmp_path: Path) -> None:
    # The clock (user code) runs before the session lock is taken (issue 33, N5): a read in
    # another thread meanwhile sees the state before the append instead of waiting for the
    # callback (before: it waited, and a callback waiting for that reader deadlocked).
    session = Session.create(tmp_path / "s.jsonl", cwd="/tmp", fsync=False)
    inside = threading.Event()
    release = threading.Event()
    armed = threading.Event()

    def slow_clock() -> int:
        if armed.is_set():
            inside.set()
            release.wait(timeout=30)
        return 1_767_225_600_000

    slow = Session.open(tmp_path / "s.jsonl", now_ms=slow_clock)
    armed.set()
    results: list[object] = []

    def appender() -> None:
        results.append(slow.append_message(_message(0, 0)))

    t1 = threading.Thread(target=appender)
    t1.start()
    try:
        assert inside.wait(timeout=30)
        assert slow.leaf_id is None
        assert len(slow) == 0
    finally:
        release.set()
        t1.join(timeout=60)
    assert not t1.is_alive()
    assert results == [slow.leaf_id]
    assert len(session) == 0  # another Session object on the same file is independent
