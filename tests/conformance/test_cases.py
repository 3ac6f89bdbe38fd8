"""Every recorded upstream case, run through clawctx's public API (one adapter per function).

Cases listed in ``deviations.py`` (deliberate, justified differences) and in
``known_failures.tsv`` (differences still to fix) are strict xfails: a case that starts to
agree with upstream XPASSes and fails the run until its entry is removed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import clawctx

from . import (
    _adapters_hot_path,  # noqa: F401  (registers adapters)
    _adapters_hygiene,  # noqa: F401
    _adapters_pi,  # noqa: F401
    _adapters_prompt,  # noqa: F401
    _adapters_replies_queues,  # noqa: F401
    _adapters_session_files,  # noqa: F401
)
from ._harness import ADAPTERS, check
from .conftest import CONFORMANCE_DIR, SKIP_REASON, load_cases, load_known_failures
from .deviations import deviating_case_ids

if not CONFORMANCE_DIR.is_dir():
    pytest.skip(SKIP_REASON, allow_module_level=True)

CASES = load_cases()
KNOWN = load_known_failures()
DEVIATING = deviating_case_ids()


def _param(case: dict[str, Any]) -> Any:
    marks = []
    if case["id"] in DEVIATING:
        deviation = DEVIATING[case["id"]]
        reason = f"deviation ({deviation.reason}): {deviation.why}"
        marks.append(pytest.mark.xfail(strict=True, reason=reason))
    elif case["id"] in KNOWN:
        category, detail = KNOWN[case["id"]]
        marks.append(pytest.mark.xfail(strict=True, reason=f"{category}: {detail}"))
    return pytest.param(case, id=case["id"], marks=marks)


@pytest.fixture(autouse=True)
def _recorded_release() -> Iterator[None]:
    """The recorded cases are the recorded release's output, invalid requests included: they
    run under ``clawctx.compat`` (the safe default's agreement with them is
    ``test_safe_default_agrees.py``)."""
    with clawctx.compat("openclaw-2026.3.13"):
        yield


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    check(case)


def test_every_function_has_an_adapter() -> None:
    assert sorted({c["fn"] for c in CASES} - ADAPTERS.keys()) == []


def test_known_failures_name_real_cases() -> None:
    ids = {c["id"] for c in CASES}
    assert sorted(KNOWN.keys() - ids) == []
    assert len(ids) == len(CASES), "case ids must be unique"
