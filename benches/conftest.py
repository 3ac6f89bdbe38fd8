"""Benchmark inputs: the real pi fixtures and larger sessions generated from them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

PI_FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "pi"


def fixture_messages() -> list[dict[str, Any]]:
    """The messages of the real pi fixture with two compactions (skips when it is absent)."""
    source = PI_FIXTURES / "before-compaction.jsonl"
    if not source.is_file():
        pytest.skip(f"{source} not found")
    return [
        json.loads(line)["message"]
        for line in source.read_text(encoding="utf-8").splitlines()
        if '"type":"message"' in line[:40]
    ]


def scaled_session(target_bytes: int, directory: Path) -> Path:
    """A valid v3 session of about ``target_bytes``: the messages of the real fixture repeated
    as one long linear chain with fresh ids (deterministic)."""
    messages = fixture_messages()
    path = directory / f"scaled-{target_bytes}.jsonl"
    header = {
        "type": "session",
        "version": 3,
        "id": "bench",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/",
    }
    size = 0
    parent = None
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps(header, separators=(",", ":")) + "\n")
        i = 0
        while size < target_bytes:
            entry_id = f"{i:08x}"
            entry = {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": messages[i % len(messages)],
            }
            line = json.dumps(entry, separators=(",", ":"), ensure_ascii=False) + "\n"
            out.write(line)
            size += len(line.encode())
            parent = entry_id
            i += 1
    return path


@pytest.fixture(scope="session", params=[10, 50], ids=lambda mb: f"{mb}MB")
def session_file(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scaled_session(request.param * 1_000_000, tmp_path_factory.mktemp("bench"))
