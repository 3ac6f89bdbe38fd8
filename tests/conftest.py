"""Shared test fixtures.

Tests that read the real session files in ``../shared/fixtures/pi/`` skip with a reason when
that directory is absent (a user's clone); CI always has it. Property tests run with the
``repeatable`` hypothesis profile (fixed examples); ``--hypothesis-profile explore`` searches
with random seeds.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run, so a result on main is the result in CI and
# a red run is never a dice roll. Edit a test and its examples change; to search afresh, run
# `python -m pytest --hypothesis-profile explore` (random seeds, more examples).
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False, max_examples=500)
settings.load_profile("repeatable")

#: The repository, the recorded ground truth beside it, and the fixtures of the tests: every
#: test finds them here, whatever folder it sits in (``from conftest import REPO``).
REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
FIXTURES = REPO / "tests" / "fixtures"
PI_FIXTURES = SHARED / "fixtures" / "pi"


@pytest.fixture
def pi_fixture() -> Callable[[str], Path]:
    """Returns the path of a file in ``../shared/fixtures/pi/``, skipping if it is absent."""

    def get(name: str) -> Path:
        path = PI_FIXTURES / name
        if not path.is_file():
            pytest.skip(f"{path} not found: the shared fixtures live beside the repository in CI")
        return path

    return get


def dump_line(obj: dict[str, Any]) -> str:
    """One session line as JavaScript's JSON.stringify writes it."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def write_jsonl(path: Path, objs: list[dict[str, Any]]) -> Path:
    """Writes objects as a JSONL file, one compact line each, with a final newline."""
    path.write_text("".join(dump_line(o) + "\n" for o in objs), encoding="utf-8")
    return path


@pytest.fixture
def ids() -> Callable[[], str]:
    """A deterministic id factory: 00000001, 00000002, ..."""
    counter = iter(range(1, 1 << 31))

    def next_id() -> str:
        return f"{next(counter):08x}"

    return next_id


@pytest.fixture
def clock() -> Iterator[Callable[[], int]]:
    """A deterministic clock: 1767225600000 (2026-01-01T00:00:00Z) + 1000 ms per call."""
    counter = iter(range(0, 1 << 31))

    def now() -> int:
        return 1767225600000 + 1000 * next(counter)

    yield now
