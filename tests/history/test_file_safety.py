"""Session files that are not regular files, symlinks, stale temp files and error messages
(issue 17 "Hardening", findings 1, 2, 3 and 8).

Only regular files are session files: a FIFO, a device, a directory or a socket is refused
with `NotASessionFileError` (a `SessionFormatError`) before a byte is read or written, and
nothing blocks. Calls that could hang on a FIFO run in child processes that are killed when
they block, so a regression fails instead of hanging the run.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx.history import (
    NotASessionFileError,
    RepairError,
    Session,
    SessionFormatError,
    mark_heartbeat_transcript,
    read_leaf_context,
    repair_session_file,
    scan_sessions,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix file types")

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


def _message(i: int, parent: str | None) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"m{i}",
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": f"hello {i}", "timestamp": 1},
    }


def _session_text(messages: int = 2, torn: bool = False) -> str:
    text = _line(HEADER)
    parent = None
    for i in range(messages):
        text += _line(_message(i, parent))
        parent = f"m{i}"
    if torn:
        text += '{"type":"message","id":"torn\n'
    return text


# ---- special files ----------------------------------------------------------------------


def _char_device(tmp_path: Path) -> Path:
    """A character device like /dev/null at a path of our own (mknod needs privileges; a
    symlink to /dev/null stands in, which also checks that links are followed)."""
    path = tmp_path / "dev.jsonl"
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError):
        path.symlink_to("/dev/null")
    return path


@pytest.fixture
def socket_path(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "sock.jsonl"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(path))
        yield path
    finally:
        sock.close()


READERS: dict[str, Callable[[Path], object]] = {
    "open": lambda p: Session.open(p),
    "open_read_only": lambda p: Session.open(p, read_only=True),
    "open_reset": lambda p: Session.open(p, on_invalid_header="reset"),
    "create": lambda p: Session.create(p, cwd="/w"),
    "read_leaf_context": lambda p: read_leaf_context(p),
    "repair": lambda p: repair_session_file(p),
    "mark_heartbeat": lambda p: mark_heartbeat_transcript(p),
}


@pytest.mark.parametrize("call", sorted(READERS))
def test_char_device_is_refused_and_left_a_device(tmp_path: Path, call: str) -> None:
    # Before: a writable open of /dev/null (empty-looking) "wrote a header" by renaming a
    # regular file over the device node.
    path = _char_device(tmp_path)
    was_link = path.is_symlink()
    with pytest.raises(NotASessionFileError) as info:
        READERS[call](path)
    assert info.value.path == str(path)
    assert info.value.line == 0
    assert "character device" in info.value.reason
    assert str(info.value).count(str(path)) == 1
    assert stat.S_ISCHR(os.stat(path).st_mode)
    assert path.is_symlink() == was_link
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_dev_null_through_a_symlink_stays_a_link_to_the_device(tmp_path: Path) -> None:
    link = tmp_path / "null.jsonl"
    link.symlink_to("/dev/null")
    with pytest.raises(SessionFormatError, match="character device"):
        Session.open(link)
    assert link.is_symlink() and os.readlink(link) == "/dev/null"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("call", sorted(READERS))
def test_directory_is_refused(tmp_path: Path, call: str) -> None:
    path = tmp_path / "dir.jsonl"
    path.mkdir()
    if call == "repair":
        # OpenClaw's repair reports a directory instead of raising (conformance); its reason
        # carries no Rust "(os error N)" text.
        report = repair_session_file(path)
        assert report.reason == "failed to read session file: Is a directory"
        return
    with pytest.raises(NotASessionFileError, match="directory"):
        READERS[call](path)
    assert path.is_dir()


@pytest.mark.parametrize("call", sorted(READERS))
def test_socket_is_refused(socket_path: Path, call: str) -> None:
    with pytest.raises(NotASessionFileError, match="socket"):
        READERS[call](socket_path)
    assert stat.S_ISSOCK(os.lstat(socket_path).st_mode)


# Each call as Python source for a child process (`path` is the FIFO, `good` a session file).
FIFO_CALLS = {
    "open": "Session.open(path)",
    "open_read_only": "Session.open(path, read_only=True)",
    "open_reset": "Session.open(path, on_invalid_header='reset')",
    "create": "Session.create(path, cwd='/w')",
    "read_leaf_context": "read_leaf_context(path)",
    "repair": "repair_session_file(path)",
    "mark_heartbeat": "mark_heartbeat_transcript(path)",
    "scan_sessions": "print(scan_sessions([path, good])[0].error); assert good_ok()",
}

_FIFO_CHILD = """
import sys
from pathlib import Path
from clawctx.history import *
good = Path(sys.argv[2])
good_ok = lambda: scan_sessions([good])[0].error is None
for name, call in CALLS.items():
    path = Path(sys.argv[1]) / (name + ".jsonl")
    print(name, end=": ", flush=True)
    try:
        exec(call)
    except NotASessionFileError as e:
        print("refused:", e, flush=True)
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    # Before: every one of these blocked forever in open() or read() waiting for a writer (a
    # read-write open is its own writer, so not even a writer closing would end it). The calls
    # run one after another in a child process, which is killed when one blocks.
    good = tmp_path / "good.jsonl"
    good.write_text(_session_text())
    for name in FIFO_CALLS:
        os.mkfifo(tmp_path / f"{name}.jsonl")
    package_root = Path(clawctx.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(package_root), "RUST_BACKTRACE": "0"}
    script = f"CALLS = {FIFO_CALLS!r}\n{_FIFO_CHILD}"
    argv = [sys.executable, "-c", script, str(tmp_path), str(good)]
    try:
        done = subprocess.run(argv, capture_output=True, env=env, text=True, timeout=30)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout
        pytest.fail(f"blocked on a FIFO; output so far:\n{out}")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == list(FIFO_CALLS)
    for line in lines:
        assert "a FIFO, not a regular file" in line, line
    for name in FIFO_CALLS:
        assert stat.S_ISFIFO(os.lstat(tmp_path / f"{name}.jsonl").st_mode), name


