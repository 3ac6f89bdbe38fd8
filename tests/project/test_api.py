"""The public surface: exports, stubs checked against the native module, the error hierarchy."""

from __future__ import annotations

import ast
import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import clawctx
from clawctx import _core

#: The stub package of the native module: `__init__.pyi` and one `<stage>.pyi` per submodule.
STUBS = Path(_core.__file__).with_name("_core")
STAGES = sorted(p.stem for p in STUBS.glob("*.pyi") if p.stem != "__init__")


def _stub_all(path: Path) -> set[str]:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__":
            return set(ast.literal_eval(node.value))
    raise AssertionError(f"{path.name} has no __all__")


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
    # Every part was checked as a module of its own: `__init__.pyi` re-exports their names, and
    # stubtest checks a re-exported name only in the module that defines it.
    assert f"in {len(STAGES) + 1} modules" in result.stdout, result.stdout


def test_stubtest_catches_a_wrong_parameter_in_a_part(tmp_path: Path) -> None:
    # The stub package copied beside an empty `clawctx/__init__.pyi` (mypy reads only the
    # stubs), with a keyword renamed in a function of one part and a method of another; the
    # runtime is the real extension. A name `__init__.pyi` re-exports is checked in its part.
    pytest.importorskip("mypy")
    stubs = tmp_path / "clawctx" / "_core"
    shutil.copytree(STUBS, stubs)
    (tmp_path / "clawctx" / "__init__.pyi").write_text("", encoding="utf-8")
    (tmp_path / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    for part, old, new in (
        ("session", "*, chunk_bytes: int = 262144)", "*, chunk_size: int = 262144)"),
        ("transcript", "value: object, start: int = 0,", "value: object, begin: int = 0,"),
    ):
        text = (stubs / f"{part}.pyi").read_text(encoding="utf-8")
        assert text.count(old) == 1, (part, old)
        (stubs / f"{part}.pyi").write_text(text.replace(old, new), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(clawctx.__file__).resolve().parent.parent)}
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "clawctx._core", "--mypy-config-file", "mypy.ini"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        "clawctx._core.session.read_leaf_context is inconsistent, "
        'runtime does not have parameter "chunk_size"'
    ) in result.stdout
    assert (
        "clawctx._core.transcript.Transcript.index is inconsistent, "
        'stub parameter "begin" differs from runtime parameter "start"'
    ) in result.stdout
    assert "(checked 9 modules)" in result.stdout, result.stdout


def test_each_stub_part_is_a_runtime_submodule() -> None:
    assert {"session", "transcript", "hygiene", "compaction"} <= set(STAGES)
    names: set[str] = set()
    for stage in STAGES:
        module = importlib.import_module(f"clawctx._core.{stage}")
        assert module is sys.modules[f"clawctx._core.{stage}"] is getattr(_core, stage)
        assert module.__name__ == f"clawctx._core.{stage}"
        assert set(module.__all__) == _stub_all(STUBS / f"{stage}.pyi"), stage
        for name in module.__all__:
            obj = getattr(module, name)
            assert getattr(_core, name) is obj, name  # still reachable from `clawctx._core`
            if isinstance(obj, type) or callable(obj):
                assert obj.__module__ == module.__name__, (name, obj.__module__)
        names |= set(module.__all__)
    assert names <= set(_core.__all__)
    assert set(_core.__all__) == _stub_all(STUBS / "__init__.pyi")
    assert not (STUBS / "__init__.py").exists()  # the extension module stays `clawctx._core`


def test_a_stage_submodule_imports_first_in_a_fresh_process() -> None:
    code = (
        "import clawctx._core.session as s, pickle; from clawctx._core.session import Session; "
        "assert s.Session is Session and s.__name__ == 'clawctx._core.session'; "
        "assert pickle.loads(pickle.dumps(s.SessionSummary)) is s.SessionSummary; "
        "import clawctx._core as c; assert c.__file__.endswith('.so'), c.__file__; "
        "print(c.Transcript.__module__)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "clawctx._core.transcript"


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
