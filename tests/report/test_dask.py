"""clawctx.dask: scan records and repair reports of session files through fsspec and Dask.

The cluster tests run on a real ``distributed.LocalCluster`` (two worker processes) over local
files. ``memory://`` is a filesystem inside one process, so a worker process would see an empty
one: the ``memory://`` tests run on the synchronous scheduler, in this process. Every result is
compared with the single-process scan or repair of the same bytes.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import clawctx
from benches.generate import generate_session
from clawctx.history import (
    SessionSummary,
    import_transcript,
    message_columns,
    read_leaf_context,
    repair_session_bytes,
    repair_session_file,
    scan_sessions,
)
from conftest import FIXTURES

HAS_DASK = all(
    importlib.util.find_spec(name) is not None for name in ("dask", "distributed", "fsspec")
)
needs_dask = pytest.mark.skipif(
    not HAS_DASK,
    reason='dask, distributed and fsspec are the "dask" extra: pip install "clawctx[dask]"',
)

HEADER = (
    b'{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'
)
MESSAGE = b'{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1}}\n'


# ---- the byte-level repair binding (no dask needed) ------------------------------------------


def _report_tuple(report: Any) -> tuple[Any, ...]:
    return (
        report.repaired,
        report.dropped_lines,
        report.rewritten_assistant_messages,
        report.rewritten_user_messages,
        report.salvaged_records,
        report.reason,
        report.summary(),
        [(c.line, c.kind, c.reason) for c in report.changes],
    )


@pytest.mark.parametrize("fix_messages", [False, True])
def test_repair_bytes_decides_and_rewrites_as_the_file_repair(
    tmp_path: Path, fix_messages: bool
) -> None:
    generated = generate_session(tmp_path / "g.jsonl", 50_000, seed=7, damage=True)
    data = generated.path.read_bytes()
    report, repaired = repair_session_bytes(data, fix_messages=fix_messages)
    on_disk = repair_session_file(generated.path, backup="delete", fix_messages=fix_messages)
    assert report.repaired and on_disk.repaired and report.dropped_lines > 0
    assert _report_tuple(report) == _report_tuple(on_disk)
    assert report.backup_path is None
    assert repaired == generated.path.read_bytes()
    # The repaired bytes need no second repair.
    assert repair_session_bytes(repaired)[1] is None


def test_repair_bytes_of_clean_and_headerless_input_returns_no_bytes() -> None:
    report, repaired = repair_session_bytes(HEADER + MESSAGE)
    assert (report.repaired, report.reason, repaired) == (False, None, None)
    report, repaired = repair_session_bytes(b"")
    assert (report.reason, repaired) == ("empty session file", None)
    report, repaired = repair_session_bytes(MESSAGE + b"garbage\n")
    assert (report.reason, repaired) == ("invalid session header", None)
    report, repaired = repair_session_bytes(HEADER + b"\x00\x00" + MESSAGE + b"torn{")
    assert report.repaired and repaired == HEADER + MESSAGE
    with pytest.raises(TypeError):
        repair_session_bytes("text is not bytes")  # type: ignore[arg-type]


def test_missing_dask_raises_a_clear_import_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import clawctx.dask as cdask

    monkeypatch.setitem(sys.modules, "dask", None)
    monkeypatch.setitem(sys.modules, "dask.bag", None)
    monkeypatch.setitem(sys.modules, "dask.dataframe", None)
    with pytest.raises(ImportError, match=r'pip install "clawctx\[dask\]"'):
        cdask.read_sessions("nowhere")
    monkeypatch.setitem(sys.modules, "fsspec", None)
    with pytest.raises(ImportError, match=r'pip install "clawctx\[dask\]"'):
        cdask.list_sessions("nowhere")


# ---- a small fleet ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Nested directories of generated sessions (some damaged), a file that is not a session,
    an empty one, and a file that is not ``*.jsonl``."""
    root = tmp_path_factory.mktemp("fleet")
    sizes = [20_000, 150_000, 40_000, 300_000, 60_000, 30_000]
    for i, size in enumerate(sizes):
        folder = root / ("agent-a" if i % 2 else "agent-b/2026/01")
        folder.mkdir(parents=True, exist_ok=True)
        generate_session(folder / f"s{i}.jsonl", size, seed=i, damage=i in (1, 4))
    # A Claude Code session and a Codex rollout: read in their own format, like the scan does.
    foreign = FIXTURES / "foreign"
    for name in ("claude_small.jsonl", "codex_small.jsonl"):
        (root / "agent-a" / name).write_bytes((foreign / name).read_bytes())
    (root / "agent-a" / "not-a-session.jsonl").write_bytes(b"hello\n")
    (root / "agent-a" / "empty.jsonl").write_bytes(b"")
    (root / "agent-a" / "notes.txt").write_bytes(b"not listed\n")
    return root


