"""Heartbeat hygiene (OpenClaw 2026.3.13 `src/auto-reply/heartbeat.ts` and `src/auto-reply/tokens.ts`;
transcript pruning: `src/infra/heartbeat-runner.ts`, ``pruneHeartbeatTranscript``).

``strip_heartbeat_token`` is upstream's later ``stripHeartbeatToken`` (the token at the end keeps
what follows it only when text precedes it); the vectors of upstream's heartbeat.test.ts are
pinned below. ``filter_heartbeat_pairs`` is later upstream's ``filterHeartbeatPairs``
(`src/auto-reply/heartbeat-filter.ts`, not in 2026.3.13) in its newest form (configured prompt, task
prompt, and the [L] transcript prompt, which ``transcript_prompt=False`` turns off).

``HeartbeatTranscriptGuard`` differs from upstream's plain truncation on purpose: only the
heartbeat exchange is removed, lines of other writers survive byte for byte, and anything that
could damage the file leaves it untouched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import clawctx

Message = dict[str, Any]

PROMPT = clawctx.history.DEFAULT_HEARTBEAT_PROMPT
TASKS = (
    f"{clawctx.history.HEARTBEAT_TASK_PROMPT_PREFIX}\n\n- inbox: check mail\n\n"
    f"{clawctx.history.HEARTBEAT_TASK_PROMPT_ACK}"
)


def user(content: Any) -> Message:
    return {"role": "user", "content": content, "timestamp": 1}


def assistant(content: Any) -> Message:
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    return {
        "role": "assistant",
        "content": content,
        "provider": "anthropic",
        "model": "claude-test",
        "stopReason": "stop",
        "timestamp": 2,
    }


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


# ---- constants (tokens.ts HEARTBEAT_TOKEN; heartbeat.ts HEARTBEAT_PROMPT) -----------------------


def test_constants_are_the_spec_strings() -> None:
    assert clawctx.history.HEARTBEAT_TOKEN == "HEARTBEAT_OK"
    assert clawctx.history.DEFAULT_HEARTBEAT_ACK_MAX_CHARS == 300
    assert clawctx.history.DEFAULT_HEARTBEAT_PROMPT == (
        "Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. Do not infer or "
        "repeat old tasks from prior chats. If nothing needs attention, reply HEARTBEAT_OK."
    )
    assert clawctx.history.HEARTBEAT_TASK_PROMPT_PREFIX == (
        "Run the following periodic tasks (only those due based on their intervals):"
    )
    assert (
        clawctx.history.HEARTBEAT_TASK_PROMPT_ACK
        == "After completing all due tasks, reply HEARTBEAT_OK."
    )
    assert clawctx.history.HEARTBEAT_TRANSCRIPT_PROMPT == "[OpenClaw heartbeat poll]"


def test_rust_defaults_agree_with_the_python_constants() -> None:
    # The core's default prompt and ack limit are the ones exported here.
    pair = [user(clawctx.history.DEFAULT_HEARTBEAT_PROMPT), assistant("HEARTBEAT_OK")]
    assert len(clawctx.history.filter_heartbeat_pairs(pair)) == 0
    limit = clawctx.history.DEFAULT_HEARTBEAT_ACK_MAX_CHARS
    at_limit = "HEARTBEAT_OK " + "a" * limit
    assert clawctx.history.strip_heartbeat_token(
        at_limit, mode="heartbeat", max_ack_chars=None
    ).should_skip
    over = "HEARTBEAT_OK " + "a" * (limit + 1)
    assert not clawctx.history.strip_heartbeat_token(
        over, mode="heartbeat", max_ack_chars=None
    ).should_skip


# ---- strip_heartbeat_token (heartbeat.ts: stripHeartbeatToken) -----------------------------------

SKIP = (True, "", True)

# Upstream src/auto-reply/heartbeat.test.ts.
UPSTREAM_VECTORS = [
    (None, "heartbeat", (True, "", False)),
    ("  ", "heartbeat", (True, "", False)),
    ("HEARTBEAT_OK", "heartbeat", SKIP),
    ("HEARTBEAT_OK 🦞", "heartbeat", SKIP),
    ("🦞 HEARTBEAT_OK", "heartbeat", SKIP),
    ("ALERT HEARTBEAT_OK", "heartbeat", SKIP),
    ("A" * 301 + " HEARTBEAT_OK", "heartbeat", (False, "A" * 301, True)),
    ("HEARTBEAT_OK hello", "message", (False, "hello", True)),
    ("hello HEARTBEAT_OK", "message", (False, "hello", True)),
    ("hello HEARTBEAT_OK there", "message", (False, "hello HEARTBEAT_OK there", False)),
    ("<b>HEARTBEAT_OK</b>", "heartbeat", SKIP),
    ("**HEARTBEAT_OK**", "heartbeat", SKIP),
    ("<code>HEARTBEAT_OK</code> all good", "message", (False, "all good", True)),
    ("HEARTBEAT_OK.", "heartbeat", SKIP),
    ("HEARTBEAT_OK!!!", "heartbeat", SKIP),
    ("HEARTBEAT_OK---", "heartbeat", SKIP),
    ("I should not respond HEARTBEAT_OK.", "message", (False, "I should not respond.", True)),
    ("All clear. HEARTBEAT_OK", "message", (False, "All clear.", True)),
]


@pytest.mark.parametrize(("raw", "mode", "expected"), UPSTREAM_VECTORS)
def test_upstream_strip_vectors(
    raw: str | None, mode: str, expected: tuple[bool, str, bool]
) -> None:
    assert clawctx.history.strip_heartbeat_token(raw, mode=mode) == expected  # type: ignore[arg-type]


def test_strip_result_fields_unpacking_and_message_default_mode() -> None:
    result = clawctx.history.strip_heartbeat_token("HEARTBEAT_OK done")
    assert isinstance(result, clawctx.history.StripResult)
    assert (result.should_skip, result.text, result.did_strip) == (False, "done", True)
    should_skip, rest, did_strip = result
    assert (should_skip, rest, did_strip) == (False, "done", True)
    assert (len(result), result[0], result[1], result[-1]) == (3, False, "done", True)
    with pytest.raises(IndexError):
        result[3]
    assert result == (False, "done", True)
    assert result != (False, "done", False)
    assert result != [False, "done", True]
    assert result == clawctx.history.strip_heartbeat_token("HEARTBEAT_OK  done", mode="message")
    assert hash(result) == hash((False, "done", True))
    assert repr(result) == "StripResult(should_skip=False, text='done', did_strip=True)"
    assert clawctx.history.strip_heartbeat_token("HEARTBEAT_OK done", mode="heartbeat") == SKIP


@pytest.mark.parametrize("raw", [None, "", " ", "\n\t \r\n", "\u3000\ufeff"])
@pytest.mark.parametrize("mode", ["heartbeat", "message"])
def test_blank_text_is_a_skip_without_strip(raw: str | None, mode: str) -> None:
    assert clawctx.history.strip_heartbeat_token(raw, mode=mode) == (True, "", False)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("hello", "hello"),
        ("  hello there \n", "hello there"),
        ("HEARTBEAT OK", "HEARTBEAT OK"),
        ("heartbeat_ok", "heartbeat_ok"),
        ("<b>nothing</b>", "<b>nothing</b>"),
    ],
)
@pytest.mark.parametrize("mode", ["heartbeat", "message"])
def test_token_absent_keeps_trimmed_text(raw: str, expected: str, mode: str) -> None:
    assert clawctx.history.strip_heartbeat_token(raw, mode=mode) == (False, expected, False)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # HTML tags become spaces.
        ("<b>HEARTBEAT_OK</b>", SKIP),
        ('<span class="status">HEARTBEAT_OK</span>', SKIP),
        ("<p>\nHEARTBEAT_OK\n</p>", SKIP),
        # &nbsp; in any case becomes a space.
        ("&nbsp;HEARTBEAT_OK&NBSP;", SKIP),
        ("HEARTBEAT_OK&nbsp;&nbsp;ok then", (False, "&nbsp;&nbsp;ok then", True)),
        # Wrapper runs at the edges of the normalized copy.
        ("_HEARTBEAT_OK_", SKIP),
        ("*~`_HEARTBEAT_OK_`~*", SKIP),
        # Quirk: the raw text stripped and left the closing wrapper run, and a raw result that
        # stripped and left text wins over the normalized copy.
        ("**HEARTBEAT_OK**", (False, "****", True)),
        ("`HEARTBEAT_OK`", (False, "``", True)),
        # "_" is a word character: only the normalized copy (trailing "_" removed) strips.
        ("x HEARTBEAT_OK_", (False, "x", True)),
        # An unclosed tag is not a tag.
        ("<b HEARTBEAT_OK", (False, "<b", True)),
        # Wrappers inside the text are not touched.
        ("done *HEARTBEAT_OK*", (False, "done **", True)),
    ],
)
def test_markup_normalization(raw: str, expected: tuple[bool, str, bool]) -> None:
    assert clawctx.history.strip_heartbeat_token(raw, mode="message") == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HEARTBEAT_OK HEARTBEAT_OK", SKIP),
        ("HEARTBEAT_OKHEARTBEAT_OK", SKIP),
        ("HEARTBEAT_OK\nHEARTBEAT_OK\n HEARTBEAT_OK", SKIP),
        ("HEARTBEAT_OK done HEARTBEAT_OK", (False, "done", True)),
        ("HEARTBEAT_OK a HEARTBEAT_OK b", (False, "a HEARTBEAT_OK b", True)),
        ("a HEARTBEAT_OK HEARTBEAT_OK", (False, "a", True)),
    ],
)
def test_repeated_tokens_are_stripped_from_both_edges(
    raw: str, expected: tuple[bool, str, bool]
) -> None:
    assert clawctx.history.strip_heartbeat_token(raw, mode="message") == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # Up to 4 trailing non-word chars (UTF-16 units) after the token: the token goes, the
        # characters stay behind the text before it.
        ("x HEARTBEAT_OK.", (False, "x.", True)),
        ("x HEARTBEAT_OK!!!!", (False, "x!!!!", True)),
        ("x HEARTBEAT_OK ?!", (False, "x?!", True)),
        ("x HEARTBEAT_OK 🦞", (False, "x🦞", True)),
        ("x HEARTBEAT_OK😀😀", (False, "x😀😀", True)),
        # Five, or six units, or a word character: not at the end, not stripped.
        ("x HEARTBEAT_OK!!!!!", (False, "x HEARTBEAT_OK!!!!!", False)),
        ("x HEARTBEAT_OK😀😀😀", (False, "x HEARTBEAT_OK😀😀😀", False)),
        ("x HEARTBEAT_OK.a", (False, "x HEARTBEAT_OK.a", False)),
        ("x HEARTBEAT_OKa", (False, "x HEARTBEAT_OKa", False)),
        # At the start the token leaves whatever follows it.
        ("HEARTBEAT_OK.", (False, ".", True)),
        ("HEARTBEAT_OK!!!!!", (False, "!!!!!", True)),
    ],
)
def test_trailing_punctuation_after_the_token(raw: str, expected: tuple[bool, str, bool]) -> None:
    assert clawctx.history.strip_heartbeat_token(raw, mode="message") == expected


def test_whitespace_is_collapsed_with_javascript_semantics() -> None:
    assert clawctx.history.strip_heartbeat_token(
        "HEARTBEAT_OK\n\nline one\n\n\t line\u00a0\u00a0two", mode="message"
    ) == (False, "line one line two", True)
    # U+3000 and U+FEFF are JavaScript whitespace; U+0085 is not.
    assert clawctx.history.strip_heartbeat_token("\u3000HEARTBEAT_OK\ufeff", mode="message") == SKIP
    assert clawctx.history.strip_heartbeat_token("\u0085 HEARTBEAT_OK", mode="message") == (
        False,
        "\u0085",
        True,
    )


@pytest.mark.parametrize(
    ("limit", "length", "skip"),
    [
        (300, 300, True),
        (300, 301, False),
        (5, 5, True),
        (5, 6, False),
        (0, 1, False),
        (5.5, 5, True),
        (5.5, 6, False),
        ("5", 5, True),
        (" 5 ", 6, False),
        ("0x5", 5, True),
        ("0x5", 6, False),
        ("1e1", 10, True),
        ("1e1", 11, False),
        ("", 1, False),  # Number("") is 0
        ("abc", 300, True),  # NaN: the default
        ("abc", 301, False),
        ("1_000", 301, False),  # not a JavaScript number
        (None, 300, True),
        (None, 301, False),
        (float("nan"), 300, True),
        (float("inf"), 301, False),
        (-7, 1, False),  # clamped to 0
        (True, 300, True),  # not a number: the default
        (True, 301, False),
    ],
)
def test_max_ack_chars_boundary(limit: Any, length: int, skip: bool) -> None:
    raw = "HEARTBEAT_OK " + "a" * length
    result = clawctx.history.strip_heartbeat_token(raw, mode="heartbeat", max_ack_chars=limit)
    assert result == ((True, "", True) if skip else (False, "a" * length, True))


def test_max_ack_chars_counts_utf16_units_and_only_applies_in_heartbeat_mode() -> None:
    raw = "HEARTBEAT_OK " + "😀" * 3  # 6 UTF-16 units, 3 code points
    assert clawctx.history.strip_heartbeat_token(raw, mode="heartbeat", max_ack_chars=6).should_skip
    assert not clawctx.history.strip_heartbeat_token(
        raw, mode="heartbeat", max_ack_chars=5
    ).should_skip
    assert clawctx.history.strip_heartbeat_token(raw, mode="message", max_ack_chars=10_000) == (
        False,
        "😀😀😀",
        True,
    )
    # Nothing left is a skip whatever the limit.
    assert (
        clawctx.history.strip_heartbeat_token("HEARTBEAT_OK", mode="heartbeat", max_ack_chars=-1)
        == SKIP
    )


def test_strip_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="mode"):
        clawctx.history.strip_heartbeat_token("x", mode="ack")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="max_ack_chars"):
        clawctx.history.strip_heartbeat_token("x", max_ack_chars=[1])  # type: ignore[arg-type]


# ---- filter_heartbeat_pairs (later heartbeat-filter.ts: filterHeartbeatPairs) --------------------


def roles_and_texts(messages: clawctx.Transcript) -> list[tuple[str, Any]]:
    return [(m["role"], m["content"]) for m in messages]


@pytest.mark.parametrize(
    "prompt_content",
    [
        PROMPT,
        f"  \n{PROMPT}\n\nCurrent time: 2026-01-01 09:00",
        [text(PROMPT)],
        [text(PROMPT[:20]), text(PROMPT[20:]), text(" (extra)")],
        [{"type": "image", "data": "AAAA", "mimeType": "image/png"}, text(PROMPT)],
        TASKS,
        [text(TASKS)],
        clawctx.history.HEARTBEAT_TRANSCRIPT_PROMPT,
        f"  {clawctx.history.HEARTBEAT_TRANSCRIPT_PROMPT}\n",
    ],
)
def test_heartbeat_user_messages_and_their_ack_are_removed(prompt_content: Any) -> None:
    before = [user("first"), assistant("reply")]
    after = [user("later"), assistant("answer")]
    messages = [*before, user(prompt_content), assistant("HEARTBEAT_OK"), *after]
    result = clawctx.history.filter_heartbeat_pairs(messages)
    assert result.to_list() == [*before, *after]


@pytest.mark.parametrize(
    "content",
    [
        "Hello, " + PROMPT,  # the prompt must start the text
        PROMPT[:-1],  # a truncated prompt is not the prompt
        clawctx.history.HEARTBEAT_TASK_PROMPT_PREFIX + "\n- inbox",  # task prefix without the ack
        "Please: " + clawctx.history.HEARTBEAT_TASK_PROMPT_ACK,  # the ack without the prefix
        clawctx.history.HEARTBEAT_TRANSCRIPT_PROMPT + " extra",  # the transcript prompt is exact
        [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
        "   ",
        [],
        None,
    ],
)
def test_other_user_messages_are_kept(content: Any) -> None:
    messages = [user(content), assistant("HEARTBEAT_OK")]
    assert clawctx.history.filter_heartbeat_pairs(messages).to_list() == messages


@pytest.mark.parametrize(
    "reply",
    [
        [text("HEARTBEAT_OK"), {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}],
        [{"type": "thinking", "thinking": "nothing to do"}, text("HEARTBEAT_OK")],
        [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
        [text("HEARTBEAT_OK"), "HEARTBEAT_OK"],  # a non-object block
        [text("HEARTBEAT_OK"), {"text": "no type"}],
        [{"type": "text", "text": 5}],  # text that is not a string
        {"type": "text", "text": "HEARTBEAT_OK"},  # content neither string nor array
        "Disk usage is at 97% on /var; please clean up old logs before tonight's backup. " * 5,
    ],
)
def test_assistant_replies_that_are_not_pure_acks_are_kept(reply: Any) -> None:
    messages = [user(PROMPT), assistant(reply)]
    assert clawctx.history.filter_heartbeat_pairs(messages).to_list() == messages


def test_assistant_acks_in_every_text_form_are_removed() -> None:
    for reply in (
        "HEARTBEAT_OK",
        [text("HEARTBEAT_"), text("OK")],  # text blocks are joined before stripping
        "**HEARTBEAT_OK**",
        "All clear. HEARTBEAT_OK",
        [],  # quirk: no text strips to a skip
    ):
        messages = [user(PROMPT), assistant(reply)]
        assert clawctx.history.filter_heartbeat_pairs(messages).to_list() == [], reply
    string_reply = {"role": "assistant", "content": "HEARTBEAT_OK", "timestamp": 2}
    assert len(clawctx.history.filter_heartbeat_pairs([user(PROMPT), string_reply])) == 0


def test_pairs_must_be_adjacent_and_roles_exact() -> None:
    tool_result = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "content": [text("# HEARTBEAT.md")],
        "isError": False,
        "timestamp": 3,
    }
    apart = [user(PROMPT), tool_result, assistant("HEARTBEAT_OK")]
    assert clawctx.history.filter_heartbeat_pairs(apart).to_list() == apart
    swapped = [assistant("HEARTBEAT_OK"), user(PROMPT)]
    assert clawctx.history.filter_heartbeat_pairs(swapped).to_list() == swapped
    wrong_role = [{**user(PROMPT), "role": "User"}, assistant("HEARTBEAT_OK")]
    assert clawctx.history.filter_heartbeat_pairs(wrong_role).to_list() == wrong_role
    # Left to right: the first prompt has no ack after it, the second pair goes.
    double = [user(PROMPT), user(PROMPT), assistant("HEARTBEAT_OK"), assistant("HEARTBEAT_OK")]
    assert clawctx.history.filter_heartbeat_pairs(double).to_list() == [double[0], double[3]]


def test_configured_prompt_transcript_prompt_and_ack_limit() -> None:
    ping = [user("ping from cron"), assistant("HEARTBEAT_OK")]
    assert clawctx.history.filter_heartbeat_pairs(ping).to_list() == ping
    assert len(clawctx.history.filter_heartbeat_pairs(ping, heartbeat_prompt="  ping ")) == 0
    default = [user(PROMPT), assistant("HEARTBEAT_OK")]
    assert (
        clawctx.history.filter_heartbeat_pairs(default, heartbeat_prompt="ping").to_list()
        == default
    )
    assert (
        clawctx.history.filter_heartbeat_pairs(default, heartbeat_prompt=None).to_list() == default
    )
    assert (
        clawctx.history.filter_heartbeat_pairs(default, heartbeat_prompt="  ").to_list() == default
    )
    # The task prompt matches whatever the configured prompt.
    tasks = [user(TASKS), assistant("HEARTBEAT_OK")]
    assert len(clawctx.history.filter_heartbeat_pairs(tasks, heartbeat_prompt=None)) == 0
    poll = [user(clawctx.history.HEARTBEAT_TRANSCRIPT_PROMPT), assistant("HEARTBEAT_OK")]
    assert len(clawctx.history.filter_heartbeat_pairs(poll)) == 0
    assert clawctx.history.filter_heartbeat_pairs(poll, transcript_prompt=False).to_list() == poll
    chatty = [user(PROMPT), assistant("HEARTBEAT_OK " + "x" * 20)]
    assert len(clawctx.history.filter_heartbeat_pairs(chatty)) == 0
    assert clawctx.history.filter_heartbeat_pairs(chatty, max_ack_chars=20).to_list() == []
    assert clawctx.history.filter_heartbeat_pairs(chatty, max_ack_chars=19).to_list() == chatty
    assert clawctx.history.filter_heartbeat_pairs(chatty, max_ack_chars="19").to_list() == chatty


def test_returns_the_input_when_nothing_is_removed_and_keeps_bytes() -> None:
    raw = (
        b'[{"role":"user", "content":"hi",  "n":1.50},'
        + json.dumps(user(PROMPT)).encode()
        + b","
        + json.dumps(assistant("HEARTBEAT_OK")).encode()
        + b',{"role":"assistant","content":[{"type":"text","text":"ok"}], "n":2.0}]'
    )
    transcript = clawctx.Transcript.from_json(raw)
    nothing = transcript[:1]
    assert clawctx.history.filter_heartbeat_pairs(nothing) is nothing
    result = clawctx.history.filter_heartbeat_pairs(transcript)
    assert result is not transcript
    assert result.to_json() == (
        b'[{"role":"user", "content":"hi",  "n":1.50},'
        b'{"role":"assistant","content":[{"type":"text","text":"ok"}], "n":2.0}]'
    )
    assert len(transcript) == 4  # the input is not changed
    messages = [user(PROMPT), assistant("HEARTBEAT_OK")]
    copy = json.loads(json.dumps(messages))
    assert isinstance(clawctx.history.filter_heartbeat_pairs(messages), clawctx.Transcript)
    assert messages == copy
    assert clawctx.history.filter_heartbeat_pairs([]).to_list() == []


# ---- HeartbeatTranscriptGuard (heartbeat-runner.ts: pruneHeartbeatTranscript) --------------------


@pytest.fixture
def session_factory(
    tmp_path: Path, ids: Callable[[], str], clock: Callable[[], int]
) -> Callable[[], clawctx.Session]:
    """A session file with one user/assistant exchange, written by our handle."""

    def make() -> clawctx.Session:
        session = clawctx.Session.create(
            tmp_path / "s.jsonl", cwd="/w", session_id="sid", now_ms=clock, id_factory=ids
        )
        session.append_message(user("what's up"))
        session.append_message(assistant("not much"))
        return session

    return make


def session_path(session: clawctx.Session) -> Path:
    assert session.path is not None
    return session.path


def run_heartbeat(session: clawctx.Session, reply: str = "HEARTBEAT_OK") -> list[str]:
    return [session.append_message(user(PROMPT)), session.append_message(assistant(reply))]


def test_guard_truncates_after_an_acknowledged_run(
    session_factory: Callable[[], clawctx.Session],
) -> None:
    session = session_factory()
    path = session_path(session)
    before = path.read_bytes()
    leaf = session.leaf_id
    with clawctx.HeartbeatTranscriptGuard(session) as guard:
        assert guard.mark is not None and guard.mark.size == len(before)
        assert guard.mark.at_line_boundary
        added = run_heartbeat(session)
        assert len(path.read_bytes()) > len(before)
        assert guard.acknowledge("HEARTBEAT_OK") is True
    assert path.read_bytes() == before
    report = guard.report
    assert report is not None
    assert (report.action, report.pruned, report.reason) == ("truncated", True, None)
    assert report.removed_ids == added
    assert report.removed_lines == 2 and report.kept_lines == 0
    # The handle continues from its pre-run leaf.
    assert session.leaf_id == leaf
    next_id = session.append_message(user("back to work"))
    reopened = guard.reopen()
    assert [e["id"] for e in reopened.entries()][-1] == next_id
    assert reopened.get_entry(next_id)["parentId"] == leaf  # type: ignore[index]
    assert all(reopened.get_entry(i) is None for i in added)
    assert reopened.skipped_lines == []


def test_guard_report_counts_removed_bytes(session_factory: Callable[[], clawctx.Session]) -> None:
    session = session_factory()
    path = session_path(session)
    guard = clawctx.HeartbeatTranscriptGuard(session)
    mark = guard.begin()
    assert mark is not None
    run_heartbeat(session, reply="HEARTBEAT_OK all quiet")
    grown = path.stat().st_size
    report = guard.finish(True)
    assert report is not None
    assert report.removed_bytes == grown - mark.size
    assert path.stat().st_size == mark.size


@pytest.mark.parametrize("reply", ["The backup failed at 03:00; please check the NAS.", "x" * 400])
def test_guard_keeps_the_run_when_not_acknowledged(
    session_factory: Callable[[], clawctx.Session], reply: str
) -> None:
    session = session_factory()
    path = session_path(session)
    with clawctx.HeartbeatTranscriptGuard(session) as guard:
        added = run_heartbeat(session, reply=reply)
        assert guard.acknowledge(reply) is False
        during = path.read_bytes()
    assert guard.report is None
    assert path.read_bytes() == during
    assert [e["id"] for e in clawctx.Session.open(path).entries()][-2:] == added
    assert session.leaf_id == added[-1]


def test_explicit_finish_false_and_exceptions_keep_the_run(
    session_factory: Callable[[], clawctx.Session],
) -> None:
    session = session_factory()
    path = session_path(session)
    guard = clawctx.HeartbeatTranscriptGuard(session)
    guard.begin()
    run_heartbeat(session)
    during = path.read_bytes()
    assert guard.finish(False) is None
    assert path.read_bytes() == during
    with pytest.raises(KeyError, match="boom"), clawctx.HeartbeatTranscriptGuard(session) as g:
        run_heartbeat(session)
        g.acknowledge("HEARTBEAT_OK")
        raise KeyError("boom")
    assert len(path.read_bytes()) > len(during)
    assert g.report is None


def test_guard_without_acknowledge_call_does_nothing(
    session_factory: Callable[[], clawctx.Session],
) -> None:
    session = session_factory()
    path = session_path(session)
    with clawctx.HeartbeatTranscriptGuard(session) as guard:
        run_heartbeat(session)
        during = path.read_bytes()
    assert guard.acknowledged is False
    assert path.read_bytes() == during


def test_acknowledge_uses_heartbeat_mode_and_the_guard_limit(
    session_factory: Callable[[], clawctx.Session],
) -> None:
    guard = clawctx.HeartbeatTranscriptGuard(session_factory(), max_ack_chars=3)
    assert guard.acknowledge("HEARTBEAT_OK abc") is True
    assert guard.acknowledge("HEARTBEAT_OK abcd") is False
    assert guard.acknowledge(None) is True  # an empty reply is delivered as nothing
    assert guard.acknowledge("nothing to see") is False


FOREIGN_WRITER = textwrap.dedent(
    """
    import sys, clawctx
    session = clawctx.Session.open(sys.argv[1], fsync=False)
    print("opened", flush=True)
    sys.stdin.readline()
    session.append_message({"role": "user", "content": sys.argv[2], "timestamp": 5})
    print("appended", flush=True)
    """
)


def foreign_writer(path: Path, content: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", FOREIGN_WRITER, str(path), content],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "opened"
    return proc


def let_write(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("go\n")
    proc.stdin.flush()
    assert proc.stdout.readline().strip() == "appended"
    proc.communicate(timeout=60)  # closes the pipes
    assert proc.returncode == 0


def line_containing(data: bytes, needle: str) -> bytes:
    (found,) = [line for line in data.splitlines(keepends=True) if needle.encode() in line]
    return found


def test_lines_another_process_appends_during_the_run_survive_byte_for_byte(
    session_factory: Callable[[], clawctx.Session],
) -> None:
    session = session_factory()
    path = session_path(session)
    before = path.read_bytes()
    leaf = session.leaf_id
    # The other process opened the session before the run, so its entry continues its own
    # leaf, not the heartbeat exchange.
    proc = foreign_writer(path, "message from another process")
    with clawctx.HeartbeatTranscriptGuard(session) as guard:
        prompt_id = session.append_message(user(PROMPT))
        let_write(proc)
        ack_id = session.append_message(assistant("HEARTBEAT_OK"))
        # A line in an odd format (CRLF, spacing, 1.50) written without the lock.
        with path.open("ab") as f:
            f.write(
                b'{"type":"custom", "customType":"probe","data":{"n":1.50},"id":"f00d0001",'
                b'"parentId":null,"timestamp":"2026-01-01T00:00:09.000Z"}\r\n'
            )
        guard.acknowledge("HEARTBEAT_OK")
        during = path.read_bytes()
        inode = path.stat().st_ino
    foreign = line_containing(during, "message from another process")
    probe = line_containing(during, "f00d0001")
    assert path.read_bytes() == before + foreign + probe
    report = guard.report
    assert report is not None
    assert report.action == "rewritten"
    assert report.removed_ids == [prompt_id, ack_id]
    assert report.kept_lines == 2
    assert path.stat().st_ino != inode  # replaced atomically, not edited in place
    reopened = clawctx.Session.open(path)
    assert reopened.skipped_lines == []
    foreign_entry = json.loads(foreign)
    assert foreign_entry["parentId"] == leaf
    context = reopened.context(foreign_entry["id"]).messages
    assert [m["content"] for m in context][-3:] == [
        "what's up",
        [text("not much")],
        "message from another process",
    ]


def test_rewrite_keeps_the_original_file_mode(
    session_factory: Callable[[], clawctx.Session],
) -> None:
    session = session_factory()
    path = session_path(session)
    path.chmod(0o640)
    before = path.read_bytes()
    with clawctx.HeartbeatTranscriptGuard(session) as guard:
        session.append_message(user(PROMPT))
        with path.open("a") as f:
            f.write('{"type":"custom","customType":"x","id":"f1","parentId":null}\n')
        session.append_message(assistant("HEARTBEAT_OK"))
        guard.acknowledge("HEARTBEAT_OK")
    assert guard.report is not None and guard.report.action == "rewritten"
    assert (
        path.read_bytes()
        == before + b'{"type":"custom","customType":"x","id":"f1","parentId":null}\n'
    )
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in path.parent.iterdir()] == ["s.jsonl"]  # no temp file left


def test_nothing_is_removed_when_a_foreign_entry_descends_from_the_exchange(
    session_factory: Callable[[], clawctx.Session],
) -> None:
    session = session_factory()
    path = session_path(session)
    with clawctx.HeartbeatTranscriptGuard(session) as guard:
        run_heartbeat(session)
        # Opened after the exchange: its leaf is the acknowledgement, its entry a child of it.
        let_write(foreign_writer(path, "follow-up"))
        guard.acknowledge("HEARTBEAT_OK")
        during = path.read_bytes()
    assert path.read_bytes() == during
    report = guard.report
    assert report is not None
    assert report.action == "unchanged" and not report.pruned
    assert report.reason is not None and "descends" in report.reason
    # The handle was left as it was: nothing was removed.
    assert session.leaf_id == json.loads(during.splitlines()[-2])["id"]


def test_file_that_shrank_meanwhile_is_left_alone(
    session_factory: Callable[[], clawctx.Session],
) -> None:
    session = session_factory()
    path = session_path(session)
    guard = clawctx.HeartbeatTranscriptGuard(session)
    guard.begin()
    run_heartbeat(session)
    # Someone cut the file (in place) below the recorded size.
    lines = path.read_bytes().splitlines(keepends=True)
    with path.open("r+b") as f:
        f.truncate(len(lines[0]))
    shrunk = path.read_bytes()
    report = guard.finish(True)
    assert report is not None and report.action == "unchanged"
    assert report.reason is not None and "shrank" in report.reason
    assert path.read_bytes() == shrunk


def test_file_replaced_meanwhile_is_left_alone(
    session_factory: Callable[[], clawctx.Session], tmp_path: Path
) -> None:
    session = session_factory()
    path = session_path(session)
    guard = clawctx.HeartbeatTranscriptGuard(session)
    guard.begin()
    run_heartbeat(session)
    # An atomic replacement with identical bytes (as a repair or rewrite would do).
    replacement = tmp_path / "replacement"
    replacement.write_bytes(path.read_bytes())
    os.replace(replacement, path)
    replaced = path.read_bytes()
    report = guard.finish(True)
    assert report is not None and report.action == "unchanged"
    assert report.reason is not None and "replaced" in report.reason
    assert path.read_bytes() == replaced


def test_file_changed_before_the_mark_is_left_alone(
    session_factory: Callable[[], clawctx.Session],
) -> None:
    session = session_factory()
    path = session_path(session)
    guard = clawctx.HeartbeatTranscriptGuard(session)
    mark = guard.begin()
    assert mark is not None
    run_heartbeat(session)
    data = bytearray(path.read_bytes())
    at = data.index(b"not much")
    data[at : at + 8] = b"NOT MUCH"  # same length, same inode
    with path.open("r+b") as f:
        f.write(data)
    report = guard.finish(True)
    assert report is not None and report.action == "unchanged"
    assert report.reason is not None and "before the mark" in report.reason
    assert path.read_bytes() == bytes(data)


def test_session_guard_needs_every_run_entry_unchanged_after_the_mark(
    session_factory: Callable[[], clawctx.Session],
) -> None:
    session = session_factory()
    path = session_path(session)
    guard = clawctx.HeartbeatTranscriptGuard(session)
    mark = guard.begin()
    assert mark is not None
    run_heartbeat(session)
    full = path.read_bytes()
    # Someone edited the acknowledgement's line in place (same id, other content).
    edited = full.replace(b'"text":"HEARTBEAT_OK"', b'"text":"HEARTBEAT_NO"')
    assert edited != full
    path.write_bytes(edited)
    report = guard.finish(True)
    assert report is not None and report.action == "unchanged"
    assert report.reason == "1 of the run's 2 entries were not found after the mark"
    assert path.read_bytes() == edited
    # Someone cut the acknowledgement's line off (in place) in a second run.
    path.write_bytes(full)
    guard.begin()
    run_heartbeat(session)
    grown = path.read_bytes()
    cut = grown[: grown.rindex(b"\n", 0, len(grown) - 1) + 1]
    with path.open("r+b") as f:
        f.truncate(len(cut))
    report = guard.finish(True)
    assert report is not None and report.action == "unchanged"
    assert report.reason == "1 of the run's 2 entries were not found after the mark"
    assert path.read_bytes() == cut


LOCK_HOLDER = textwrap.dedent(
    """
    import fcntl, sys, time
    f = open(sys.argv[1], "a")
    fcntl.flock(f, fcntl.LOCK_EX)
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    """
)


def test_lock_held_by_another_process_raises_and_finish_can_be_retried(
    session_factory: Callable[[], clawctx.Session],
) -> None:
    session = session_factory()
    path = session_path(session)
    before = path.read_bytes()
    guard = clawctx.HeartbeatTranscriptGuard(session, lock_timeout=0.2)
    guard.begin()
    run_heartbeat(session)
    during = path.read_bytes()
    with subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(path), "30"], stdout=subprocess.PIPE, text=True
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
            with pytest.raises(clawctx.SessionLockError):
                guard.finish(True)
            assert path.read_bytes() == during
            with pytest.raises(clawctx.SessionLockError):
                clawctx.HeartbeatTranscriptGuard(path, lock_timeout=0.1).begin()
        finally:
            holder.kill()
    report = guard.finish(True)
    assert report is not None and report.action == "truncated"
    assert path.read_bytes() == before


def test_mark_inside_a_line_is_not_pruned(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    header = (
        '{"type":"session","version":3,"id":"sid","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}'
    )
    torn = '{"type":"message","id":"t1"'
    path.write_text(f"{header}\n{torn}")
    guard = clawctx.HeartbeatTranscriptGuard(path)
    mark = guard.begin()
    assert mark is not None and not mark.at_line_boundary
    exchange = content_entry("h1", None, user(PROMPT)) + content_entry(
        "h2", "h1", assistant("HEARTBEAT_OK")
    )
    with path.open("a") as f:
        f.write("\n" + exchange)
    during = path.read_bytes()
    report = guard.finish(True)
    assert report is not None and report.action == "unchanged"
    assert report.reason is not None and "line boundary" in report.reason
    assert path.read_bytes() == during


def test_path_guard_finds_the_exchange_by_content_including_tool_steps(
    session_factory: Callable[[], clawctx.Session],
) -> None:
    session = session_factory()
    path = session_path(session)
    before = path.read_bytes()
    with clawctx.HeartbeatTranscriptGuard(path) as guard:
        # The runner writes through its own handle; the guard only knows the path.
        runner = clawctx.Session.open(path)
        runner.append_message(user(PROMPT))
        runner.append_message(
            assistant(
                [
                    {
                        "type": "toolCall",
                        "id": "c1",
                        "name": "read",
                        "arguments": {"path": "HEARTBEAT.md"},
                    }
                ]
            )
        )
        runner.append_custom_entry("openclaw.cache-ttl", {"timestamp": 1})
        runner.append_message(
            {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "read",
                "content": [text("# empty")],
                "isError": False,
                "timestamp": 3,
            }
        )
        with path.open("a") as f:  # another writer's line in between
            f.write('{"type":"custom","customType":"x","id":"f1","parentId":null}\n')
        runner.append_message(assistant("HEARTBEAT_OK"))
        guard.acknowledge("HEARTBEAT_OK")
    report = guard.report
    assert report is not None and report.action == "rewritten", report
    assert report.removed_lines == 5 and report.kept_lines == 1
    assert (
        path.read_bytes()
        == before + b'{"type":"custom","customType":"x","id":"f1","parentId":null}\n'
    )


def content_entry(id_: str, parent: str | None, message: Message) -> str:
    record = {
        "type": "message",
        "id": id_,
        "parentId": parent,
        "timestamp": "t",
        "message": message,
    }
    return json.dumps(record) + "\n"


HEADER_LINE = (
    '{"type":"session","version":3,"id":"sid","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n'
)


def test_path_guard_removes_only_the_first_complete_exchange(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(HEADER_LINE)
    guard = clawctx.HeartbeatTranscriptGuard(path, heartbeat_prompt="ping")
    guard.begin()
    lines = [
        content_entry("u0", None, user("ping?")),  # answered, but not acknowledged
        content_entry("a0", "u0", assistant("the disk is full")),
        content_entry("u1", None, user("ping!")),
        content_entry("a1", "u1", assistant("HEARTBEAT_OK")),
        content_entry("u2", None, user("ping again")),
        content_entry("a2", "u2", assistant("HEARTBEAT_OK")),
    ]
    with path.open("a") as f:
        f.write("".join(lines))
    report = guard.finish(True)
    assert report is not None and report.action == "rewritten"
    assert report.removed_ids == ["u1", "a1"]
    assert path.read_text() == HEADER_LINE + "".join(lines[:2] + lines[4:])


def test_path_guard_exchange_stops_at_a_user_message(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(HEADER_LINE)
    guard = clawctx.HeartbeatTranscriptGuard(path)
    guard.begin()
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}
    lines = [
        content_entry("u1", None, user(PROMPT)),
        content_entry("a1", "u1", assistant([call])),
        # A real user turn inside the chain: not a heartbeat exchange any more.
        content_entry("r1", "a1", user("actually, summarize my inbox")),
        content_entry("a2", "r1", assistant("HEARTBEAT_OK")),
    ]
    with path.open("a") as f:
        f.write("".join(lines))
    report = guard.finish(True)
    assert report is not None and report.action == "unchanged"
    assert path.read_text() == HEADER_LINE + "".join(lines)


def test_path_guard_keeps_an_exchange_a_later_entry_descends_from(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(HEADER_LINE)
    guard = clawctx.HeartbeatTranscriptGuard(path)
    guard.begin()
    lines = [
        content_entry("u1", None, user(PROMPT)),
        content_entry("a1", "u1", assistant("HEARTBEAT_OK")),
        content_entry("c1", "a1", user("a question")),
    ]
    with path.open("a") as f:
        f.write("".join(lines))
    report = guard.finish(True)
    assert report is not None and report.action == "unchanged"
    assert path.read_text() == HEADER_LINE + "".join(lines)
    # Without the descendant the same exchange goes.
    path.write_text(HEADER_LINE)
    guard.begin()
    with path.open("a") as f:
        f.write("".join(lines[:2]))
    report = guard.finish(True)
    assert report is not None and report.action == "truncated"
    assert path.read_text() == HEADER_LINE


def test_path_guard_without_an_acknowledgement_in_the_file_changes_nothing(
    session_factory: Callable[[], clawctx.Session],
) -> None:
    session = session_factory()
    path = session_path(session)
    with clawctx.HeartbeatTranscriptGuard(path) as guard:
        run_heartbeat(session, reply="Alert: the certificate expires tomorrow.")
        guard.acknowledged = True  # the caller's word is not enough without the exchange
        during = path.read_bytes()
    assert guard.report is not None and guard.report.action == "unchanged"
    assert (
        guard.report.reason is not None and "no complete heartbeat exchange" in guard.report.reason
    )
    assert path.read_bytes() == during


def test_session_guard_when_the_run_branched_uses_the_entry_list(
    session_factory: Callable[[], clawctx.Session],
) -> None:
    session = session_factory()
    path = session_path(session)
    before = path.read_bytes()
    leaf = session.leaf_id
    assert leaf is not None
    with clawctx.HeartbeatTranscriptGuard(session) as guard:
        first = session.append_message(user(PROMPT))
        session.branch(leaf)  # the ack is not a child of the prompt
        second = session.append_message(assistant("HEARTBEAT_OK"))
        guard.acknowledge("HEARTBEAT_OK")
    assert guard.report is not None and guard.report.removed_ids == [first, second]
    assert path.read_bytes() == before


def test_session_guard_with_nothing_appended_reports_why(
    session_factory: Callable[[], clawctx.Session],
) -> None:
    session = session_factory()
    path = session_path(session)
    with clawctx.HeartbeatTranscriptGuard(session) as guard:
        with path.open("a") as f:
            f.write('{"type":"custom","customType":"x","id":"f1","parentId":null}\n')
        guard.acknowledge("HEARTBEAT_OK")
        during = path.read_bytes()
    assert guard.report is not None and guard.report.action == "unchanged"
    assert guard.report.reason == "nothing was appended through the session during the run"
    assert path.read_bytes() == during


def test_session_guard_from_an_empty_leaf_resets_the_leaf(tmp_path: Path) -> None:
    session = clawctx.Session.create(tmp_path / "s.jsonl", cwd="/")
    path = session_path(session)
    before = path.read_bytes()
    with clawctx.HeartbeatTranscriptGuard(session) as guard:
        run_heartbeat(session)
        guard.acknowledge("HEARTBEAT_OK")
    assert path.read_bytes() == before
    assert session.leaf_id is None
    new = session.append_message(user("hello"))
    assert session.get_entry(new)["parentId"] is None  # type: ignore[index]


def test_guard_argument_and_state_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="in memory"):
        clawctx.HeartbeatTranscriptGuard(clawctx.Session.in_memory())
    path = tmp_path / "s.jsonl"
    path.write_text('{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\n')
    guard = clawctx.HeartbeatTranscriptGuard(path)
    with pytest.raises(RuntimeError, match="without begin"):
        guard.finish(True)
    guard.begin()
    with pytest.raises(RuntimeError, match="already"):
        guard.begin()
    assert guard.finish(False) is None
    with pytest.raises(RuntimeError, match="without begin"):
        guard.finish(False)


def test_missing_file_at_begin_means_nothing_to_prune(tmp_path: Path) -> None:
    path = tmp_path / "later.jsonl"
    with clawctx.HeartbeatTranscriptGuard(path) as guard:
        assert guard.mark is None
        path.write_text(json.dumps(user(PROMPT)) + "\n")
        guard.acknowledge("HEARTBEAT_OK")
    assert guard.report is None
    assert path.read_text() == json.dumps(user(PROMPT)) + "\n"


def test_file_removed_during_the_run_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\n')
    guard = clawctx.HeartbeatTranscriptGuard(path)
    guard.begin()
    path.unlink()
    report = guard.finish(True)
    assert report is not None and report.action == "unchanged"
    assert report.reason == "the file no longer exists"
    assert not path.exists()
