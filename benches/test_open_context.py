"""Cold open + context of a session file: clawctx against the floor of parsing every line
with orjson in Python (which does not even build the context yet).

Run: python -m pytest benches --benchmark-enable --benchmark-group-by=param:session_file
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

import clawctx


def clawctx_open_context_json(path: Path) -> bytes:
    session = clawctx.Session.open(path, read_only=True)
    return session.context().messages.to_json()


def orjson_parse_every_line(path: Path) -> list[Any]:
    with path.open("rb") as f:
        return [orjson.loads(line) for line in f if line.strip()]


def test_clawctx_open_context_to_json(benchmark: Any, session_file: Path) -> None:
    out = benchmark(clawctx_open_context_json, session_file)
    assert out.startswith(b"[")


def test_floor_orjson_loads_every_line(benchmark: Any, session_file: Path) -> None:
    out = benchmark(orjson_parse_every_line, session_file)
    assert out[0]["type"] == "session"
