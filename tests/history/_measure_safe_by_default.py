"""Counts invalid requests on generated broken sessions and histories (issue 27's numbers).

Run from the repository root: ``PYTHONPATH=python python -m tests.history._measure_safe_by_default
[N]``. Hypothesis draws ``N`` (default 120) sessions and ``N`` message lists with a fixed seed
(``derandomize``); for each API the script prints how many default requests break a rule of
:func:`clawctx.wire.validate_request_body`, and for each provider family how many
``sanitize_session_history`` outputs ``validate_for_provider`` rejects (and how many are not
idempotent). Not a test: it measures, it does not assert.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings

from clawctx.history import sanitize_session_history, validate_for_provider
from clawctx.wire import build_request_payload, validate_request_body
from tests._broken_sessions import broken_histories, broken_sessions
from tests.history.test_safe_by_default import (
    FAMILIES,
    MODELS,
    TOOLS,
    _pi_model,
    session_violations,
)


def main(n: int) -> None:
    """Prints the counts for ``n`` sessions and ``n`` histories."""
    fixed = settings(
        max_examples=n,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    sessions: list[list[dict[str, Any]]] = []
    histories: list[list[dict[str, Any]]] = []

    @fixed
    @given(entries=broken_sessions())
    def draw_sessions(entries: list[dict[str, Any]]) -> None:
        sessions.append(entries)

    @fixed
    @given(messages=broken_histories())
    def draw_histories(messages: list[dict[str, Any]]) -> None:
        histories.append(messages)

    draw_sessions()
    draw_histories()
    for api in sorted(MODELS):
        rules: Counter[str] = Counter()
        bad = 0
        for entries in sessions:
            found = session_violations(entries, api)
            bad += bool(found)
            rules.update({rule for _, rule, _ in found})
        print(f"pipeline {api}: {bad}/{len(sessions)} invalid {dict(rules)}")
    for api in sorted(MODELS):
        rules = Counter()
        bad = 0
        for messages in histories:
            payload = build_request_payload(_pi_model(api), {"messages": messages, "tools": TOOLS})
            found_b = validate_request_body(payload.to_dict(), api)
            bad += bool(found_b)
            rules.update({v.rule for v in found_b})
        print(f"build_request_payload {api}: {bad}/{len(histories)} invalid {dict(rules)}")
    for family, args in sorted(FAMILIES.items()):
        rules = Counter()
        bad = unstable = 0
        for messages in histories:
            once = sanitize_session_history(messages, now_ms=0, **args)
            found_v = validate_for_provider(once, **args)
            bad += bool(found_v)
            rules.update({v.rule for v in found_v})
            twice = sanitize_session_history(once, now_ms=0, **args)
            unstable += twice.to_list() != once.to_list()
        print(
            f"sanitize {family}: {bad}/{len(histories)} invalid, {unstable} not idempotent "
            f"{dict(rules)}"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 120)