def _local_records(paths: list[str]) -> list[dict[str, Any]]:
    from clawctx.dask import SESSION_COLUMNS

    return [
        {name: (str(s.path) if name == "path" else getattr(s, name)) for name in SESSION_COLUMNS}
        for s in scan_sessions(paths)
    ]


def _rows(frame: Any) -> list[dict[str, Any]]:
    plain = frame.astype(object).where(frame.notna(), None)
    return [dict(row) for row in plain.to_dict("records")]


@needs_dask
def test_session_columns_are_the_scan_record() -> None:
    from clawctx.dask import SESSION_COLUMNS

    fields = {
        name
        for name in dir(SessionSummary)
        if not name.startswith("_") and not callable(getattr(SessionSummary, name))
    }
    assert set(SESSION_COLUMNS) == fields - {"fields"}
    assert list(SESSION_COLUMNS) == list(SessionSummary.fields)


@needs_dask
def test_listing_walks_directories_globs_and_lists(fleet: Path) -> None:
    from clawctx.dask import list_sessions

    listed = list_sessions(fleet)
    assert len(listed) == 10 and all(p.endswith(".jsonl") for p in listed)
    assert listed == sorted(listed)
    assert list_sessions(f"{fleet}/**/*.jsonl") == listed
    # Duplicates are read once; a missing file is kept (its record says why).
    missing = str(fleet / "gone.jsonl")
    assert list_sessions([listed[0], listed[0], missing]) == [listed[0], missing]
    with pytest.raises(ValueError, match="no session paths"):
        list_sessions([])


@needs_dask
def test_partitions_group_files_by_size() -> None:
    from clawctx.dask import _Listed, _partitions

    listed = [_Listed(f"f{i}", size) for i, size in enumerate([10, 10, 25, 5, 5, 40])]
    assert _partitions(listed, 30) == [["f0", "f1"], ["f2", "f3"], ["f4"], ["f5"]]
    assert _partitions(listed, 1000) == [[f"f{i}" for i in range(6)]]
    with pytest.raises(ValueError):
        _partitions(listed, 0)


# ---- on a real cluster -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    if not HAS_DASK:
        pytest.skip(
            'dask, distributed and fsspec are the "dask" extra: pip install "clawctx[dask]"'
        )
    import distributed

    # Worker processes import the same clawctx as this process.
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


def test_read_sessions_on_a_cluster_matches_the_local_scan(client: Any, fleet: Path) -> None:
    from clawctx.dask import SESSION_COLUMNS, list_sessions, read_sessions

    frame = read_sessions(fleet, partition_bytes=200_000)
    assert frame.npartitions >= 3
    assert {name: str(dtype) for name, dtype in frame.dtypes.items()} == {
        name: str(dtype) for name, dtype in frame._meta.dtypes.items()
    }
    assert list(frame.columns) == list(SESSION_COLUMNS)
    result = client.compute(frame).result()
    # The work ran on both worker processes.
    assert len({w for w in client.run(lambda: 1)}) == 2
    expected = _local_records(list_sessions(fleet))
    assert _rows(result) == expected
    errors = [r for r in expected if r["error"] is not None]
    assert len(errors) == 1  # not-a-session.jsonl; the empty file is an empty session
    assert sum(r["skipped_lines"] > 0 for r in expected if r["format"] == "pi") == 2
    assert {r["format"] for r in expected} == {None, "pi", "claude-code", "codex"}


def _local_messages(paths: list[str], urls: list[str] | None = None) -> list[dict[str, Any]]:
    """read_messages's rows computed in this process, one file at a time."""
    rows: list[dict[str, Any]] = []
    for path, url in zip(paths, urls or paths, strict=True):
        summary = scan_sessions([path])[0]
        if summary.error is not None or summary.context_messages == 0:
            continue  # an unreadable file, or an empty session: no message rows
        if summary.format in ("claude-code", "codex"):
            columns = message_columns(import_transcript(path))
        else:
            columns = message_columns(read_leaf_context(path).messages)
        assert len(columns["index"]) == summary.context_messages
        for i in range(summary.context_messages):
            rows.append(
                {"path": url, **{name: _plain(values[i]) for name, values in columns.items()}}
            )
    return rows


