"""The public surface: exports, stubs checked against the native module, the error hierarchy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import clawctx
from clawctx import _core


def test_public_names_are_exported() -> None:
    for name in clawctx.__all__:
        assert hasattr(clawctx, name), name
    # Native names the history stage wraps in Python (the wrapper documents why).
    wrapped = ("build_session_context", "Session", "validate_for_provider")
    for name in _core.__all__:
        if not name.startswith("_") and name not in wrapped:
            assert getattr(clawctx.history, name) is getattr(_core, name), name


def test_stubs_match_the_native_module() -> None:
    pytest.importorskip("mypy")
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "clawctx._core"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_error_hierarchy() -> None:
    assert issubclass(clawctx.ClawctxError, Exception)
    for cls in (clawctx.SessionFormatError, clawctx.SessionLockError, clawctx.RepairError):
        assert issubclass(cls, clawctx.ClawctxError)
        assert cls.__module__ == "clawctx._core"


def test_session_format_error_carries_path_line_reason(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        '\n{"type":"message","id":"1","parentId":null,"timestamp":"x","message":{"role":"user"}}\n'
    )
    with pytest.raises(clawctx.SessionFormatError) as info:
        clawctx.Session.open(path)
    err = info.value
    assert (err.path, err.line) == (str(path), 2)  # type: ignore[attr-defined]
    assert "not a session header" in err.reason  # type: ignore[attr-defined]
    assert f"{path}: line 2:" in str(err)


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as info:
        clawctx.Session.open(tmp_path / "nope.jsonl")
    assert info.value.filename == str(tmp_path / "nope.jsonl")


def test_bad_option_values() -> None:
    with pytest.raises(ValueError):
        clawctx.Session.open("x.jsonl", on_invalid_header="maybe")
    with pytest.raises(ValueError):
        clawctx.repair_session_file("x.jsonl", backup="sometimes")
    with pytest.raises(ValueError):
        clawctx.Session.open("x.jsonl", lock_timeout=-1)
    with pytest.raises(TypeError):
        clawctx.Session.in_memory(now_ms="noon")  # type: ignore[arg-type]
