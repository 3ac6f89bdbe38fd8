"""OpenClaw store against JSONL, paired: the same records read both ways, alternating in one
process, several rounds, the minimum wall and CPU time of each (issue 30; benches/README.md).

    PYTHONPATH=python python benches/store_paired.py --size 100MB --rounds 15 [--dir DIR]

On a shared, loaded machine single runs swing by a third; alternating the two reads in one
process and keeping each one's minimum gives a ratio both were measured under alike. CPU time
is the process's (every thread's), so a read that spreads over the cores does not look
cheaper than one that does not. Rows: the scan (``store_records`` against ``scan_sessions``
with one worker, as ``benches/test_store.py``), the full open with its context, and the fetch
alone (``record_lines``: the rows out of SQLite, checked, as the scan hands them over).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

try:
    from benches.generate import generate_session, parse_size
except ImportError:  # run as a script: python benches/store_paired.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benches.generate import generate_session, parse_size

import clawctx
from clawctx.history.scan import store_records
from clawctx.history.store import open_store, write_store


def _cases(jsonl: Path, store: Path) -> list[tuple[str, Callable[[], object]]]:
    def store_scan() -> object:
        [record] = store_records(store)
        assert record.error is None
        return record.entries

    def store_open() -> object:
        with open_store(store) as s:
            return len(s.open("bench").context().messages)

    def store_fetch() -> object:
        with open_store(store) as s:
            return len(s.record_lines("bench"))

    return [
        ("JSONL scan", lambda: clawctx.scan_sessions([jsonl], workers=1)[0].entries),
        ("store scan", store_scan),
        (
            "JSONL open + context",
            lambda: len(clawctx.Session.open(jsonl, read_only=True).context().messages),
        ),
        ("store open + context", store_open),
        ("store fetch only", store_fetch),
    ]


def measure(jsonl: Path, store: Path, rounds: int) -> None:
    cases = _cases(jsonl, store)
    best = {name: [float("inf"), float("inf")] for name, _ in cases}
    loads = []
    for _ in range(rounds):
        loads.append(os.getloadavg()[0])
        for name, run in cases:
            wall, cpu = time.perf_counter(), time.process_time()
            run()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best[name] = [min(best[name][0], wall), min(best[name][1], cpu)]
    print(f"{jsonl.stat().st_size / 1e6:.0f} MB, {rounds} rounds, minimum of each:")
    for name, (wall, cpu) in best.items():
        line = f"  {name:22s} wall {wall * 1000:6.0f} ms  CPU {cpu * 1000:6.0f} ms"
        twin = name.replace("store", "JSONL")
        if name.startswith("store") and twin in best:
            ref = best[twin]
            line += f"   store/JSONL: wall {wall / ref[0]:.2f}x, CPU {cpu / ref[1]:.2f}x"
        print(line)
    print(f"load average (1 min) during the rounds: {min(loads):.1f}-{max(loads):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="100MB")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--dir", type=Path, help="keep the files here (default: a temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="clawctx-store-paired-") as tmp:
        directory = args.dir or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        jsonl = directory / f"session-{args.size}.jsonl"
        store = directory / f"session-{args.size}.sqlite"
        if not jsonl.exists():
            generate_session(jsonl, parse_size(args.size), seed=0)
        if not store.exists():
            write_store(jsonl, store, session_id="bench")
        measure(jsonl, store, args.rounds)


if __name__ == "__main__":
    main()