def _plain(value: Any) -> Any:
    value = value.item() if hasattr(value, "item") else value
    return None if isinstance(value, float) and value != value else value


def _message_rows(frame: Any) -> list[dict[str, Any]]:
    return [{name: _plain(v) for name, v in row.items()} for row in _rows(frame)]


def test_read_messages_on_a_cluster_matches_the_local_columns(client: Any, fleet: Path) -> None:
    from clawctx.dask import MESSAGE_COLUMNS, list_sessions, read_messages

    frame = read_messages(fleet, partition_bytes=200_000)
    assert frame.npartitions >= 3 and list(frame.columns) == list(MESSAGE_COLUMNS)
    result = client.compute(frame).result()
    assert {name: str(t) for name, t in result.dtypes.items()} == {
        name: str(t) for name, t in frame._meta.dtypes.items()
    }
    expected = _local_messages(list_sessions(fleet))
    assert len(expected) > 100
    assert _message_rows(result) == expected
    assert {"user", "assistant", "toolResult"} <= set(result["role"].dropna())
    assert result["tool_name"].notna().any() and result["estimated_tokens"].sum() > 0


def test_repair_on_a_cluster_writes_local_files_with_a_backup(
    client: Any, fleet: Path, tmp_path: Path
) -> None:
    from clawctx.dask import repair_sessions

    work = tmp_path / "fleet"
    shutil.copytree(fleet, work)
    before = {p: p.read_bytes() for p in work.rglob("*.jsonl")}
    dry = client.compute(repair_sessions(work, partition_bytes=200_000)).result()
    assert {p: p.read_bytes() for p in work.rglob("*.jsonl")} == before
    needing = {Path(r["path"]) for r in dry if r["repaired"]}
    assert len(needing) == 2 and not any(r["written"] for r in dry)
    done = client.compute(repair_sessions(work, write=True, partition_bytes=200_000)).result()
    for report in done:
        path = Path(report["path"])
        if path in needing:
            assert report["written"] and report["backup"] is not None
            assert Path(report["backup"]).read_bytes() == before[path]
            assert path.read_bytes() == repair_session_bytes(before[path])[1]
        else:
            assert not report["written"] and path.read_bytes() == before[path]
    again = client.compute(repair_sessions(work)).result()
    assert not any(r["repaired"] for r in again)


# ---- memory:// on the synchronous scheduler --------------------------------------------------


