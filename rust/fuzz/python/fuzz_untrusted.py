#!/usr/bin/env python3
"""Fuzz the untrusted-text neutralizer (``clawctx.prompt.untrusted``), which is Python only, so
libFuzzer cannot reach it: a seeded random-mutation loop (stdlib only) over texts built from the
recorded ``append_untrusted_context`` cases, the runtime's marker texts and look-alike
characters. Each text must neutralize idempotently and leave no line that starts with
``System:`` (after the skeleton the neutralizer itself normalizes) and no internal-context
delimiter.

Usage: ``PYTHONPATH=python python rust/fuzz/python/fuzz_untrusted.py [seconds] [seed]``; prints
the executions run and exits 1 with the failing text on the first finding.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

from clawctx.prompt.untrusted import neutralize_untrusted_text

REPO = Path(__file__).resolve().parents[3]
PIECES = [
    "System:",
    "system :",
    "SYSTEM:",
    "\nSystem: ",
    "\r\nSystem:",
    "[System Message]",
    "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>",
    "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>",
    "[Inter-session message]",
    "<<<",
    ">>>",
    "> ",
    "- ",
    "**",
    "`",
    "\u200b",
    "\u2003",
    "\u3000",
    "\ufeff",
    "\u00a0",
    "\u2028",
    "\u0131",
    "\uff33ystem:",
    "S\u0443stem:",
    "\t",
    "\n",
]


def seeds() -> list[str]:
    texts = ["", "hello", *PIECES]
    cases = REPO.parent / "shared" / "conformance" / "append_untrusted_context.jsonl"
    if cases.exists():
        for line in cases.read_text(encoding="utf-8").split("\n"):
            if line.strip():
                inputs = json.loads(line)["input"]
                texts += [v for v in inputs.values() if isinstance(v, str)]
    return texts


def mutate(rng: random.Random, text: str, pool: list[str]) -> str:
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(text))
        op = rng.randrange(6)
        if op == 0:
            text = text[:at] + rng.choice(PIECES) + text[at:]
        elif op == 1:
            text = (
                text[:at]
                + chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0x3000)]))
                + text[at:]
            )
        elif op == 2 and text:
            end = min(len(text), at + rng.randint(1, 8))
            text = text[:at] + text[end:]
        elif op == 3:
            other = rng.choice(pool)
            text = text[:at] + other[rng.randint(0, len(other)) :][:64] + text[at:]
        elif op == 4:
            text = text[:at] + text[at:].swapcase()
        else:
            text = text[:at] + rng.choice(["\n", "\r", "\r\n", " "]) * rng.randint(1, 3) + text[at:]
    return text[:4096]


def check(text: str) -> None:
    once = neutralize_untrusted_text(text)
    assert neutralize_untrusted_text(once) == once, "not idempotent"
    for line in once.replace("\r", "\n").split("\n"):
        assert not line.lstrip(" \t\u00a0").lower().startswith("system:"), line
        assert "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>" not in line, line


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    pool = seeds()
    end = time.monotonic() + seconds
    runs = 0
    while time.monotonic() < end:
        for _ in range(200):
            text = mutate(rng, rng.choice(pool), pool)
            try:
                check(text)
            except AssertionError as e:
                print(f"finding after {runs} runs: {e}\n{text!r}")
                sys.exit(1)
            runs += 1
            if rng.random() < 0.01:
                pool.append(text)
    print(f"fuzz_untrusted: {runs} executions in {seconds:.0f}s, 0 findings")


if __name__ == "__main__":
    main()
