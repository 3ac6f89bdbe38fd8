"""Writing a Claude Code, Codex or pi transcript as a new pi session file (``clawctx convert``).

Layer: ``clawctx.history`` (imports only ``clawctx._core`` and other history modules).
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path
from typing import Any

from clawctx.history.foreign import read_transcript
from clawctx.history.session import Session

__all__ = ["convert_transcript"]


def convert_transcript(source: Path, target: Path, *, force: bool = False) -> dict[str, Any]:
    """Writes the transcript at ``source`` (Claude Code, Codex or pi) as a new pi session at
    ``target``: header, one message entry per message, each the child of the one before.

    The session is written to a temporary file beside ``target`` and renamed over it, so
    ``target`` is either absent, its old self, or the whole new session. An existing ``target``
    is refused unless ``force``; ``source`` itself never is.
    """
    imported = read_transcript(source)
    if target.exists():
        if target.resolve() == source.resolve() or os.path.samefile(target, source):
            raise ValueError("the output is the input file; choose another output path")
        if not force:
            raise FileExistsError(errno.EEXIST, "exists (use --force to replace it)", str(target))
        if not target.is_file():
            raise IsADirectoryError(errno.EISDIR, "not a regular file", str(target))
    directory = target.parent if str(target.parent) else Path(".")
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    os.close(fd)
    scratch = Path(name)
    try:
        scratch.unlink()  # Session.create writes the header into a new (or empty) file
        session = Session.create(
            scratch, cwd=imported.cwd or "", session_id=imported.session_id, fsync=False
        )
        for message in imported.messages:
            session.append_message(message)
        with scratch.open("rb") as written:
            os.fsync(written.fileno())
        os.replace(scratch, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            scratch.unlink()
    return {
        "input": str(source),
        "output": str(target),
        "format": imported.format,
        "messages": len(imported.messages),
        "damaged_lines": imported.damaged_lines,
    }
