"""Fault injection on session writes (issue 17 "Hardening", finding 7 and the crash tests).

Write errors come from `RLIMIT_FSIZE` in a child process (no root needed): with SIGXFSZ
ignored, a write that crosses the limit is cut short (a short write) and the next one fails
with EFBIG, the same path a full disk (ENOSPC) takes. Crashes are `kill -9` of a child at a
random moment of a repair or of a run of appends. After either, the file must hold the old or
the new content, never a mix, and no torn line clawctx wrote.
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx.history import Session, repair_session_file

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or not hasattr(signal, "SIGXFSZ"), reason="POSIX rlimits and signals"
)

NOW = 1_767_225_600_000
HEADER = {
    "type": "session",
    "version": 3,
    "id": "s1",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/w",
}


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":")) + "\n"


def _session_text(messages: int, torn_every: int = 0, body: int = 20) -> str:
    parts = [_line(HEADER)]
    parent = None
    for i in range(messages):
        message = {"role": "user", "content": f"hello {i} " + "x" * body, "timestamp": 1}
        parts.append(
            _line(
                {
                    "type": "message",
                    "id": f"m{i}",
                    "parentId": parent,
                    "timestamp": "2026-01-01T00:00:01.000Z",
                    "message": message,
                }
            )
        )
        if torn_every and i % torn_every == torn_every - 1:
            parts.append('{"type":"message","id":"torn","mess\n')
        parent = f"m{i}"
    return "".join(parts)


def _child(body: str) -> subprocess.Popen[str]:
    # The child imports the clawctx this test run imports.
    package_root = Path(clawctx.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(package_root), "RUST_BACKTRACE": "0"}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(body)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _run(body: str) -> str:
    child = _child(body)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    return out


# ---- write errors ------------------------------------------------------------------------------

_LIMITED_APPENDS = """
import json, os, resource, signal, sys
from clawctx.history import Session
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of death
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
for path, fsync, allowance in json.loads(sys.argv[1]):
    session = Session.open(path, fsync=fsync)
    before = len(session.entries())
    resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path) + allowance, hard))
    try:
        session.append_message({"role": "user", "content": "y" * 20000, "timestamp": 1})
        outcome = "appended"
    except OSError as e:
        outcome = [e.errno, e.filename == path, str(e)]
    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
    assert len(session.entries()) == before  # memory never runs ahead of the file
    session.append_message({"role": "user", "content": "after", "timestamp": 1})
    print(json.dumps([outcome, len(Session.open(path, read_only=True).entries())]))
"""


def test_failed_append_leaves_no_partial_bytes(tmp_path: Path) -> None:
    # Before: the bytes written up to the failure stayed in the file as a torn line. Every
    # case runs in one child (fsync on/off x torn last line or not x 0, 1, 4096 bytes allowed
    # past the current size, i.e. no write, a 1-byte short write, a 4 KB short write).
    cases = []
    texts = {}
    for k, (fsync, torn_tail, allowance) in enumerate(
        (f, t, a) for f in (True, False) for t in (False, True) for a in (0, 1, 4096)
    ):
        path = tmp_path / f"s{k}.jsonl"
        texts[str(path)] = (
            _session_text(3) + ('{"type":"message","id":"tor' if torn_tail else ""),
            torn_tail,
        )
        path.write_text(texts[str(path)][0])
        cases.append([str(path), fsync, allowance])
    script = f"import sys; sys.argv[1:] = [{json.dumps(cases)!r}]\n" + _LIMITED_APPENDS
    lines = _run(script).splitlines()
    assert len(lines) == len(cases)
    for (path, _, _), line in zip(cases, lines, strict=True):
        _, entries = json.loads(line)
        # The failed append is gone without a trace; the next append after the limit is
        # lifted lands cleanly (after a "\n" that ends the torn line, if there was one).
        text, torn_tail = texts[path]
        after = Path(path).read_text()
        assert after.startswith(text), path
        rest = after[len(text) :]
        assert rest.startswith("\n") == torn_tail
        assert json.loads(rest)["message"]["content"] == "after"
        assert entries == 4
    for (path, _, _), line in zip(cases, lines, strict=True):
        (error_number, names_file, message), _ = json.loads(line)
        assert error_number == errno.EFBIG and names_file, line
        assert "os error" not in message and message.count(path) == 1, message


_LIMITED_REPAIR = """
import os, resource, signal, sys
from clawctx.history import RepairError, repair_session_file
path = sys.argv[1]
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path) // 2, hard))
try:
    repair_session_file(path, now_ms=1)
    print("repaired")
