"""The deviations list stays honest: real cases, real tests, no overlap with the work list."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .conftest import CONFORMANCE_DIR, SKIP_REASON, load_cases, load_known_failures
from .deviations import DEVIATIONS, deviating_case_ids

REPO = Path(__file__).resolve().parents[2]


def _defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(f"{node.name}::{item.name}")
    return names


@pytest.mark.parametrize("deviation", DEVIATIONS, ids=lambda d: d.case_ids[0])
def test_each_deviation_names_an_existing_test(deviation: object) -> None:
    from .deviations import Deviation

    assert isinstance(deviation, Deviation)
    assert deviation.case_ids, "a deviation covers at least one case"
    assert deviation.why.strip()
    path, _, name = deviation.test.partition("::")
    assert name, f"{deviation.test!r} is not a pytest node id"
    file = REPO / path
    assert file.is_file(), f"{path} does not exist"
    assert name in _defined_tests(file), f"{deviation.test} is not defined"


def test_deviations_name_real_cases_not_on_the_work_list() -> None:
    if not CONFORMANCE_DIR.is_dir():
        pytest.skip(SKIP_REASON)
    ids = {c["id"] for c in load_cases()}
    listed = deviating_case_ids()
    assert sorted(listed.keys() - ids) == []
    assert sorted(listed.keys() & load_known_failures().keys()) == []
