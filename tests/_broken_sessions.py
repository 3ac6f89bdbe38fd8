"""Hypothesis strategies for broken histories and broken pi sessions, of the kinds real
runtimes leave behind. Shared by the property tests (``tests/history/test_properties_history.py``,
``tests/history/test_safe_by_default.py``); import as ``from tests._broken_sessions import ...``.

Two levels:

- **message lists** (pi ``AgentMessage`` dicts): :func:`histories` is the wide generator
  (unknown roles, odd block kinds, every field optional); :func:`broken_histories` is the
  narrower one built from real failure reports: repeated or malformed tool-call ids (``""``,
  ``"a|fc_1"`` beside ``"a"``, ids with spaces or dots, 70-character ids), orphaned, missing,
  duplicated or late tool results, aborted and errored turns with and without tool calls, a
  user message between a call and its result, blank text blocks, reasoning-only assistant
  turns, assistant-first histories.
- **session files** (pi session format v3, see ``../shared/spec/`` and pi-mono 0.58.3
  ``packages/coding-agent/src/core/session-manager.ts``): :func:`broken_sessions` lays a
  broken history out as ``message`` entries chained by ``id`` / ``parentId``, and adds
  ``compaction`` entries whose ``firstKeptEntryId`` lands between a call and its result,
  chained compactions (an older compaction inside the newer one's kept window, as in
  earendil-works/pi#4570), ``branch_summary`` entries and abandoned branches. Write one with
  :func:`write_session`.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

Msg = dict[str, Any]

# A 1x1 PNG: small, within every image limit, so the image pass keeps it.
PNG_1X1 = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
    )
).decode()

PROPERTY_SETTINGS = settings(
    max_examples=int(os.environ.get("CLAWCTX_PROPERTY_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ---- the wide message generator (unknown roles, odd blocks, missing fields) -------------------

IDS = st.sampled_from(
    [
        "call_1",
        "call_2",
        "c1",
        "",
        " ",
        "a|fc_1",
        "call_1|fc_1",
        "call_2|fc_1",
        "x y",
        "toolu_01",
        "c" * 70,
    ]
)
NAMES = st.one_of(st.none(), st.sampled_from(["read", " exec ", "", "  ", "bad name!", "x" * 80]))
TEXTS = st.sampled_from(["hi", "", "  ", "done", "[Inter-session message] x", "HEARTBEAT_OK"])
STOPS = st.sampled_from([None, "stop", "toolUse", "length", "error", "aborted"])


def text_block(text: str) -> Msg:
    """A text content block."""
    return {"type": "text", "text": text}


@st.composite
def _tool_call(draw: st.DrawFn) -> Msg:
    kind = draw(st.sampled_from(["toolCall", "toolCall", "toolUse", "functionCall"]))
    block: Msg = {"type": kind, "id": draw(IDS)}
    name = draw(NAMES)
    if name is not None:
        block["name"] = name
    args = draw(st.sampled_from([{}, {"path": "a"}, None, "missing"]))
    if args != "missing":
        block["input" if kind == "toolUse" else "arguments"] = args
    return block


_thinking = st.builds(
    lambda text, sig: {"type": "thinking", "thinking": text, **sig},
    TEXTS,
    st.sampled_from([{}, {"thinkingSignature": "sig"}, {"thought_signature": "msg_1"}]),
)
_assistant_block = st.one_of(
    TEXTS.map(text_block),
    _thinking,
    _tool_call(),
    st.just({"type": "redacted_thinking", "data": "x"}),
    st.just({"type": "image", "data": PNG_1X1, "mimeType": "image/png"}),
)


@st.composite
def _assistant(draw: st.DrawFn) -> Msg:
    content = draw(
        st.one_of(st.lists(_assistant_block, max_size=4), TEXTS, st.just([]), st.just(None))
    )
    msg: Msg = {"role": "assistant", "content": content}
    stop = draw(STOPS)
    if stop is not None:
        msg["stopReason"] = stop
    if stop in ("error", "aborted") and draw(st.booleans()):
        msg["errorMessage"] = "Request was aborted"
    if draw(st.booleans()):
        msg.update(api="anthropic-messages", provider="anthropic", model="claude")
    if draw(st.booleans()):
        msg["usage"] = {"input": 5, "output": 1, "totalTokens": 6}
    if draw(st.booleans()):
        msg["provider"], msg["model"] = "openclaw", "delivery-mirror"
    return msg


@st.composite
def _tool_result(draw: st.DrawFn) -> Msg:
    msg: Msg = {"role": "toolResult", "toolCallId": draw(IDS)}
    name = draw(NAMES)
    if name is not None:
        msg["toolName"] = name
    msg["content"] = draw(
        st.one_of(
            st.lists(
                st.one_of(
                    TEXTS.map(text_block),
                    st.just({"type": "image", "data": PNG_1X1, "mimeType": "image/png"}),
                ),
                max_size=2,
            ),
            TEXTS,
        )
    )
    msg["isError"] = draw(st.booleans())
    if draw(st.booleans()):
        msg["details"] = {"exitCode": 1}
    return msg


_user = st.one_of(
    TEXTS.map(lambda t: {"role": "user", "content": t}),
    st.lists(
        st.one_of(
            TEXTS.map(text_block),
            st.just({"type": "image", "data": PNG_1X1, "mimeType": "image/png"}),
        ),
        max_size=2,
    ).map(lambda c: {"role": "user", "content": c}),
    st.just(
        {"role": "user", "content": "x", "provenance": {"kind": "inter_session", "sourceTool": "t"}}
    ),
)
_other = st.sampled_from(
    [
        {"content": "no role at all"},
        {"role": "system", "content": "unknown role"},
        {"role": 5, "content": "role is not a string"},
        {"role": "custom", "customType": "note", "content": "c", "display": True},
        {"role": "bashExecution", "command": "ls", "output": "x", "exitCode": 0},
        {"role": "compactionSummary", "summary": "s", "tokensBefore": 10},
        {"role": "branchSummary", "summary": "b", "fromId": "x"},
    ]
)


@st.composite
def _exchange(draw: st.DrawFn) -> list[Msg]:
    """An assistant with calls and results for some of them (repeated, reordered, stray)."""
    msg = draw(_assistant())
    content = msg["content"] if isinstance(msg["content"], list) else []
    calls = [b for b in content if b.get("type") in ("toolCall", "toolUse", "functionCall")]
    results = []
    for call in draw(st.lists(st.sampled_from(calls), max_size=3)) if calls else []:
        result = draw(_tool_result())
        result["toolCallId"] = call["id"]
        results.append(result)
    results += draw(st.lists(_tool_result(), max_size=1))
    return [msg, *draw(st.permutations(results))]


@st.composite
def histories(draw: st.DrawFn) -> list[Msg]:
    """The wide generator: any mix of users, assistants, results and unknown messages."""
    single = st.one_of(_user, _assistant(), _tool_result(), _other).map(lambda m: [m])
    chunks = draw(st.lists(st.one_of(single, _exchange()), max_size=8))
    messages = [dict(m) for chunk in chunks for m in chunk]
    for i, m in enumerate(messages):
        if draw(st.booleans()):
            m["timestamp"] = 1000 * (i + 1)
    return messages


# ---- the report-shaped generator: well-formed messages, damaged the way runtimes damage them --

# Ids real runtimes write, good and bad: Anthropic ``toolu_``, OpenAI ``call_``, the Responses
# pair ``call_x|fc_y`` beside its bare half, Mistral's 9 characters, and the malformed ones.
GOOD_IDS = ["toolu_01A", "toolu_01B", "call_abc", "call_def", "abcDEF123", "fc_1", "c1"]
BAD_IDS = ["", "call_abc|fc_1", "id with spaces", "tool.use:1", "x" * 70, "functions.read:0"]
# Half fresh ids (a healthy session's ids are unique), half from the lists (repeats, bad ids).
CALL_IDS = st.one_of(
    st.integers(0, 10**9).map(lambda n: f"toolu_{n:09d}"), st.sampled_from(GOOD_IDS + BAD_IDS)
)
TOOL_NAMES = st.sampled_from(["read", "bash", "edit", "web_search"])
#: A small pi ``usage`` of an assistant message (15 tokens, no cost).
SMALL_USAGE: Msg = {
    "input": 10,
    "output": 5,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 15,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}
ASSISTANT_META: Msg = {
    "api": "anthropic-messages",
    "provider": "anthropic",
    "model": "claude-sonnet-4-5",
    "usage": SMALL_USAGE,
}


def user_msg(text: str) -> Msg:
    """A pi user message."""
    return {"role": "user", "content": [text_block(text)]}


def assistant_msg(content: list[Msg], stop: str = "stop", **extra: Any) -> Msg:
    """A pi assistant message with the usual metadata."""
    return {"role": "assistant", "content": content, **ASSISTANT_META, "stopReason": stop, **extra}


def call_block(call_id: str, name: str = "read") -> Msg:
    """A pi ``toolCall`` block."""
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": {"path": "a.txt"}}


def result_msg(call_id: str, name: str = "read", text: str = "ok", error: bool = False) -> Msg:
    """A pi ``toolResult`` message."""
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [text_block(text)],
        "isError": error,
    }


@st.composite
def _turn(draw: st.DrawFn) -> list[Msg]:
    """One assistant turn and what follows it, healthy or damaged in one of the real ways."""
    n_calls = draw(st.integers(0, 3))
    ids = [draw(CALL_IDS) for _ in range(n_calls)]
    names = [draw(TOOL_NAMES) for _ in ids]
    lead: list[Msg] = []
    if draw(st.booleans()):
        lead.append({"type": "thinking", "thinking": "plan", "thinkingSignature": "sig"})
    if draw(st.integers(0, 4)) > 0:
        lead.append(text_block(draw(st.sampled_from(["On it.", "", "  ", "Reading."]))))
    calls = [call_block(i, n) for i, n in zip(ids, names, strict=True)]
    kind = draw(
        st.sampled_from(
            [
                "healthy",
                "healthy",
                "missing",  # a result never written (crash, kill -9)
                "duplicated",  # a result written twice
                "orphan",  # a result whose call is gone
                "late",  # a user message between the call and its result
                "reordered",
                "aborted",  # stopReason aborted / error, with or without calls
                "errored",
                "reasoning_only",
                "empty",
            ]
        )
    )
    if kind == "reasoning_only":
        return [assistant_msg([{"type": "thinking", "thinking": "hm", "thinkingSignature": "s"}])]
    if kind == "empty":
        return [assistant_msg([], stop=draw(st.sampled_from(["stop", "error", "aborted"])))]
    if kind in ("aborted", "errored"):
        stop = "aborted" if kind == "aborted" else "error"
        msg = assistant_msg(lead + calls, stop=stop, errorMessage="Request was aborted")
        out = [msg]
        # Runtimes sometimes write results for an aborted turn's calls (synthetic or real).
        if calls and draw(st.booleans()):
            out += [
                result_msg(i, n, "aborted", error=True) for i, n in zip(ids, names, strict=True)
            ]
        return out
    stop = "toolUse" if calls else "stop"
    out = [assistant_msg(lead + calls, stop=stop)]
    results = [result_msg(i, n) for i, n in zip(ids, names, strict=True)]
    if kind == "missing" and results:
        del results[draw(st.integers(0, len(results) - 1))]
    elif kind == "duplicated" and results:
        results.append(dict(results[draw(st.integers(0, len(results) - 1))]))
    elif kind == "orphan":
        results.append(result_msg(draw(CALL_IDS), "read", "stray"))
    elif kind == "reordered":
        results = draw(st.permutations(results))
    elif kind == "late" and results:
        cut = draw(st.integers(0, len(results) - 1))
        results = [*results[:cut], user_msg("are you done?"), *results[cut:]]
    return out + results


@st.composite
def broken_histories(draw: st.DrawFn, min_turns: int = 1, max_turns: int = 6) -> list[Msg]:
    """A pi message list of user prompts and assistant turns, damaged the way real runtimes
    damage them (see the module docstring). Sometimes assistant-first; sometimes with blank
    user text."""
    messages: list[Msg] = []
    if draw(st.integers(0, 5)) > 0:
        messages.append(user_msg(draw(st.sampled_from(["fix the tests", "hi"]))))
    for _ in range(draw(st.integers(min_turns, max_turns))):
        messages += draw(_turn())
        if draw(st.booleans()):
            messages.append(user_msg(draw(st.sampled_from(["continue", "  ", "thanks"]))))
    for i, m in enumerate(messages):
        m["timestamp"] = 1767225600000 + 1000 * i
    return messages


# ---- pi session files --------------------------------------------------------------------------


def _iso(ms: int) -> str:
    secs, milli = divmod(ms, 1000)
    mins, sec = divmod(secs, 60)
    hours, minute = divmod(mins, 60)
    return f"2026-01-01T{hours % 24:02d}:{minute:02d}:{sec:02d}.{milli:03d}Z"


class _Chain:
    """Writes entries with fresh ids, each the child of ``parent`` (the previous by default)."""

    def __init__(self) -> None:
        self.entries: list[Msg] = [
            {
                "type": "session",
                "version": 3,
                "id": "5e5510a0-0000-4000-8000-000000000001",
                "timestamp": _iso(0),
                "cwd": "/home/dev/project",
            }
        ]
        self.count = 0
        self.leaf: str | None = None

    def add(self, entry: Msg, parent: str | bool | None = True) -> str:
        self.count += 1
        eid = f"{self.count:08x}"
        parent_id = self.leaf if parent is True else parent
        self.entries.append(
            {"id": eid, "parentId": parent_id, "timestamp": _iso(1000 * self.count), **entry}
        )
        self.leaf = eid
        return eid

    def message(self, msg: Msg, parent: str | bool | None = True) -> str:
        return self.add({"type": "message", "message": msg}, parent)


@st.composite
def broken_sessions(draw: st.DrawFn) -> list[Msg]:
    """The entries of a pi session file (v3): header, ``message`` entries chained by
    ``parentId``, with compactions that cut a call from its result (chained sometimes),
    ``branch_summary`` entries and abandoned branches. The last entry is the leaf."""
    chain = _Chain()
    # Message entries on the main line, with their ids, for compactions to point into.
    kept: list[tuple[str, Msg]] = []
    segments = draw(st.integers(1, 3))
    for seg in range(segments):
        for msg in draw(broken_histories(max_turns=4)):
            kept.append((chain.message(msg), msg))
        event = draw(st.sampled_from(["none", "compaction", "compaction", "branch"]))
        if event == "compaction" and kept:
            # Prefer a kept entry that is a tool result: the cut then lands between a call and
            # its result (the compaction keeps the result, summarizes the call away).
            results = [eid for eid, m in kept if m.get("role") == "toolResult"]
            pool = results if results and draw(st.booleans()) else [eid for eid, _ in kept]
            first_kept = draw(st.sampled_from(pool))
            chain.add(
                {
                    "type": "compaction",
                    "summary": f"## Goal\nSegment {seg} summarized.",
                    "firstKeptEntryId": first_kept,
                    "tokensBefore": 1000 * (seg + 1),
                }
            )
            # A tool result written after the compaction, answering a call that was before it
            # (the #4570 / #6832 shape: the result's parent is the compaction entry).
            if draw(st.booleans()):
                calls = [
                    b["id"]
                    for _, m in kept
                    if m.get("role") == "assistant"
                    for b in m.get("content") or []
                    if b.get("type") == "toolCall"
                ]
                if calls:
                    chain.message(result_msg(draw(st.sampled_from(calls)), "edit", "late"))
        elif event == "branch" and len(kept) > 1:
            fork = draw(st.sampled_from([eid for eid, _ in kept[:-1]]))
            main_leaf = chain.leaf
            # The abandoned branch: written, then left (the leaf goes back to the main line).
            chain.leaf = fork
            abandoned = None
            for msg in draw(broken_histories(max_turns=2)):
                abandoned = chain.message(msg)
            chain.leaf = main_leaf if draw(st.booleans()) else fork
            if abandoned is not None and draw(st.booleans()):
                chain.add(
                    {
                        "type": "branch_summary",
                        "fromId": abandoned,
                        "summary": "The user explored a different branch.",
                    }
                )
    chain.message(user_msg("next step"))
    return chain.entries


def write_session(path: Path | str, entries: list[Msg]) -> Path:
    """Writes session ``entries`` (header first) as a pi JSONL file, one compact line each with
    a final newline, as pi's ``SessionManager`` appends them. Returns the path."""
    path = Path(path)
    lines = (json.dumps(e, separators=(",", ":"), ensure_ascii=False) + "\n" for e in entries)
    path.write_text("".join(lines), encoding="utf-8")
    return path