except RepairError as e:
    print("RepairError", str(e))
"""


def test_failed_repair_write_leaves_the_original_and_no_files(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    text = _session_text(200, torn_every=50)
    path.write_text(text)
    out = _run(f"import sys; sys.argv[1:] = [{str(path)!r}]\n" + _LIMITED_REPAIR)
    assert out.startswith("RepairError "), out
    assert "os error" not in out and out.count(str(path)) == 1, out
    assert path.read_text() == text
    assert os.listdir(tmp_path) == ["s.jsonl"]  # no temp file, no backup


# ---- kill -9 -------------------------------------------------------------------------------------

_REPAIR_CHILD = """
import sys
from clawctx.history import repair_session_file
print("ready", flush=True)
repair_session_file(sys.argv[1], now_ms=1)
print("done", flush=True)
"""


def test_kill_during_repair_leaves_old_or_new_and_next_repair_cleans_up(tmp_path: Path) -> None:
    rng = random.Random(17)
    old = _session_text(4000, torn_every=400, body=300)  # ~1.6 MB: a repair takes a while
    expected = tmp_path / "expected" / "s.jsonl"
    expected.parent.mkdir()
    expected.write_text(old)
    assert repair_session_file(expected, backup="delete").repaired
    new = expected.read_text()
    work = tmp_path / "work"
    work.mkdir()
    path = work / "s.jsonl"
    outcomes = set()
    for _ in range(4):
        for name in os.listdir(work):
            os.remove(work / name)
        path.write_text(old)
        child = _child(f"import sys; sys.argv[1:] = [{str(path)!r}]\n" + _REPAIR_CHILD)
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        time.sleep(rng.uniform(0, 0.08))
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)
        content = path.read_text()
        assert content in (old, new), "a killed repair left a mixed file"
        outcomes.add(content == new)
        # The next repair finishes the job and removes what the killed one left behind.
        repair_session_file(path, backup="delete")
        assert path.read_text() == new
        leftovers = [n for n in os.listdir(work) if ".clawctx-" in n]
        assert leftovers == [], leftovers
    assert outcomes  # at least one kill landed (whether before or after the rename varies)


_APPEND_CHILD = """
import sys
from clawctx.history import Session
session = Session.open(sys.argv[1])
print("ready", flush=True)
i = 0
while True:
    session.append_message({"role": "user", "content": "z" * (i * 37 % 3000), "timestamp": i})
    i += 1
"""


def test_kill_during_appends_leaves_only_whole_lines(tmp_path: Path) -> None:
    rng = random.Random(7)
    path = tmp_path / "s.jsonl"
    path.write_text(_session_text(2))
    for _ in range(3):
        before = path.read_bytes()
        child = _child(f"import sys; sys.argv[1:] = [{str(path)!r}]\n" + _APPEND_CHILD)
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        time.sleep(rng.uniform(0.02, 0.2))
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)
        after = path.read_bytes()
        assert after.startswith(before)  # appends only ever add
        assert after.endswith(b"\n")
        for line in after.splitlines():
            json.loads(line)
        session = Session.open(path, read_only=True)
        assert session.skipped_lines == []
        # Every appended entry is a child of the one before: nothing lost in the middle.
        entries = session.entries()
        for parent, child_entry in itertools.pairwise(entries):
            assert child_entry["parentId"] == parent["id"]
