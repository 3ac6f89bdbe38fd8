"""The tests mirror the stages: one folder per part of ``python/clawctx`` (and the suites of
recorded cases), no test module left flat in ``tests/``.

A new test goes into the folder of the stage it exercises (``tests/history/``, ``tests/wire/``,
...); tests of the project as a whole (layout, packaging, docs) go into ``tests/project/``.
"""

from __future__ import annotations

from pathlib import Path

from conftest import REPO

TESTS = REPO / "tests"
PACKAGE = REPO / "python" / "clawctx"
#: Folders that are not a stage of the package: the recorded upstream suites, the project-wide
#: checks, and data.
NOT_STAGES = {"conformance", "payload", "project", "fixtures"}
#: Tests of ``clawctx.dask`` sit with the report's: both are the fleet's tools.
FOLDED = {"dask": "report"}


def _test_folders(root: Path) -> set[str]:
    return {
        path.name
        for path in root.iterdir()
        if path.is_dir() and not path.name.startswith((".", "_")) and path.name != "__pycache__"
    }


def flat_test_modules(root: Path) -> list[str]:
    """Test modules directly in ``root`` (pytest collects ``test_*.py`` and ``*_test.py``)."""
    return sorted(
        p.name for p in root.glob("*.py") if p.name.startswith("test_") or p.stem.endswith("_test")
    )


def test_no_test_module_is_flat() -> None:
    assert flat_test_modules(TESTS) == [], "move it into the folder of its stage (or project/)"


def test_the_check_sees_a_flat_module(tmp_path: Path) -> None:
    (tmp_path / "test_new.py").write_text("def test_x() -> None: ...\n")
    (tmp_path / "conftest.py").write_text("")
    assert flat_test_modules(tmp_path) == ["test_new.py"]


def test_every_folder_is_a_stage_or_a_known_suite() -> None:
    stages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    stages |= {p.stem for p in PACKAGE.glob("*.py") if not p.stem.startswith("_")}
    for folder in _test_folders(TESTS) - NOT_STAGES:
        assert folder in stages - set(FOLDED), f"tests/{folder}/ names no part of clawctx"


def test_every_test_folder_is_a_package() -> None:
    # With ``__init__.py`` two folders may hold test modules of the same name (pytest's
    # default import mode names them by their package).
    for folder in _test_folders(TESTS) - {"fixtures"}:
        assert (TESTS / folder / "__init__.py").is_file(), folder
