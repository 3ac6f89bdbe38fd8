"""Instruction counts of clawctx operations under callgrind, to compare two builds on a busy machine.

Wall-clock benchmarks need a quiet machine; instruction counts do not. Each operation runs in a
fresh interpreter under ``valgrind --tool=callgrind`` (single rayon thread, so counts repeat),
and the interpreter's start-up and imports (the ``baseline`` operation) are subtracted.

    python benches/instruction_counts.py OLD_PYTHON NEW_PYTHON [--size 5MB]

Each PYTHON is an interpreter with a clawctx build installed (e.g. two venvs built with
``pip install .`` from two commits). Prints one row per operation: millions of instructions for
each build and the ratio. Needs valgrind.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

OPERATIONS = (
    "open_context",
    "leaf_context",
    "transcript_ops",
    "count_exact",
    "count_calibrated",
    "repair",
)

# Run in the measured interpreter: only public API calls, the same for every build.
_OPERATION_SCRIPT = r"""
import shutil, sys
import clawctx

op, session, damaged, scratch = sys.argv[1:5]
prose = "The quick brown fox jumps over the lazy dog; context windows fill up fast.\n" * 3000
cjk = "上下文管理是智能体运行时的核心问题。" * 4000
if op == "baseline":
    pass
elif op == "open_context":
    clawctx.Session.open(session, read_only=True).context().messages.to_json()
elif op == "leaf_context":
    clawctx.read_leaf_context(session).messages.to_json()
elif op == "transcript_ops":
    messages = clawctx.Session.open(session, read_only=True).context().messages
    repaired = clawctx.repair_tool_pairing(messages, now_ms=0)
    clawctx.limit_history_turns(repaired.messages, 20)
    clawctx.estimate_context_tokens(messages)
    messages.token_counts()
    settings = clawctx.PruningSettings.from_config({"mode": "cache-ttl"})
    assert settings is not None
    clawctx.prune_context(messages, settings, context_window_tokens=20_000)
elif op == "count_exact":
    clawctx.count_tokens(prose)
    clawctx.count_tokens(cjk)
elif op == "count_calibrated":
    clawctx.count_tokens(prose, estimator="calibrated")
    clawctx.count_tokens(cjk, estimator="calibrated")
elif op == "repair":
    shutil.copy(damaged, scratch)
    clawctx.repair_session_file(scratch)
else:
    raise SystemExit(f"unknown operation {op}")
"""


def count_instructions(python: str, op: str, files: tuple[Path, Path, Path], script: Path) -> int:
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        python,
        str(script),
        op,
        *map(str, files),
    ]
    env = {**os.environ, "RAYON_NUM_THREADS": "1"}
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    match = re.search(r"Collected : (\d+)", result.stderr)
    if match is None:
        raise RuntimeError(f"no instruction count from callgrind:\n{result.stderr[-2000:]}")
    return int(match.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pythons", nargs=2, metavar="PYTHON")
    parser.add_argument("--size", default="5MB", help="generated session size (default 5MB)")
    parser.add_argument(
        "--only", nargs="+", choices=OPERATIONS, default=OPERATIONS, help="operations to count"
    )
    args = parser.parse_args(argv)
    generator = Path(__file__).with_name("generate.py")
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        session, damaged = folder / "session.jsonl", folder / "damaged.jsonl"
        for path, extra in ((session, []), (damaged, ["--damage", "--seed", "3"])):
            subprocess.run(
                [sys.executable, str(generator), "--size", args.size, *extra, str(path)],
                check=True,
                capture_output=True,
            )
        script = folder / "operation.py"
        script.write_text(_OPERATION_SCRIPT, encoding="utf-8")
        files = (session, damaged, folder / "scratch.jsonl")
        baselines = [count_instructions(p, "baseline", files, script) for p in args.pythons]
        print(f"| operation ({args.size}) | old (M instr.) | new (M instr.) | new/old |")
        print("|---|---:|---:|---:|")
        for op in args.only:
            old, new = (
                count_instructions(p, op, files, script) - base
                for p, base in zip(args.pythons, baselines, strict=True)
            )
            print(f"| {op} | {old / 1e6:.1f} | {new / 1e6:.1f} | {new / old:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
