"""Provider request payload cases recorded from pi-ai (``../shared/conformance-payload``).

The cases live beside the repository, as the main conformance cases do; in a ``git worktree``
the main checkout's root is tried too. Where the directory is absent the tests skip.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
KNOWN_FAILURES = Path(__file__).resolve().parent / "known_failures.tsv"
# The recording's clock (`Date.now()` of synthetic tool results, gemini-cli request ids).
CLOCK_MS = 1767225600000


def _repo_roots() -> list[Path]:
    roots = [REPO]
    git = REPO / ".git"
    if git.is_file() and git.read_text().startswith("gitdir:"):
        gitdir = (REPO / git.read_text()[len("gitdir:") :].strip()).resolve()
        common = gitdir / "commondir"
        if common.is_file():
            roots.append((gitdir / common.read_text().strip()).resolve().parent)
    return roots


def _cases_dir() -> Path:
    candidates = [root.parent / "shared" / "conformance-payload" for root in _repo_roots()]
    return next((c for c in candidates if c.is_dir()), candidates[0])


CASES_DIR = _cases_dir()
SKIP_REASON = (
    f"{CASES_DIR} not found: the recorded pi-ai payload cases live beside the repository "
    "(../shared/conformance-payload) in CI"
)


def load_cases() -> list[dict[str, Any]]:
    """Every case of every ``*.jsonl`` in file order (split on ``\\n`` only: the texts hold
    raw U+2028/U+2029)."""
    cases: list[dict[str, Any]] = []
    for path in sorted(CASES_DIR.glob("*.jsonl")):
        text = path.read_text(encoding="utf-8")
        cases.extend(json.loads(line) for line in text.split("\n") if line.strip())
    return cases


def load_known_failures() -> dict[str, str]:
    """``id -> cause`` from ``known_failures.tsv`` (``#`` lines are comments)."""
    known: dict[str, str] = {}
    if not KNOWN_FAILURES.is_file():
        return known
    for line in KNOWN_FAILURES.read_text(encoding="utf-8").split("\n"):
        if not line.strip() or line.startswith("#"):
            continue
        case_id, _, cause = line.partition("\t")
        known[case_id] = cause
    return known
