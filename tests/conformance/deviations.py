"""Deliberate differences from the recorded upstream behaviour: the one list.

Each entry names the conformance cases it covers, the reason (data safety, a security
hardening, or a crash upstream), and the test that shows the improvement. The cases run as
strict xfails: a case that starts to agree with upstream fails the run until its id is removed
here. ``test_deviations.py`` checks that every entry names real cases and an existing test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Reason = Literal["data safety", "security", "crash upstream"]


@dataclass(frozen=True)
class Deviation:
    """One deliberate difference: the cases, why, and the test showing the improvement.

    ``test`` is a pytest node id relative to the repository root, e.g.
    ``tests/test_repair.py::test_keeps_crlf_bytes``.
    """

    case_ids: tuple[str, ...]
    reason: Reason
    why: str
    test: str


DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        case_ids=("queue_summary_line-049-random",),
        reason="data safety",
        why=(
            "buildQueueSummaryLine truncates in UTF-16 units and can leave a lone high surrogate "
            "before the ellipsis; such a str cannot be encoded to UTF-8, so the overflow summary "
            "would break the prompt and the transcript write. clawctx drops the whole character."
        ),
        test="tests/test_queues.py::test_summary_line_never_splits_a_surrogate_pair",
    ),
)


def deviating_case_ids() -> dict[str, Deviation]:
    """Case id -> the deviation that covers it."""
    by_case: dict[str, Deviation] = {}
    for deviation in DEVIATIONS:
        for case_id in deviation.case_ids:
            assert case_id not in by_case, f"{case_id} is listed twice"
            by_case[case_id] = deviation
    return by_case
