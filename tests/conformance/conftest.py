"""Conformance cases recorded from the real upstream source (``../shared/conformance``).

The cases live beside the repository (``<repo>/../shared/conformance``), as the shared fixtures
do; in a ``git worktree`` the main checkout's root is tried too. In a user's clone that
directory is absent and the whole package is skipped with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def _repo_roots() -> list[Path]:
    """The repository root, then (in a ``git worktree``) the main checkout's root."""
    roots = [REPO]
    git = REPO / ".git"
    if git.is_file() and git.read_text().startswith("gitdir:"):
        gitdir = (REPO / git.read_text()[len("gitdir:") :].strip()).resolve()
        common = gitdir / "commondir"
        if common.is_file():
            roots.append((gitdir / common.read_text().strip()).resolve().parent)
    return roots


def _conformance_dir() -> Path:
    candidates = [root.parent / "shared" / "conformance" for root in _repo_roots()]
    return next((c for c in candidates if c.is_dir()), candidates[0])


CONFORMANCE_DIR = _conformance_dir()
KNOWN_FAILURES = Path(__file__).resolve().parent / "known_failures.tsv"
SKIP_REASON = (
    f"{CONFORMANCE_DIR} not found: the recorded upstream conformance cases live beside the "
    "repository (../shared/conformance) in CI"
)


def load_cases() -> list[dict[str, Any]]:
    """Every case of every ``<fn>.jsonl``, in file order.

    Lines are split on ``"\\n"`` only: the JSON text holds raw U+2028/U+2029, which
    ``str.splitlines()`` would treat as line breaks.
    """
    cases: list[dict[str, Any]] = []
    for path in sorted(CONFORMANCE_DIR.glob("*.jsonl")):
        text = path.read_text(encoding="utf-8")
        cases.extend(json.loads(line) for line in text.split("\n") if line.strip())
    return cases


def load_known_failures() -> dict[str, tuple[str, str]]:
    """``id -> (cause category, detail)`` from ``known_failures.tsv`` (``#`` lines are comments)."""
    known: dict[str, tuple[str, str]] = {}
    if not KNOWN_FAILURES.is_file():
        return known
    for line in KNOWN_FAILURES.read_text(encoding="utf-8").split("\n"):
        if not line.strip() or line.startswith("#"):
            continue
        case_id, category, detail = (line.split("\t") + ["", ""])[:3]
        known[case_id] = (category, detail)
    return known
