"""The demo session shipped inside the package."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = [
    "demo_session_path",
    "demo_workspace_path",
]


def demo_session_path() -> Path:
    """Path of the bundled demo session: a multi-turn coding session with tool calls, an
    abandoned branch with a branch summary, and a compaction."""
    resource = resources.files("clawctx") / "data" / "demo-session.jsonl"
    return Path(str(resource))


def demo_workspace_path() -> Path:
    """Path of the bundled demo workspace: AGENTS.md, SOUL.md, TOOLS.md and one skill
    (``skills/release-notes/SKILL.md``), used by ``clawctx assemble`` without arguments."""
    resource = resources.files("clawctx") / "data" / "demo-workspace"
    return Path(str(resource))
