"""The warm synchronous ``prepare`` on its kept event loop against ``asyncio.run`` per call,
paired: both alternating in one process on the same open session (issue 32; benches/README.md).

    PYTHONPATH=python python benches/warm_loop_paired.py --size 10MB --rounds 30 [--dir DIR]

Each round, for each variant: another writer appends one turn, then one ``prepare`` is timed
(it refreshes the session and runs the whole request) and a second one with nothing appended.
The "asyncio.run" variant is the synchronous entry point as it was before the kept loop
(``clawctx/engine/_sync_loop.py``): a new loop, executor shutdown and SIGINT handler swap per
call. The context grows by a turn every round, so later rounds are slower; the minimum is the
first rounds' figure, the median shows the growth.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

try:
    from benches.generate import TurnAppender, generate_session, parse_size
except ImportError:  # run as a script: python benches/warm_loop_paired.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benches.generate import TurnAppender, generate_session, parse_size

import clawctx
import clawctx.engine.pipeline as pipeline_module

MODEL = clawctx.ModelSpec("anthropic", "anthropic-messages", "claude-sonnet-4-5")
REQUEST = clawctx.PromptRequest(text="Summarize where we are.", session_key="agent:main:main")


def _asyncio_run_per_call(awaitable: Coroutine[Any, Any, Any], async_name: str) -> Any:
    """The synchronous entry point before the kept loop: ``asyncio.run`` on every call."""
    token = pipeline_module._RUN_IN_PLACE.set(True)
    try:
        return asyncio.run(awaitable)
    finally:
        pipeline_module._RUN_IN_PLACE.reset(token)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="10MB")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--dir", type=Path, default=None, help="where the session is written")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(dir=args.dir))
    try:
        path = work / "session.jsonl"
        generated = generate_session(path, parse_size(args.size), seed=0)
        workspace = work / "workspace"
        workspace.mkdir()
        (workspace / "AGENTS.md").write_text("Be brief.\n", encoding="utf-8")
        pipeline = clawctx.ContextPipeline(model=MODEL, workspace_dir=workspace, read_only=True)
        session = clawctx.Session.open(path, read_only=True)
        for _ in range(3):
            pipeline.prepare(session, REQUEST)
        appender = TurnAppender(path, generated.leaf_id)
        variants: dict[str, Callable[..., Any]] = {
            "asyncio.run": _asyncio_run_per_call,
            "kept loop": pipeline_module._run_sync,
        }
        after: dict[str, list[float]] = {name: [] for name in variants}
        again: dict[str, list[float]] = {name: [] for name in variants}
        try:
            for _ in range(args.rounds):
                for name, run_sync in variants.items():
                    pipeline_module._run_sync = run_sync  # type: ignore[assignment]
                    appender.append_turn()
                    started = time.perf_counter()
                    pipeline.prepare(session, REQUEST)
                    after[name].append(time.perf_counter() - started)
                    started = time.perf_counter()
                    pipeline.prepare(session, REQUEST)
                    again[name].append(time.perf_counter() - started)
        finally:
            pipeline_module._run_sync = variants["kept loop"]  # type: ignore[assignment]
        print(f"{args.size}, {args.rounds} rounds, {len(session.context().messages)} messages")
        for name in variants:
            first, second = sorted(after[name]), sorted(again[name])
            print(
                f"{name:12s} after one appended turn: min {first[0] * 1e3:.2f} ms, median "
                f"{first[len(first) // 2] * 1e3:.2f} ms; nothing appended: min "
                f"{second[0] * 1e3:.2f} ms, median {second[len(second) // 2] * 1e3:.2f} ms"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