def test_scan_reports_special_files_and_reads_the_rest(tmp_path: Path, socket_path: Path) -> None:
    # An error entry each, like an unreadable file (the FIFO case runs in a child above: it
    # used to stall the whole scan).
    device = _char_device(tmp_path)
    directory = tmp_path / "dir.jsonl"
    directory.mkdir()
    good = tmp_path / "good.jsonl"
    good.write_text(_session_text(3))
    summaries = {s.path: s for s in scan_sessions([device, socket_path, directory, good])}
    assert "character device" in (summaries[device].error or "")
    assert "socket" in (summaries[socket_path].error or "")
    assert "directory" in (summaries[directory].error or "")
    assert summaries[good].error is None and summaries[good].entries == 3


# ---- symlinks -----------------------------------------------------------------------------


@pytest.fixture
def linked(tmp_path: Path) -> tuple[Path, Path]:
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    target = real_dir / "s.jsonl"
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    return link, target


def _assert_still_linked(link: Path, target: Path) -> None:
    assert link.is_symlink()
    assert link.resolve() == target.resolve()
    assert link.read_bytes() == target.read_bytes()


def test_header_written_through_a_symlink_lands_in_the_target(linked: tuple[Path, Path]) -> None:
    # Before: the header's temp file was renamed over the link; the target stayed empty.
    link, target = linked
    target.write_text("")
    session = Session.open(link, now_ms=NOW, session_id="fresh")
    _assert_still_linked(link, target)
    assert json.loads(target.read_text())["id"] == "fresh"
    session.append_message({"role": "user", "content": "hi", "timestamp": 1})
    _assert_still_linked(link, target)
    assert len(Session.open(target, read_only=True).entries()) == 1


def test_reset_through_a_symlink_backs_up_next_to_the_target(linked: tuple[Path, Path]) -> None:
    link, target = linked
    target.write_text(_line({"type": "message", "id": "x"}))
    session = Session.open(link, on_invalid_header="reset", now_ms=NOW)
    _assert_still_linked(link, target)
    assert json.loads(target.read_text())["type"] == "session"
    assert session.backup_path is not None
    assert session.backup_path.parent == target.parent
    assert json.loads(session.backup_path.read_text())["id"] == "x"


def test_repair_through_a_symlink_repairs_the_target(linked: tuple[Path, Path]) -> None:
    link, target = linked
    target.write_text(_session_text(2, torn=True))
    report = repair_session_file(link, now_ms=NOW)
    assert report.repaired
    _assert_still_linked(link, target)
    assert target.read_text() == _session_text(2)
    assert report.backup_path is not None
    assert report.backup_path.parent == target.parent
    assert report.backup_path.read_text() == _session_text(2, torn=True)


