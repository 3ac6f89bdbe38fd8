"""Peak memory (RSS) of open + context and of repair, each in a fresh interpreter.

    python benches/memory.py --size 100MB [--dir DIR]
    python benches/memory.py --crafted 1000000 [--dir DIR]

Rows:

- open + context of an undamaged session (clawctx, and the reference for comparison), holding
  the session and its context when the peak is read;
- repair of a damaged session with many lines (the generator's damage: garbage lines, a NUL
  run, a torn last line), and of a file of the same size that is mostly one long line (a
  ``toolResult`` of ~90% of the file, then a garbage line), by clawctx and by the reference.

With ``--crafted N``, the rows are instead a writable ``Session.open`` of files of N crafted
lines of each shape of issue 17 (finding 12): ``{}`` lines, a chain of small labels, short
messages, custom entries (``tests/history/test_memory_bounds.py`` holds the bound, 3x the file + 64 MB).

Each row runs in its own ``python -c`` process (Linux): after the imports the kernel's
peak-RSS mark is reset (``/proc/self/clear_refs``), the RSS at that point is the baseline, and
the peak (``VmHWM``) is read after the work, with the work's results still alive.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import orjson

try:
    from benches.generate import format_size, generate_session, parse_size
except ImportError:  # run as a script: python benches/memory.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benches.generate import format_size, generate_session, parse_size

REPO = Path(__file__).resolve().parent.parent

PRELUDE = (
    "import gc, resource, sys\n"
    "import clawctx\n"
    "from benches import reference_pipeline as ref\n"
    "P = sys.argv[1]\n"
    "def status(key):\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith(key + ':'):\n"
    "            return int(line.split()[1]) * 1024\n"
    "gc.collect()\n"
    "try:\n"
    "    with open('/proc/self/clear_refs', 'w') as f:\n"
    "        f.write('5')  # reset the peak (VmHWM) to the current RSS\n"
    "except OSError:\n"
    "    pass\n"
    "before = status('VmRSS')\n"
)
EPILOGUE = "\nprint(before, max(status('VmHWM'), status('VmRSS')))\n"

WORK = {
    "clawctx open + context": (
        "s = clawctx.Session.open(P, read_only=True)\nm = s.context().messages\nassert len(m) > 0"
    ),
    "reference open + context": "m = ref.load_context(P)\nassert len(m) > 0",
    "clawctx repair": "r = clawctx.repair_session_file(P)\nassert r.repaired, r",
    "reference repair": "r = ref.repair_file(P)\nassert r['repaired'], r",
    "clawctx open": "s = clawctx.Session.open(P)",
}

STAMP = "2026-01-01T00:00:00.000Z"


def _crafted_entry(shape: str, i: int, parent: str | None) -> dict[str, object]:
    if shape == "labels":
        body: dict[str, object] = {
            "type": "label",
            "targetId": parent or "00000000",
            "label": f"l{i}",
        }
    elif shape == "short messages":
        body = {"type": "message", "message": {"role": "user", "content": ""}}
    else:
        body = {"type": "custom", "customType": "c", "data": {"n": i}}
    return body | {"id": f"{i:08x}", "parentId": parent, "timestamp": STAMP}


CRAFTED_SHAPES = ("{} lines", "labels", "short messages", "custom entries")


def crafted_session(path: Path, shape: str, lines: int) -> Path:
    """A session of a header and ``lines`` crafted lines of ``shape`` (``CRAFTED_SHAPES``);
    every entry but ``{}`` is the child of the one before."""
    header = {"type": "session", "version": 3, "id": "crafted", "timestamp": STAMP, "cwd": "/"}
    with path.open("wb") as out:
        out.write(orjson.dumps(header) + b"\n")
        if shape == "{} lines":
            out.write(b"{}\n" * lines)
            return path
        parent = None
        for i in range(lines):
            out.write(orjson.dumps(_crafted_entry(shape, i, parent)) + b"\n")
            parent = f"{i:08x}"
    return path


def measure_crafted(lines: int, directory: Path) -> list[Row]:
    """Peak RSS of a writable open of a file of ``lines`` lines of each crafted shape."""
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    for shape in CRAFTED_SHAPES:
        path = crafted_session(directory / f"crafted-{shape.split()[0]}.jsonl", shape, lines)
        before, peak = peak_rss(WORK["clawctx open"], path)
        rows.append(
            Row(
                f"clawctx open, {shape}",
                path.name,
                path.stat().st_size,
                _longest_line(path),
                before,
                peak,
            )
        )
    return rows


@dataclass
class Row:
    what: str
    file: str
    file_bytes: int
    longest_line: int
    #: RSS after the imports (interpreter, clawctx, numpy, orjson).
    baseline_rss: int
    #: Peak RSS during the work (VmHWM, reset after the imports).
    peak_rss: int

    @property
    def over_baseline(self) -> int:
        return self.peak_rss - self.baseline_rss


def peak_rss(work: str, path: Path) -> tuple[int, int]:
    """``(RSS after the imports, peak RSS)`` in bytes of a fresh interpreter doing ``work``
    on ``path``."""
    out = subprocess.run(
        [sys.executable, "-c", PRELUDE + work + EPILOGUE, str(path)],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    )
    before, peak = out.stdout.strip().splitlines()[-1].split()
    return int(before), int(peak)


def long_line_session(path: Path, size: int) -> Path:
    """A damaged session of ``size`` bytes that is mostly one ``toolResult`` line."""
    header = {
        "type": "session",
        "version": 3,
        "id": "long-line",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/",
    }
    user = {
        "type": "message",
        "id": "00000001",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "show me the diff", "timestamp": 1767225601000},
    }
    call = {
        "type": "message",
        "id": "00000002",
        "parentId": "00000001",
        "timestamp": "2026-01-01T00:00:02.000Z",
        "message": {
            "role": "assistant",
            "content": [
                {
                    "type": "toolCall",
                    "id": "t1",
                    "name": "bash",
                    "arguments": {"command": "git diff"},
                }
            ],
            "stopReason": "toolUse",
            "timestamp": 1767225602000,
        },
    }
    line = "+ a changed line of a very long diff\n" * (size * 9 // 10 // 37)
    result = {
        "type": "message",
        "id": "00000003",
        "parentId": "00000002",
        "timestamp": "2026-01-01T00:00:03.000Z",
        "message": {
            "role": "toolResult",
            "toolCallId": "t1",
            "toolName": "bash",
            "content": [{"type": "text", "text": line}],
            "isError": False,
            "timestamp": 1767225603000,
        },
    }
    with path.open("wb") as out:
        for entry in (header, user, call, result):
            out.write(orjson.dumps(entry) + b"\n")
        out.write(b'{"type":"message","id":"00000004","parentId":"000\n')  # a torn record
    return path


def _longest_line(path: Path) -> int:
    longest = 0
    with path.open("rb") as f:
        for line in f:
            longest = max(longest, len(line))
    return longest


def measure_memory(size: int, directory: Path, *, seed: int = 0) -> list[Row]:
    directory.mkdir(parents=True, exist_ok=True)
    clean = generate_session(directory / f"clean-{format_size(size)}.jsonl", size, seed=seed).path
    damaged = generate_session(
        directory / f"damaged-{format_size(size)}.jsonl", size, seed=seed, damage=True
    ).path
    long_line = long_line_session(directory / f"long-line-{format_size(size)}.jsonl", size)
    work_copy = directory / "repair-copy.jsonl"
    rows = []
    for what in ("clawctx open + context", "reference open + context"):
        before, peak = peak_rss(WORK[what], clean)
        rows.append(Row(what, clean.name, clean.stat().st_size, _longest_line(clean), before, peak))
    for source in (damaged, long_line):
        for what in ("clawctx repair", "reference repair"):
            shutil.copyfile(source, work_copy)
            before, peak = peak_rss(WORK[what], work_copy)
            rows.append(
                Row(what, source.name, source.stat().st_size, _longest_line(source), before, peak)
            )
            for leftover in directory.glob(work_copy.name + "*"):
                leftover.unlink()
    return rows


def table(rows: list[Row]) -> str:
    mb = 1e6
    lines = [
        "| what | file | file size | longest line | RSS after imports | peak RSS | peak over imports "
        "| peak / file size | (peak over imports) / file size |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.what} | {r.file} | {r.file_bytes / mb:.1f} MB | {r.longest_line / mb:.2f} MB | "
            f"{r.baseline_rss / mb:.0f} MB | {r.peak_rss / mb:.0f} MB | {r.over_baseline / mb:.0f} MB "
            f"| {r.peak_rss / r.file_bytes:.2f} | {r.over_baseline / r.file_bytes:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="peak RSS of open + context and of repair")
    parser.add_argument("--size", default="100MB")
    parser.add_argument(
        "--dir", type=Path, default=None, help="where the files go (default: a temp dir)"
    )
    parser.add_argument(
        "--crafted",
        type=int,
        default=None,
        metavar="LINES",
        help="measure a writable open of files of LINES crafted lines of each shape instead",
    )
    args = parser.parse_args(argv)
    size = parse_size(args.size)

    def run(directory: Path) -> list[Row]:
        if args.crafted is not None:
            return measure_crafted(args.crafted, directory)
        return measure_memory(size, directory)

    if args.dir is None:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            print(table(run(Path(tmp))))
    else:
        print(table(run(args.dir)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
