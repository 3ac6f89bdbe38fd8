"""Steady-state cost of an exact count, for callgrind: ``python exact_count_steady_state.py KIND REPS``.

Counts a short warm-up text (so the vocabulary is loaded), then KIND (prose, cjk, b64, code)
repeated REPS times. Run with two REPS under callgrind and subtract to get the cost per
repetition without the start-up and the vocabulary load (benches/README.md, Packaging).
"""

from __future__ import annotations

import base64
import random
import sys

import clawctx


def main(kind: str, reps: int) -> None:
    rng = random.Random(7)
    texts = {
        "prose": "The quick brown fox jumps over the lazy dog; context windows fill up fast.\n",
        "cjk": "上下文管理是智能体运行时的核心问题。",
        "b64": base64.b64encode(bytes(rng.getrandbits(8) for _ in range(600))).decode(),
        "code": "def f(x):\n    return {'a': [x, x * 2, \"s\"]}  # comment\n",
    }
    clawctx.count_tokens("warm up", encoding="o200k_base")
    clawctx.count_tokens(texts[kind] * reps, encoding="o200k_base")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
