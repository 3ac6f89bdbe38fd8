"""(c) Incremental refresh: another writer appends one turn (user, tool loop, answer) to the
session file; the open session picks it up with ``Session.refresh()`` and re-assembles the
context (and, in the second variant, runs the rest of the pipeline). The appends happen in
the untimed setup of every round. Compare with the cold numbers of (a) and (b), which are what
a runtime without incremental reload (the reference) pays on every request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import clawctx
from benches import clawctx_pipeline
from benches.conftest import copy_session, measure
from benches.generate import GeneratedSession, TurnAppender

pytestmark = pytest.mark.skipif(
    not hasattr(clawctx.Session, "refresh"),
    reason="Session.refresh() is not in this build of clawctx yet",
)

ROUNDS = 20


def _prepared(session: GeneratedSession, tmp_path: Path) -> tuple[Any, TurnAppender, Any]:
    """A copy of the file opened (and its context built once), and a writer of turns."""
    path = copy_session(session, tmp_path)
    opened = clawctx.Session.open(path, read_only=True)
    opened.context()
    appender = TurnAppender(path, session.leaf_id)

    def append_one_turn() -> None:
        appender.append_turn()

    return opened, appender, append_one_turn


def test_refresh_only(benchmark: Any, session: GeneratedSession, tmp_path: Path) -> None:
    opened, appender, append_one_turn = _prepared(session, tmp_path)
    report = measure(
        benchmark,
        "refresh",
        "clawctx refresh",
        session,
        opened.refresh,
        setup=append_one_turn,
        rounds=ROUNDS,
    )
    assert report.mode == "incremental", report.reason
    assert 0 < report.bytes_read < session.size
    assert opened.leaf_id == appender.leaf_id


def test_refresh_context(benchmark: Any, session: GeneratedSession, tmp_path: Path) -> None:
    opened, appender, append_one_turn = _prepared(session, tmp_path)

    def refresh_context() -> tuple[Any, Any]:
        report = opened.refresh()
        return report, opened.context().messages

    report, messages = measure(
        benchmark,
        "refresh",
        "clawctx refresh + context",
        session,
        refresh_context,
        setup=append_one_turn,
        rounds=ROUNDS,
    )
    assert report.mode == "incremental", report.reason
    assert report.appended_entries >= 3
    assert messages[len(messages) - 1]["role"] == "assistant"
    assert opened.leaf_id == appender.leaf_id


def test_refresh_pipeline(benchmark: Any, session: GeneratedSession, tmp_path: Path) -> None:
    opened, _appender, append_one_turn = _prepared(session, tmp_path)

    def refresh_pipeline() -> tuple[Any, bytes]:
        report = opened.refresh()
        data, _tokens = clawctx_pipeline.run_messages(opened.context().messages)
        return report, data

    report, data = measure(
        benchmark,
        "refresh",
        "clawctx refresh + pipeline",
        session,
        refresh_pipeline,
        setup=append_one_turn,
        rounds=ROUNDS,
    )
    assert report.mode == "incremental", report.reason
    assert data.startswith(b"[")
