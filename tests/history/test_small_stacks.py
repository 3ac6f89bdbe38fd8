"""Issue 33, N6: values nested within the depth limit on threads with small stacks.

The Python-to-Rust conversion recursed about 1 KiB of native stack per level before its depth
check, so `estimate_tokens` of a value nested 60 levels killed the process (SIGSEGV) on a thread
started with `threading.stack_size(64 * 1024)` (98 levels at 96 KiB). Each case runs in a child
process with a time and memory limit: it must return a result or raise a typed exception.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import clawctx

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="stack bounds read on Linux")

CHILD = r"""
import resource, sys, tempfile, threading, os
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
import clawctx
from clawctx import Session, Transcript, count_message_tokens, count_tokens, estimate_tokens
from clawctx import sanitize_session_history

STACK_KIB, LEVELS, ENTRY = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]


def nested(levels):
    value = []
    for _ in range(levels - 1):
        value = [value]
    return value


def message():
    # The message itself is two levels (dict, content list); the details fill the rest.
    return {"role": "toolResult", "toolCallId": "c1", "toolName": "t", "isError": False,
            "content": [{"type": "text", "text": "ok"}], "details": nested(LEVELS - 2),
            "timestamp": 1}


def run():
    if ENTRY == "estimate_tokens":
        return estimate_tokens(nested(LEVELS))
    if ENTRY == "from_list":
        return len(Transcript.from_list([message()]))
    if ENTRY == "sanitize_session_history":
        return len(sanitize_session_history([message()]))
    if ENTRY == "count_message_tokens":
        return int(count_message_tokens([message()])[0])
    if ENTRY == "first_exact_count":
        return count_tokens("hello world", encoding="cl100k_base")
    if ENTRY == "first_calibrated_cjk_count":
        return count_tokens("日本語のテキスト、한국어 텍스트", estimator="calibrated")
    if ENTRY == "append_message":
        with tempfile.TemporaryDirectory() as tmp:
            session = Session.create(os.path.join(tmp, "s.jsonl"), cwd=tmp)
            session.append_message(message())
            return len(session.context().messages)
    raise AssertionError(ENTRY)


outcome = []


def one():
    try:
        outcome.append(("ok", run()))
    except clawctx.ClawctxError as e:
        outcome.append(("typed", type(e).__name__))
    except (ValueError, TypeError, RecursionError) as e:
        outcome.append(("typed", type(e).__name__ + ": " + str(e)[:80]))


def target():
    global LEVELS
    if LEVELS:
        one()
        return
    # Every depth in turn: the deepest that still converts then runs the Rust work (the
    # estimate's and the writer's walks, dropping the value) on what stack is left.
    for LEVELS in range(3, 128):
        one()
    converted = max(i + 3 for i, (kind, _) in enumerate(outcome) if kind == "ok")
    outcome[:] = [("ok", f"deepest converted: {converted}")]


threading.stack_size(STACK_KIB * 1024)
thread = threading.Thread(target=target)
thread.start()
thread.join()
print(outcome)
sys.exit(0 if outcome else 3)
"""

ENTRIES = [
    "estimate_tokens",
    "from_list",
    "sanitize_session_history",
    "count_message_tokens",
    "append_message",
]


def _run(stack_kib: int, levels: int, entry: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    package_root = str(Path(clawctx.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    try:
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(CHILD), str(stack_kib), str(levels), entry],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the child process did not finish within 60 s (a hang)")


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize(("stack_kib", "levels"), [(64, 60), (96, 98), (128, 127), (64, 127)])
def test_deep_value_on_a_small_stack_raises_or_returns(
    stack_kib: int, levels: int, entry: str
) -> None:
    result = _run(stack_kib, levels, entry)
    died = result.returncode < 0
    assert not died, (
        f"killed by {signal.Signals(-result.returncode).name} at {levels} levels on a "
        f"{stack_kib} KiB stack: {result.stderr[-2000:]}"
    )
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]
    assert "('ok'," in result.stdout or "('typed'," in result.stdout
    print(f"{entry} {stack_kib} KiB {levels}: {result.stdout.strip()}")


@pytest.mark.parametrize("entry", ["estimate_tokens", "append_message", "count_message_tokens"])
@pytest.mark.parametrize("stack_kib", [64, 96, 128])
def test_every_depth_on_a_small_stack(stack_kib: int, entry: str) -> None:
    # The deepest value that passes the stack check leaves the Rust side the least stack.
    result = _run(stack_kib, 0, entry)
    assert result.returncode == 0, f"exit {result.returncode}: {result.stderr[-2000:]}"
    assert "deepest converted" in result.stdout
    print(f"{entry} {stack_kib} KiB: {result.stdout.strip()}")


@pytest.mark.parametrize("entry", ["first_exact_count", "first_calibrated_cjk_count"])
def test_first_count_builds_its_tables_on_a_small_stack(entry: str) -> None:
    # The vocabulary, pre-tokenizer and CJK tables are built on the first count in a process;
    # their gzip decoder and regex compiler need more than a 64 KiB thread stack holds, so they
    # are built on a fresh stack segment (token_count/encoding.rs `build_on_roomy_stack`).
    result = _run(64, 4, entry)
    assert result.returncode == 0, f"exit {result.returncode}: {result.stderr[-2000:]}"
    assert "('ok'," in result.stdout


def test_shallow_value_on_a_small_stack_still_converts() -> None:
    # The stack check refuses only what does not fit: a usual message converts on 64 KiB.
    result = _run(64, 4, "count_message_tokens")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "('ok'," in result.stdout