def test_migration_through_a_symlink_rewrites_the_target(linked: tuple[Path, Path]) -> None:
    link, target = linked
    v1 = {"type": "session", "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    message = {"type": "message", "timestamp": "2026-01-01T00:00:01.000Z"}
    message["message"] = {"role": "user", "content": "hi", "timestamp": 1}
    target.write_text(_line(v1) + _line(message))
    session = Session.open(link, now_ms=NOW)
    backup = session.save_migrated()
    _assert_still_linked(link, target)
    assert json.loads(target.read_text().splitlines()[0])["version"] == 3
    assert backup is not None and backup.parent == target.parent


# ---- stale temp files ------------------------------------------------------------------------


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _temps(tmp_path: Path, dead: int) -> dict[str, bool]:
    """Temp-like files next to s.jsonl, each mapped to whether a cleanup must remove it."""
    hour_ago = time.time() - 2 * 3600
    files = {
        f".s.jsonl.clawctx-repair-{dead}-1.tmp": True,  # writer is gone
        f".s.jsonl.clawctx-reset-{dead}-2.tmp": True,
        # Writer alive (pid 1) but the file is two hours old: pid reused or stuck.
        ".s.jsonl.clawctx-migrate-1-3.tmp": True,
        ".s.jsonl.clawctx-repair-1-4.tmp": False,  # fresh, writer alive
        f".other.jsonl.clawctx-repair-{dead}-5.tmp": False,  # another session's
        f".s.jsonl.repair-{dead}-6.tmp": False,  # not named by clawctx
        f"s.jsonl.bak-{dead}-7": False,  # a backup, never a temp
    }
    for name in files:
        (tmp_path / name).write_text("x" * 100)
    os.utime(tmp_path / ".s.jsonl.clawctx-migrate-1-3.tmp", (hour_ago, hour_ago))
    return files


@pytest.mark.parametrize(
    "action",
    ["repair_clean", "repair_damaged", "open_writable"],
)
def test_stale_temp_files_are_removed(tmp_path: Path, action: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(_session_text(2, torn=action == "repair_damaged"))
    files = _temps(tmp_path, _dead_pid())
    if action == "open_writable":
        Session.open(path)
    else:
        repair_session_file(path, now_ms=NOW, backup="delete")
    for name, removed in files.items():
        assert (tmp_path / name).exists() != removed, name
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".s.jsonl.clawctx-reset")]


def test_read_only_open_leaves_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(_session_text())
    files = _temps(tmp_path, _dead_pid())
    Session.open(path, read_only=True)
    read_leaf_context(path)
    assert all((tmp_path / name).exists() for name in files)


def test_stale_temps_of_a_symlinked_session_are_removed_next_to_the_target(
    linked: tuple[Path, Path],
) -> None:
    link, target = linked
    target.write_text(_session_text())
    stale = target.parent / f".s.jsonl.clawctx-repair-{_dead_pid()}-1.tmp"
    stale.write_text("x")
    repair_session_file(link)
    assert not stale.exists()


# ---- error messages ----------------------------------------------------------------------------


def test_os_errors_name_the_file_once_without_rust_text(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("")
    path = plain / "s.jsonl"  # a path through a regular file: ENOTDIR
    for call in (lambda: Session.open(path), lambda: read_leaf_context(path)):
        with pytest.raises(NotADirectoryError) as info:
            call()
        assert info.value.errno == 20
        assert info.value.filename == str(path)
        assert "os error" not in str(info.value)
        assert str(info.value).count(str(path)) == 1, str(info.value)


def test_missing_file_message_names_it_once(tmp_path: Path) -> None:
    path = tmp_path / "missing.jsonl"
    with pytest.raises(FileNotFoundError) as info:
        Session.open(path, read_only=True)
    assert info.value.errno == 2 and info.value.filename == str(path)
    assert str(info.value).count(str(path)) == 1, str(info.value)
    path.write_text(_session_text())
    with pytest.raises(FileExistsError) as exists:
        Session.create(path, cwd="/w")
    assert str(exists.value).count(str(path)) == 1, str(exists.value)


def test_repair_error_has_no_rust_os_error_text(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(_session_text(2, torn=True))
    # The temp file's name is taken by a directory: the rewrite fails, the original stays.
    (tmp_path / f".s.jsonl.clawctx-repair-{os.getpid()}-{NOW}.tmp").mkdir()
    with pytest.raises(RepairError) as info:
        repair_session_file(path, now_ms=NOW)
    assert "os error" not in str(info.value)
    assert str(info.value).count(str(path)) == 1, str(info.value)
    assert path.read_text() == _session_text(2, torn=True)
