"""Exact counts of long pre-tokenizer pieces (issue 33, N1): counted a window at a time in
bounded memory, with the same count as tiktoken, and a failed allocation is a `MemoryError`,
never an abort of the interpreter."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Literal

import pytest

import clawctx
from benches.offline_tiktoken import CL100K_PAT, O200K_PAT
from clawctx import _core

PYTHON_DIR = Path(clawctx.__file__).resolve().parents[1]


def _tiktoken(name: Literal["o200k_base", "cl100k_base"]) -> Any:
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {token: rank for rank, token in enumerate(_core._token_vocabulary(name))}
    pattern = O200K_PAT if name == "o200k_base" else CL100K_PAT
    return tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})


def _long_pieces() -> list[str]:
    rng = random.Random(33)
    # One letter repeated, letters at random (one piece), random code points with no
    # separators (pieces of symbols and letters), a long CJK run, a long digit run.
    return [
        "a" * 300_000,
        "y" * 200_001,
        "".join(rng.choice("etaoinshrdlu") for _ in range(200_000)),
        "".join(chr(rng.randrange(0x2500, 0x2600)) for _ in range(100_000)),
        "我们今天去了北京的博物馆看展览" * 8_000,
        "7" * 200_000,
        "=" * 150_000,
    ]


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_long_pieces_count_as_tiktoken_does(
    encoding: Literal["o200k_base", "cl100k_base"],
) -> None:
    enc = _tiktoken(encoding)
    for text in _long_pieces():
        assert clawctx.count_tokens(text, encoding) == len(enc.encode_ordinary(text)), text[:20]


def test_long_piece_counts_equal_counts_of_their_parts_where_a_token_must_end() -> None:
    # Without tiktoken: a run of one letter cut at a newline is counted as its two runs.
    a = clawctx.count_tokens("a" * 200_000)
    assert clawctx.count_tokens("a" * 200_000 + "\n" + "a" * 200_000) == 2 * a + 1
    # 'a' * n is at most n / 2 tokens and grows with n.
    assert 200_000 // 128 <= a <= 100_000
    assert clawctx.count_tokens("a" * 400_000) > a


def _run_limited(code: str, limit_bytes: int) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(
        f"""
        import resource, sys
        sys.path.insert(0, {str(PYTHON_DIR)!r})
        import clawctx
        clawctx.count_tokens("warm the vocabulary and the thread pool\\n" * 40_000)
        """
    ) + textwrap.dedent(code).replace("LIMIT_BYTES", str(limit_bytes))
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )


def test_a_long_line_under_an_address_space_limit_is_counted_or_memory_error() -> None:
    # Issue 33, N1: 'y' * 100_000_000 under a 4 GB address-space limit aborted (SIGABRT).
    result = _run_limited(
        """
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))
        text = "y" * 100_000_000
        try:
            n = clawctx.count_tokens(text)
        except MemoryError:
            print("memory-error")
        else:
            print("count", n, clawctx.count_tokens("y" * 1_000_000) * 100)
        """,
        4 << 30,
    )
    assert result.returncode != -signal.SIGABRT, result.stderr[-2000:]
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout.split()
    assert out[0] in {"count", "memory-error"}
    if out[0] == "count":
        # 'y' * n for n a multiple of the run's period is 100 times 'y' * (n / 100).
        assert abs(int(out[1]) - int(out[2])) <= 100


def test_an_allocation_failure_while_counting_is_memory_error() -> None:
    # Just above what the process uses once warm: the counter's buffers cannot be allocated.
    result = _run_limited(
        """
        text = "".join(chr(0x2500 + i % 200) for i in range(3_000_000))
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + (256 << 10), used + (256 << 10)))
        try:
            clawctx.count_tokens(text)
        except MemoryError:
            print("memory-error")
        else:
            print("counted")
        """,
        0,
    )
    assert result.returncode != -signal.SIGABRT, result.stderr[-2000:]
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[0] == "memory-error"
