"""Benchmark inputs (generated sessions per size) and the MB/s report.

Sizes: 1 MB by default (the smoke run of ``python -m pytest``, benchmarks disabled: every body
runs once); ``CLAWCTX_BENCH_FULL=1`` adds 10 MB and 100 MB, ``CLAWCTX_BENCH_1GB=1`` adds 1 GB.
Files are generated once per pytest session into pytest's temporary directory.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from benches.generate import GeneratedSession, format_size, generate_session

SMOKE_SIZES = [1_000_000]
FULL_SIZES = [1_000_000, 10_000_000, 100_000_000]
GB_SIZE = 1_000_000_000


def bench_sizes() -> list[int]:
    sizes = list(FULL_SIZES if os.environ.get("CLAWCTX_BENCH_FULL") == "1" else SMOKE_SIZES)
    if os.environ.get("CLAWCTX_BENCH_1GB") == "1":
        sizes.append(GB_SIZE)
    return sizes


SIZES = bench_sizes()
SEED = 0

_generated: dict[tuple[int, bool], GeneratedSession] = {}


def _generate(size: int, damage: bool, factory: pytest.TempPathFactory) -> GeneratedSession:
    key = (size, damage)
    if key not in _generated:
        directory = factory.mktemp(f"bench-{format_size(size)}{'-damaged' if damage else ''}")
        name = f"session-{format_size(size)}{'-damaged' if damage else ''}.jsonl"
        _generated[key] = generate_session(directory / name, size, seed=SEED, damage=damage)
    return _generated[key]


@pytest.fixture(scope="session", params=SIZES, ids=format_size)
def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> GeneratedSession:
    """A generated undamaged session of each benchmark size."""
    return _generate(request.param, False, tmp_path_factory)


@pytest.fixture(scope="session", params=SIZES, ids=format_size)
def damaged_session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> GeneratedSession:
    """The same with garbage lines, a NUL run and a torn last line."""
    return _generate(request.param, True, tmp_path_factory)


def copy_session(info: GeneratedSession, directory: Path) -> Path:
    target = directory / info.path.name
    shutil.copyfile(info.path, target)
    return target


# ---- measuring ----------------------------------------------------------------------------


@dataclass
class Measured:
    scenario: str
    size: int
    impl: str
    median_s: float
    min_s: float
    rounds: int
    nbytes: int


MEASURED: list[Measured] = []


def measure(
    benchmark: Any,
    scenario: str,
    impl: str,
    session: GeneratedSession,
    fn: Callable[..., Any],
    *args: Any,
    nbytes: int | None = None,
    setup: Callable[[], Any] | None = None,
    rounds: int | None = None,
) -> Any:
    """Runs ``fn(*args)`` under pytest-benchmark in the group ``"<scenario> <size>"`` and
    records its throughput (``nbytes`` per second, the file's size by default) in
    ``extra_info["MB_per_s"]`` and in the summary printed at the end of the run."""
    size = session.target
    nbytes = session.size if nbytes is None else nbytes
    benchmark.group = f"{scenario} {format_size(size)}"
    benchmark.extra_info.update(scenario=scenario, impl=impl, size_bytes=size, bytes=nbytes)
    if setup is None and not benchmark.disabled:
        fn(*args)  # warm-up outside the timing: page cache, lazy imports (numpy), allocator
    if setup is not None or rounds is not None:
        result = benchmark.pedantic(fn, args=args, setup=setup, rounds=rounds or 5, warmup_rounds=1)
    else:
        result = benchmark(fn, *args)
    stats = getattr(benchmark, "stats", None)
    if stats is not None:
        s = stats.stats
        benchmark.extra_info["MB_per_s"] = round(nbytes / 1e6 / s.median, 1)
        MEASURED.append(Measured(scenario, size, impl, s.median, s.min, s.rounds, nbytes))
    return result


def _fmt_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 0.01:
        return f"{seconds * 1e3:.0f} ms"
    if seconds >= 0.001:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


def summary_lines(measured: list[Measured]) -> list[str]:
    """A markdown table: median time, MB/s, and speed-up over the reference and the floor of
    the same scenario and size."""
    by_key = {(m.scenario, m.size, m.impl): m for m in measured}
    lines = [
        "| scenario | size | implementation | median | MB/s | vs reference | vs orjson floor |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in measured:
        if m.scenario == "refresh":
            continue  # its own table below
        ref = by_key.get((m.scenario, m.size, "reference"))
        floor = by_key.get((m.scenario, m.size, "orjson floor"))
        vs_ref = f"{ref.median_s / m.median_s:.2f}x" if ref and m.impl != "reference" else ""
        vs_floor = (
            f"{floor.median_s / m.median_s:.2f}x" if floor and m.impl != "orjson floor" else ""
        )
        mbps = m.nbytes / 1e6 / m.median_s
        lines.append(
            f"| {m.scenario} | {format_size(m.size)} | {m.impl} | {_fmt_time(m.median_s)} | "
            f"{mbps:,.0f} | {vs_ref} | {vs_floor} |"
        )
    refresh = [m for m in measured if m.scenario == "refresh"]
    if refresh:
        lines += [
            "",
            "| refresh after one appended turn | size | median | share of the cold clawctx run "
            "| vs the reference re-running the pipeline |",
            "|---|---|---|---|---|",
        ]
        for m in refresh:
            if "assemble" in m.impl:
                cold_scenario, cold_impl = "assemble (facade)", "clawctx cold"
            elif "pipeline" in m.impl:
                cold_scenario, cold_impl = "pipeline", "clawctx"
            else:
                cold_scenario, cold_impl = "open+context", "clawctx"
            cold = by_key.get((cold_scenario, m.size, cold_impl))
            ref = by_key.get(("pipeline", m.size, "reference"))
            share = f"{100 * m.median_s / cold.median_s:.2f}% of {cold_scenario}" if cold else ""
            vs_ref = f"{ref.median_s / m.median_s:.0f}x" if ref else ""
            lines.append(
                f"| {m.impl} | {format_size(m.size)} | {_fmt_time(m.median_s)} | {share} | {vs_ref} |"
            )
    return lines


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not MEASURED:
        return
    order = ["open+context", "pipeline", "refresh", "token estimate", "repair", "transcript ops"]
    measured = sorted(
        MEASURED,
        key=lambda m: (order.index(m.scenario) if m.scenario in order else 99, m.scenario, m.size),
    )
    terminalreporter.section("clawctx benchmarks: median, throughput (file MB/s) and speed-ups")
    for line in summary_lines(measured):
        terminalreporter.write_line(line)
