"""(e) Repair of a damaged session file (garbage lines, a NUL run before a record, a torn last
line), on a fresh copy in every round (the copy is the untimed setup).

clawctx: ``repair_session_file`` (streams the file, rewrites only the damaged lines, salvages
the record behind the NULs, keeps a backup). Reference: OpenClaw's repair in Python (read
everything, parse every line, drop what fails, re-serialize every entry, backup, atomic
replace, fsync as clawctx does). Floor: ``orjson.loads`` of every line of the damaged file.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import clawctx
from benches import reference_pipeline
from benches.conftest import measure
from benches.generate import GeneratedSession

ROUNDS = 5


def _fresh_copy(session: GeneratedSession, directory: Path) -> tuple[Path, Any]:
    target = directory / session.path.name

    def setup() -> None:
        for leftover in directory.glob(session.path.name + ".*"):
            leftover.unlink()
        shutil.copyfile(session.path, target)

    return target, setup


def test_clawctx(benchmark: Any, damaged_session: GeneratedSession, tmp_path: Path) -> None:
    target, setup = _fresh_copy(damaged_session, tmp_path)
    report = measure(
        benchmark,
        "repair",
        "clawctx",
        damaged_session,
        clawctx.repair_session_file,
        target,
        setup=setup,
        rounds=ROUNDS,
    )
    assert report.repaired and report.dropped_lines >= 4
    assert any(
        c.kind == "rewritten" and "NUL" in c.reason for c in report.changes
    )  # the record behind the NULs is kept


def test_reference(benchmark: Any, damaged_session: GeneratedSession, tmp_path: Path) -> None:
    target, setup = _fresh_copy(damaged_session, tmp_path)
    report = measure(
        benchmark,
        "repair",
        "reference",
        damaged_session,
        reference_pipeline.repair_file,
        target,
        setup=setup,
        rounds=ROUNDS,
    )
    assert report["repaired"] and report["dropped_lines"] >= 5


def test_orjson_floor(benchmark: Any, damaged_session: GeneratedSession) -> None:
    parsed = measure(
        benchmark,
        "repair",
        "orjson floor",
        damaged_session,
        reference_pipeline.orjson_floor,
        damaged_session.path,
    )
    assert parsed > 0
