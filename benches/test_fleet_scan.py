"""A fleet of sessions scanned three ways: the Rust scan on two threads, Dask on a two-process
``LocalCluster`` (``clawctx.dask.read_sessions``), and a plain Python loop over the files on one
core. Every way must produce the same records.

Smoke mode (the default ``python -m pytest``): 16 sessions, about 3 MB in all.
``CLAWCTX_BENCH_FLEET=1``: 2,000 sessions of mixed sizes, about 2 GB
(``benches/fleet_generate.py``); generating it takes minutes, so it has its own switch, and
``CLAWCTX_BENCH_FLEET_DIR=DIR`` keeps the generated fleet in DIR for the next run.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import clawctx
from benches.fleet_generate import Fleet, generate_fleet
from clawctx.history import scan_sessions

FULL = os.environ.get("CLAWCTX_BENCH_FLEET") == "1"
SESSIONS, TOTAL = (2000, 2_000_000_000) if FULL else (16, 3_000_000)
GROUP = f"fleet scan {SESSIONS} sessions"
HAS_DASK = all(
    importlib.util.find_spec(name) is not None for name in ("dask", "distributed", "fsspec")
)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    # CLAWCTX_BENCH_FLEET_DIR keeps the full fleet between runs (generating it takes minutes).
    kept = os.environ.get("CLAWCTX_BENCH_FLEET_DIR")
    directory = Path(kept) if FULL and kept else tmp_path_factory.mktemp("fleet-bench") / "fleet"
    return generate_fleet(directory, SESSIONS, TOTAL)


@pytest.fixture(scope="module")
def expected(fleet: Fleet) -> list[tuple[Any, ...]]:
    return _records(scan_sessions(sorted(fleet.paths)))


def _records(summaries: Any) -> list[tuple[Any, ...]]:
    return [
        (str(s.path), s.error, s.entries, s.messages, s.skipped_lines, s.estimated_tokens)
        for s in summaries
    ]


def _cpu_seconds(client: Any = None) -> float:
    """CPU time of this process and, with a client, of its workers: less sensitive than wall
    time to other load on a shared machine."""
    own = os.times()
    total = own.user + own.system
    if client is not None:
        total += sum(t[0] + t[1] for t in client.run(os.times).values())
    return total


def _run(benchmark: Any, fn: Any, *args: Any, client: Any = None, **kwargs: Any) -> Any:
    benchmark.group = GROUP
    before = _cpu_seconds(client)
    rounds = 1 if FULL else 3
    result = benchmark.pedantic(fn, args=args, kwargs=kwargs, rounds=rounds, iterations=1)
    benchmark.extra_info["cpu_s_per_round"] = round((_cpu_seconds(client) - before) / rounds, 2)
    return result


def test_fleet_rust_scan_two_threads(
    benchmark: Any, fleet: Fleet, expected: list[tuple[Any, ...]]
) -> None:
    benchmark.extra_info["bytes"] = fleet.total_bytes
    result = _run(benchmark, scan_sessions, sorted(fleet.paths), workers=2)
    assert _records(result) == expected
    assert sum(r[4] > 0 for r in _records(result)) == fleet.damaged


def test_fleet_python_loop_one_core(
    benchmark: Any, fleet: Fleet, expected: list[tuple[Any, ...]]
) -> None:
    def loop(paths: list[Path]) -> list[Any]:
        out = []
        for path in paths:
            out.extend(scan_sessions([path], workers=1))
        return out

    benchmark.extra_info["bytes"] = fleet.total_bytes
    assert _records(_run(benchmark, loop, sorted(fleet.paths))) == expected


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    if not HAS_DASK:
        pytest.skip('the "dask" extra is not installed: pip install "clawctx[dask]"')
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


def test_fleet_dask_local_cluster(
    benchmark: Any, client: Any, fleet: Fleet, expected: list[tuple[Any, ...]]
) -> None:
    from clawctx.dask import read_sessions

    root = fleet.paths[0].parent.parent

    def run() -> Any:
        # Listing, partitioning and the scan, as a user runs it.
        return client.compute(read_sessions(root)).result()

    benchmark.extra_info["bytes"] = fleet.total_bytes
    frame = _run(benchmark, run, client=client)
    plain = frame.astype(object).where(frame.notna(), None)
    rows = [
        (r.path, r.error, r.entries, r.messages, r.skipped_lines, r.estimated_tokens)
        for r in plain.itertuples()
    ]
    assert rows == expected