@pytest.fixture
def memory_fleet(fleet: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """The fleet copied to ``memory://fleet-<n>/``; maps each URL to its local original."""
    if not HAS_DASK:
        pytest.skip(
            'dask, distributed and fsspec are the "dask" extra: pip install "clawctx[dask]"'
        )
    import fsspec

    fs = fsspec.filesystem("memory")
    root = "/clawctx-test-fleet"
    originals: dict[str, str] = {}
    for path in sorted(fleet.rglob("*")):
        if path.is_file():
            rel = path.relative_to(fleet).as_posix()
            fs.pipe_file(f"{root}/{rel}", path.read_bytes())
            if path.suffix == ".jsonl":
                originals[f"memory://{root}/{rel}"] = str(path)
    yield f"memory://{root}", originals
    fs.rm(root, recursive=True)


@needs_dask
def test_read_sessions_from_memory_matches_the_local_scan(
    memory_fleet: tuple[str, dict[str, str]],
) -> None:
    from clawctx.dask import list_sessions, read_sessions

    url, originals = memory_fleet
    assert list_sessions(url) == sorted(originals)
    result = read_sessions(url, partition_bytes=100_000).compute(scheduler="sync")
    expected = _local_records([originals[u] for u in sorted(originals)])
    for row, want, u in zip(_rows(result), expected, sorted(originals), strict=True):
        want["path"] = u
        if want["error"] is not None:
            want["error"] = want["error"].replace(originals[u], u)
        assert row == want


@needs_dask
def test_read_messages_from_memory_matches_the_local_columns(
    memory_fleet: tuple[str, dict[str, str]],
) -> None:
    from clawctx.dask import read_messages

    url, originals = memory_fleet
    result = read_messages(url, partition_bytes=100_000).compute(scheduler="sync")
    urls = sorted(originals)
    assert _message_rows(result) == _local_messages([originals[u] for u in urls], urls)


@needs_dask
def test_empty_listing_gives_empty_collections(tmp_path: Path) -> None:
    from clawctx.dask import MESSAGE_COLUMNS, SESSION_COLUMNS, read_messages, read_sessions

    sessions = read_sessions(f"{tmp_path}/*.jsonl").compute(scheduler="sync")
    messages = read_messages(tmp_path).compute(scheduler="sync")
    assert (len(sessions), list(sessions.columns)) == (0, list(SESSION_COLUMNS))
    assert (len(messages), list(messages.columns)) == (0, list(MESSAGE_COLUMNS))


@needs_dask
def test_repair_dry_run_on_memory_reports_and_writes_nothing(
    memory_fleet: tuple[str, dict[str, str]],
) -> None:
    import fsspec

    from clawctx.dask import repair_sessions

    url, originals = memory_fleet
    fs = fsspec.filesystem("memory")
    reports = repair_sessions(url).compute(scheduler="sync")
    assert [r["path"] for r in reports] == sorted(originals)
    for report in reports:
        data = Path(originals[report["path"]]).read_bytes()
        expected, repaired = repair_session_bytes(data)
        assert report["repaired"] == expected.repaired
        assert report["summary"] == expected.summary()
        assert report["changes"] == [
            {"line": c.line, "kind": c.kind, "reason": c.reason} for c in expected.changes
        ]
        assert report["repaired_size_bytes"] == (None if repaired is None else len(repaired))
        assert not report["written"] and report["backup"] is None
        assert fs.cat_file(report["path"]) == data
    assert sum(r["repaired"] for r in reports) == 2
    # Repair is for pi sessions: a Claude Code or Codex file is refused with the header reason.
    assert {r["reason"] for r in reports} == {None, "empty session file", "invalid session header"}
    assert not [p for p in fs.find("/clawctx-test-fleet") if ".bak-" in p]


@needs_dask
def test_repair_write_on_memory_keeps_a_backup_object(
    memory_fleet: tuple[str, dict[str, str]],
) -> None:
    import fsspec

    from clawctx.dask import repair_sessions

    url, originals = memory_fleet
    fs = fsspec.filesystem("memory")
    reports = repair_sessions(url, write=True).compute(scheduler="sync")
    written = [r for r in reports if r["written"]]
    assert len(written) == 2
    for report in reports:
        data = Path(originals[report["path"]]).read_bytes()
        if report["written"]:
            assert fs.cat_file(report["backup"]) == data
            assert fs.cat_file(report["path"]) == repair_session_bytes(data)[1]
        else:
            assert report["backup"] is None and fs.cat_file(report["path"]) == data
    backups = [p for p in fs.find("/clawctx-test-fleet") if ".bak-" in p]
    assert len(backups) == 2
    # Backups are not sessions to list: their names do not end in .jsonl.
    again = repair_sessions(url).compute(scheduler="sync")
    assert len(again) == len(reports) and not any(r["repaired"] for r in again)


@needs_dask
def test_repair_write_leaves_an_object_that_changed_meanwhile(
    memory_fleet: tuple[str, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import fsspec

    import clawctx.dask as cdask

    _, originals = memory_fleet
    fs = fsspec.filesystem("memory")
    damaged = [u for u in sorted(originals) if repair_session_bytes(fs.cat_file(u))[1]]
    target = damaged[0]
    real = cdask.repair_session_bytes

    def append_meanwhile(data: bytes, **kwargs: Any) -> Any:
        # An agent appends while the repair runs.
        result = real(data, **kwargs)
        if data == Path(originals[target]).read_bytes():
            fs.pipe_file(target, data + MESSAGE)
        return result

    monkeypatch.setattr(cdask, "repair_session_bytes", append_meanwhile)
    [report] = cdask.repair_sessions(target, write=True).compute(scheduler="sync")
    assert report["repaired"] and not report["written"]
    assert report["reason"] == "changed while repairing: not written"
    assert fs.cat_file(target) == Path(originals[target]).read_bytes() + MESSAGE
    assert not [p for p in fs.find("/clawctx-test-fleet") if ".bak-" in p]
