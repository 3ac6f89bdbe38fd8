"""No merge left its conflict markers behind: a tracked text file with a line starting
``<<<<<<< ``, ``>>>>>>> `` or consisting of ``=======`` between them is a merge resolved by
hand and committed half done (it happened once, to the changelog, and no other test read it).
"""

from __future__ import annotations

import re
import subprocess

import pytest

from conftest import REPO

_OPEN = re.compile(rb"^<<<<<<< ", re.MULTILINE)
_CLOSE = re.compile(rb"^>>>>>>> ", re.MULTILINE)


def _tracked_files() -> list[str]:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout (an sdist or a copied tree): nothing to compare")
    return [name for name in listed.decode("utf-8").split("\0") if name]


def has_conflict_markers(text: bytes) -> bool:
    """Whether ``text`` holds a conflict block's opening or closing marker at a line start."""
    return bool(_OPEN.search(text) or _CLOSE.search(text))


def test_the_check_finds_a_conflict_block() -> None:
    block = b"intro\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n"
    assert has_conflict_markers(block)
    assert not has_conflict_markers(b"a line that merely mentions <<<<<<< markers\n")


def test_no_tracked_file_holds_conflict_markers() -> None:
    found = []
    for name in _tracked_files():
        path = REPO / name
        if not path.is_file() or path.stat().st_size > 8_000_000:
            continue
        if has_conflict_markers(path.read_bytes()):
            found.append(name)
    assert found == []
