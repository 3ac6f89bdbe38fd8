"""The cold request of two builds of clawctx, paired: ``ContextPipeline.prepare(path)`` and
``read_leaf_context(path)`` on the same generated sessions, the two builds alternating in
child processes (one process cannot load two builds of ``clawctx._core``) in one run
(issue 32; benches/README.md).

    python benches/cold_prepare_paired.py --build old=/tmp/pkg_old --build new=python \\
        --size 1MB --size 10MB --size 100MB --pairs 3 --calls 30 [--dir DIR]

Each ``--build NAME=DIR`` is a directory holding a ``clawctx`` package (with its native
module). For every size and pair, each build runs in a fresh process: it times ``--calls``
``prepare`` calls on a path (the first is not counted: it pays imports and first-use caches)
and as many ``read_leaf_context`` calls, and reports the minimum of each. The table gives the
minimum over the pairs; the ratio is ``prepare`` over the leaf read of the same process.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The child: one build, one session; prints the two minima (ms) as JSON.
CHILD = """
import json, sys, time
from pathlib import Path
import clawctx
path, workspace, calls = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
model = clawctx.ModelSpec("anthropic", "anthropic-messages", "claude-sonnet-4-5")
request = clawctx.PromptRequest(text="Summarize where we are.", session_key="agent:main:main")
pipeline = clawctx.ContextPipeline(
    model=model, workspace_dir=workspace, read_only=True, now_ms=lambda: 1_700_000_000_000
)
def best(call):
    call()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3
prepare = best(lambda: pipeline.prepare(path, request))
leaf = best(lambda: clawctx.read_leaf_context(path).messages)
messages = len(pipeline.prepare(path, request).messages)
print(json.dumps({"prepare_ms": prepare, "leaf_ms": leaf, "messages": messages}))
"""


def run_child(package: Path, session: Path, workspace: Path, calls: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(package))
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(session), str(workspace), str(calls)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    from benches.generate import format_size, generate_session, parse_size

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", action="append", required=True, help="NAME=DIR")
    parser.add_argument("--size", action="append", default=None)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--dir", type=Path, default=None, help="where sessions are written")
    args = parser.parse_args(argv)
    builds = [
        (name, Path(directory).resolve())
        for name, directory in (b.split("=", 1) for b in args.build)
    ]
    work = Path(tempfile.mkdtemp(dir=args.dir))
    workspace = work / "workspace"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("Be brief.\n", encoding="utf-8")
    print(
        "| size (context messages) | build | `prepare(path)` cold | `read_leaf_context` | ratio |"
    )
    print("|---|---|---:|---:|---:|")
    for size in [parse_size(s) for s in args.size or ["1MB", "10MB", "100MB"]]:
        session = work / f"session-{size}.jsonl"
        generate_session(session, size, seed=0)
        best: dict[str, dict[str, float]] = {}
        for _ in range(args.pairs):
            for name, package in builds:
                result = run_child(package, session, workspace, args.calls)
                kept = best.setdefault(name, result)
                for key in ("prepare_ms", "leaf_ms"):
                    kept[key] = min(kept[key], result[key])
        for name, _ in builds:
            r = best[name]
            print(
                f"| {format_size(size)} ({int(r['messages'])}) | {name} | {r['prepare_ms']:.2f} ms"
                f" | {r['leaf_ms']:.2f} ms | {r['prepare_ms'] / r['leaf_ms']:.1f}x |"
            )
        session.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
