"""The tool-call block types are defined once per language: the Rust core's
``transcript::PAIRING_TOOL_CALL_TYPES``, which Python reads as ``clawctx._core._TOOL_CALL_TYPES``.
"""

from __future__ import annotations

import re
from pathlib import Path

from clawctx import _core
from conftest import REPO

CORE_SRC = REPO / "rust" / "core" / "src"
PACKAGE = REPO / "python" / "clawctx"

#: Where the one Rust definition lives.
HOME = CORE_SRC / "transcript" / "message.rs"
#: Python files that still spell the set, each with the reason.
PYTHON_EXEMPT: set[Path] = set()

_TYPES = {"toolCall", "toolUse", "functionCall"}
# A bracketed list of string literals only (a Rust array, a Python set, tuple or list).
_STRINGS = re.compile(r'[\[({]\s*((?:"[^"\n]*"\s*,\s*)*"[^"\n]*")\s*,?\s*[\])}]')


def _spells_the_set(text: str) -> bool:
    """Does the text hold a literal whose strings are exactly the tool-call types?"""
    return any(
        set(re.findall(r'"([^"]*)"', match.group(1))) == _TYPES for match in _STRINGS.finditer(text)
    )


def _rust_code(path: Path) -> str:
    """The file without comments and without its trailing unit-test module."""
    code = re.sub(r"//[^\n]*", "", path.read_text(encoding="utf-8"))
    return re.split(r"#\[cfg\(test\)\]\s*mod \w+", code)[0]


def test_python_reads_the_rust_set() -> None:
    assert frozenset({"toolCall", "toolUse", "functionCall"}) == _core._TOOL_CALL_TYPES
    assert isinstance(_core._TOOL_CALL_TYPES, frozenset)
    from clawctx.report import _session

    assert _session._TOOL_CALL_BLOCKS is _core._TOOL_CALL_TYPES


def test_the_finder_sees_a_literal() -> None:
    assert _spells_the_set('const X: [&str; 3] = ["functionCall", "toolUse", "toolCall"];')
    assert _spells_the_set('frozenset({"toolCall", "toolUse", "functionCall"})')
    assert _spells_the_set('(\n    "toolCall",\n    "toolUse",\n    "functionCall",\n)')
    assert not _spells_the_set('["toolCall", "text"] ["toolUse", "functionCall"]')
    assert not _spells_the_set('["text", "toolCall", "toolUse", "functionCall"]')


def test_rust_defines_the_set_once() -> None:
    spelled = sorted(
        str(path.relative_to(REPO))
        for path in CORE_SRC.rglob("*.rs")
        if _spells_the_set(_rust_code(path))
    )
    assert spelled == [str(HOME.relative_to(REPO))]
    assert "pub const PAIRING_TOOL_CALL_TYPES" in HOME.read_text(encoding="utf-8")


def test_python_defines_the_set_nowhere() -> None:
    spelled = sorted(
        str(path.relative_to(REPO))
        for path in PACKAGE.rglob("*.py")
        if path not in PYTHON_EXEMPT and _spells_the_set(path.read_text(encoding="utf-8"))
    )
    assert spelled == []
