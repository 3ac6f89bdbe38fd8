"""The bundled demo session and workspace."""

from __future__ import annotations

import clawctx
from clawctx.prompt.workspace import WORKSPACE_BOOTSTRAP_FILE_NAMES


def test_demo_workspace_is_complete() -> None:
    # Every bootstrap file OpenClaw looks for exists, so the demo prompt shows no "[MISSING]".
    workspace = clawctx.demo_workspace_path()
    for name in WORKSPACE_BOOTSTRAP_FILE_NAMES:
        assert (workspace / name).is_file(), name
        assert (workspace / name).read_text(encoding="utf-8").strip()
    assert (workspace / "skills" / "release-notes" / "SKILL.md").is_file()


def test_demo_session_opens_cleanly() -> None:
    session = clawctx.Session.open(clawctx.demo_session_path(), read_only=True)
    assert session.skipped_lines == []
    assert session.context().thinking_level == "medium"
