"""Session files: OpenClaw's repairSessionFileIfNeeded and pi's SessionManager.open."""

from __future__ import annotations

import base64
import os
import tempfile
from pathlib import Path
from typing import Any

from . import _api
from ._adapters_pi import context_json
from ._harness import (
    CLOCK_MS,
    adapter,
    captured_logs,
    none_as_null_or_undefined,
    short_ids,
    uuid_ids,
)

SESSION_FILE = "session.jsonl"


def input_bytes(inp: Any) -> bytes:
    if "file_b64" in inp:
        return base64.b64decode(inp["file_b64"])
    return inp["file_text"].encode("utf-8")


def file_after(original: bytes, path: Path) -> dict[str, Any]:
    after = path.read_bytes()
    if after == original:
        return {"same_as_input": True}
    try:
        return {"text": after.decode("utf-8")}
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(after).decode("ascii")}


def normalize_path(text: str, directory: str) -> str:
    return text.replace(directory, "<dir>").replace(f"-{os.getpid()}-", "-<pid>-")


@adapter("repair_session_file")
def repair_session_file(inp: Any, params: Any) -> Any:
    mode = params.get("mode")
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / SESSION_FILE
        original = b"" if mode == "blank_path" else input_bytes(inp)
        if mode != "blank_path":
            path.write_bytes(original)
        target = {
            "blank_path": params.get("sessionFile"),
            "padded_path": f"  {path}\n",
        }.get(mode, str(path))
        with captured_logs() as logs:
            report = _api.repair_session_file(target, now_ms=CLOCK_MS)
        summary: dict[str, Any] = {
            "repaired": report.repaired,
            "droppedLines": report.dropped_lines,
        }
        if report.reason is not None:
            summary["reason"] = report.reason
        if report.backup_path is not None:
            summary["backupPath"] = normalize_path(str(report.backup_path), directory)
        out: dict[str, Any] = {
            "report": summary,
            "logs": [{**log, "message": normalize_path(log["message"], directory)} for log in logs],
        }
        if mode == "blank_path":
            return out
        out["file_after"] = file_after(original, path)
        others = [p for p in Path(directory).iterdir() if p.name != SESSION_FILE]
        out["other_files"] = sorted(normalize_path(p.name, directory) for p in others)
        if report.backup_path is not None:
            out["backup_equals_original"] = Path(report.backup_path).read_bytes() == original
        return out


@adapter("pi_session_open")
def pi_session_open(inp: Any, params: Any) -> Any:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / SESSION_FILE
        original = input_bytes(inp)
        path.write_bytes(original)
        fresh_ids = uuid_ids()
        session = _api.Session.open(
            path,
            on_invalid_header="reset",
            rewrite_migrated=True,
            now_ms=CLOCK_MS,
            id_factory=short_ids(),
            session_id=fresh_ids(),
            cwd="<cwd>",
        )
        header = session.header
        return {
            "header": header,
            "entries": session.entries(),
            # pi's getLeafId() is null for an empty session and undefined when the last entry
            # has no id; Session.leaf_id is None for both.
            "leafId": none_as_null_or_undefined(session.leaf_id),
            "sessionId": session.session_id,
            "cwd": session.cwd,
            "file_rewritten": path.read_bytes() != original,
            "file_after": file_after(original, path),
            "context": context_json(session.context()),
        }
