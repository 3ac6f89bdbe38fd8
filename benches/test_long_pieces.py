"""Exact counts of one long pre-tokenizer piece (issue 33, N1): time per MB must stay flat as
the piece grows (linear time; compare the figures for 1 MB and 4 MB), memory bounded by the
window (``benches/README.md``, "Long pieces")."""

from __future__ import annotations

import random
from typing import Any

import pytest

import clawctx


def _piece(kind: str, size: int) -> str:
    if kind == "one letter":
        return "a" * size
    rng = random.Random(size)
    return "".join(rng.choice("etaoinshrdlu") for _ in range(size))


@pytest.mark.parametrize("size", [1_000_000, 4_000_000])
@pytest.mark.parametrize("kind", ["one letter", "random letters"])
def test_long_piece(benchmark: Any, kind: str, size: int) -> None:
    text = _piece(kind, size)
    count = benchmark.pedantic(clawctx.count_tokens, args=(text,), rounds=1, iterations=1)
    assert 0 < count <= size
