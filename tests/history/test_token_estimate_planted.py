"""Issue 33, F14: the calibrated estimate of a long text cannot be steered by planted blocks.

The estimator used to check its linear model on 1 KB slices at fixed positions (the centres of
256 KB strata), so 1 KB planted there moved a 300 KB text's estimate from 82,076 tokens to 1 or
to 438,959. Its sample positions are now drawn from a per-process key and its 16 slices are
combined with the two worst each way left out; these tests plant blocks at the old positions
and elsewhere and check the estimate stays within 0.8-2 times the exact count.
"""

from __future__ import annotations

import random

import pytest

import clawctx

BLOCKS = {
    "newlines": "\n" * 1024,
    "spaces": " " * 1024,
    "one letter": "a" * 1024,
    "emoji zwj": "👨\u200d👩\u200d👧\u200d👦" * 40,
    "lone combining": "\u0301" * 512,
    "control": "\x01\x02" * 512,
}
HOSTS = {
    "prose": "The quick brown fox jumps over the lazy dog. ",
    "code": "def foo(x, y):\n    return [i * 2 for i in range(x)]\n\n",
    "cjk": "这是一个测试。我们正在检查估计器的准确性、",
    "base64": "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzNDU2Nzg5K/ab",
    "whitespace": "a  \t\n\n    b\n\t\t  ",
}


def _old_positions(chars: int) -> list[int]:
    count = max(1, chars // (1 << 18))
    return [max(0, chars * (2 * i + 1) // (2 * count) - 512) for i in range(count)]


def _plant(host: str, chars: int, at: list[int], block: str) -> str:
    text = (host * (chars // len(host) + 1))[:chars]
    for p in sorted(at, reverse=True):
        text = text[:p] + block + text[p + len(block) :]
    return text


def _assert_within_band(text: str, what: str) -> None:
    exact = clawctx.count_tokens(text)
    estimate = clawctx.count_tokens(text, estimator="calibrated")
    assert exact * 0.8 <= estimate <= exact * 2, f"{what}: exact {exact}, estimate {estimate}"


@pytest.mark.parametrize("host", sorted(HOSTS))
@pytest.mark.parametrize("block", sorted(BLOCKS))
def test_planted_block_in_300k_text(host: str, block: str) -> None:
    chars = 300_000
    _assert_within_band(
        _plant(HOSTS[host], chars, _old_positions(chars), BLOCKS[block]),
        f"{block} at the old position of 300 KB {host}",
    )
    rng = random.Random(f"{host}/{block}")
    for _ in range(4):
        at = rng.randrange(chars)
        _assert_within_band(
            _plant(HOSTS[host], chars, [at], BLOCKS[block]), f"{block} at {at} of {host}"
        )


@pytest.mark.parametrize("block", sorted(BLOCKS))
def test_planted_blocks_in_2mb_prose(block: str) -> None:
    chars = 2_000_000
    _assert_within_band(
        _plant(HOSTS["prose"], chars, _old_positions(chars), BLOCKS[block]),
        f"{block} at the old positions of 2 MB prose",
    )


def test_estimate_is_stable_within_a_process() -> None:
    text = _plant(HOSTS["prose"], 300_000, [150_000], BLOCKS["newlines"])
    first = clawctx.count_tokens(text, estimator="calibrated")
    assert all(clawctx.count_tokens(text, estimator="calibrated") == first for _ in range(3))
