"""clawctx.cache_diff: where a request body stops extending the previous one, as a provider's
prompt cache sees it (issue 31 item 5)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import clawctx
from clawctx.errors import ClawctxError, RequestBodyError
from clawctx.wire import BREAK_CAUSES, CacheBreak, build_request_payload, cache_diff
from tests._broken_sessions import SMALL_USAGE

NOW = 1_700_000_000_000

MODELS: dict[str, dict[str, Any]] = {
    "anthropic-messages": {"provider": "anthropic", "id": "claude-sonnet-4-5"},
    "openai-responses": {"provider": "openai", "id": "gpt-5"},
    "openai-completions": {"provider": "openai", "id": "gpt-4o"},
    "google-generative-ai": {"provider": "google", "id": "gemini-2.5-pro"},
}

TOOLS = [
    {"name": "read", "description": "Read a file", "parameters": {"type": "object"}},
    {"name": "exec", "description": "Run a command", "parameters": {"type": "object"}},
]


def _model(api: str) -> dict[str, Any]:
    spec = MODELS[api]
    return {
        "id": spec["id"],
        "name": spec["id"],
        "api": api,
        "provider": spec["provider"],
        "baseUrl": "",
        "reasoning": False,
        "input": ["text"],
        "maxTokens": 8192,
    }


def _user(text: str, ts: int) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}


def _assistant(text: str, api: str, ts: int) -> dict[str, Any]:
    spec = MODELS[api]
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": api,
        "provider": spec["provider"],
        "model": spec["id"],
        "usage": dict(SMALL_USAGE),
        "stopReason": "stop",
        "timestamp": ts,
    }


def _history(api: str, turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in range(turns):
        out.append(_user(f"question {n}: " + "word " * 40, n * 10))
        out.append(_assistant(f"answer {n}: " + "text " * 40, api, n * 10 + 1))
    return out


def _body(
    api: str,
    messages: list[dict[str, Any]],
    system: str = "You are a helpful agent.",
    tools: list[dict[str, Any]] | None = None,
) -> clawctx.wire.RequestPayload:
    context = {"system_prompt": system, "messages": messages, "tools": tools or TOOLS}
    return build_request_payload(_model(api), context, now_ms=NOW)


@pytest.mark.parametrize("api", list(MODELS))
def test_the_next_turn_extends_the_previous_request(api: str) -> None:
    history = _history(api, 3)
    before = _body(api, [*history, _user("next", 100)])
    after = _body(
        api, [*history, _user("next", 100), _assistant("ok", api, 101), _user("again", 102)]
    )
    assert cache_diff(before, after) is None
    # The same as dicts, JSON text and bytes.
    assert cache_diff(before.to_dict(), after.to_dict()) is None
    assert cache_diff(before.to_json().decode(), after.to_json()) is None
    assert cache_diff(before, before) is None


def test_anthropic_system_prompt_change_names_path_offsets_and_tokens() -> None:
    api = "anthropic-messages"
    history = [*_history(api, 4), _user("next", 100)]
    before = _body(api, history)
    after = _body(api, history, system="You are a careful agent.")
    found = cache_diff(before, after)
    assert isinstance(found, CacheBreak)
    assert found.cause == "system_prompt"
    assert found.path == "system[0].text"
    a, b = before.to_json(), after.to_json()
    # The offsets point at the first differing byte of each body.
    assert a[: found.previous_offset].endswith(b"You are a ")
    assert a[found.previous_offset :].startswith(b"helpful")
    assert b[found.next_offset :].startswith(b"careful")
    # Everything after the break is written again: the rest of the system prompt and all the
    # messages, with the calibrated estimator over their JSON text.
    messages_tokens = clawctx.count_tokens(json.dumps(after.to_dict()["messages"]))
    assert found.rewrite_tokens >= messages_tokens * 0.8
    assert found.rewrite_tokens <= messages_tokens * 1.3


def test_tools_come_before_the_system_prompt_for_anthropic() -> None:
    api = "anthropic-messages"
    history = [*_history(api, 2), _user("next", 100)]
    tools = copy.deepcopy(TOOLS)
    tools[1]["parameters"] = {"type": "object", "properties": {"cmd": {"type": "string"}}}
    before = _body(api, history)
    after = _body(api, history, system="Another prompt", tools=tools)
    found = cache_diff(before, after)
    assert found is not None
    assert found.cause == "tools"
    assert found.path == "tools[1].input_schema.properties.cmd"
    # A changed tool invalidates more than a changed system prompt.
    system_only = cache_diff(before, _body(api, history, system="Another prompt"))
    assert system_only is not None
    assert found.rewrite_tokens > system_only.rewrite_tokens


def test_rewritten_history_and_compaction() -> None:
    api = "anthropic-messages"
    history = _history(api, 6)
    before = _body(api, [*history, _user("next", 100)])
    edited = copy.deepcopy(history)
    edited[7]["content"][0]["text"] = "a rewritten answer"
    found = cache_diff(before, _body(api, [*edited, _user("next", 100)]))
    assert found is not None
    assert (found.cause, found.path) == ("history_rewritten", "messages[7].content[0].text")
    # Fewer tokens to write again the later the break.
    early = copy.deepcopy(history)
    early[1]["content"][0]["text"] = "an early rewrite"
    early_found = cache_diff(before, _body(api, [*early, _user("next", 100)]))
    assert early_found is not None
    assert early_found.rewrite_tokens > found.rewrite_tokens

    summary = {
        "role": "compactionSummary",
        "summary": "The user asked six questions.",
        "tokensBefore": 5000,
        "timestamp": 50,
    }
    compacted = cache_diff(before, _body(api, [summary, *history[10:], _user("next", 100)]))
    assert compacted is not None
    assert compacted.cause == "compaction"
    assert compacted.path.startswith("messages[0]")


def test_moving_only_the_breakpoint_is_reported_as_such() -> None:
    api = "anthropic-messages"
    body = _body(api, [*_history(api, 2), _user("next", 100)]).to_dict()
    marked = [
        block
        for message in body["messages"]
        for block in message["content"]
        if isinstance(block, dict) and "cache_control" in block
    ]
    assert marked, "pi-ai marks the last user message"
    moved = copy.deepcopy(body)
    for message in moved["messages"]:
        for block in message["content"]:
            block.pop("cache_control", None)
    moved["messages"][0]["content"][0]["cache_control"] = {"type": "ephemeral"}
    found = cache_diff(body, moved)
    assert found is not None
    assert found.cause == "breakpoint_moved"
    assert found.path == "messages[0].content[0].cache_control"
    # A moved breakpoint with a real change: the real change is named.
    moved["system"][0]["text"] = "changed"
    changed = cache_diff(body, moved)
    assert changed is not None
    assert changed.cause == "system_prompt"


def test_openai_responses_order_and_model_change() -> None:
    api = "openai-responses"
    history = [*_history(api, 2), _user("next", 100)]
    before = _body(api, history)
    after = _body(api, history, system="Other instructions")
    found = cache_diff(before, after)
    assert found is not None
    assert found.cause == "system_prompt"
    assert found.path.startswith(("instructions", "input[0]"))
    other_model = before.to_dict()
    other_model["model"] = "gpt-5-mini"
    model_break = cache_diff(before, other_model)
    assert model_break is not None
    assert (model_break.cause, model_break.path) == ("model", "model")


def test_options_outside_the_prefix_are_not_compared() -> None:
    api = "anthropic-messages"
    body = _body(api, [*_history(api, 1), _user("next", 100)]).to_dict()
    other = {**body, "max_tokens": 1, "temperature": 0.2, "stream": False}
    assert cache_diff(body, other) is None


def test_bad_bodies_raise_a_typed_error() -> None:
    good = {"messages": []}
    for bad in ("[]", "{", b"\xff", '{"messages": [}'):
        with pytest.raises(RequestBodyError) as info:
            cache_diff(bad, good)
        assert isinstance(info.value, ClawctxError)
        assert isinstance(info.value, ValueError)
        assert "previous" in str(info.value)
        with pytest.raises(RequestBodyError, match="next"):
            cache_diff(good, bad)
    with pytest.raises(TypeError):
        cache_diff(1, good)
    with pytest.raises(ValueError, match="estimator"):
        cache_diff(good, good, estimator="fast")  # type: ignore[arg-type]


def test_lone_surrogates_in_a_dict_compare_as_their_escape() -> None:
    a = {"messages": [{"role": "user", "content": "x\udc80"}]}
    b = {"messages": [{"role": "user", "content": "x\udc81"}]}
    found = cache_diff(a, b)
    assert found is not None
    assert found.path == "messages[0].content"
    assert cache_diff(a, copy.deepcopy(a)) is None


def test_the_exact_estimator_and_the_causes_literal() -> None:
    a = {"system": "s " * 300, "messages": []}
    b = {"system": "t " * 300, "messages": []}
    exact = cache_diff(a, b, estimator="exact")
    calibrated = cache_diff(a, b)
    assert exact is not None and calibrated is not None
    # From the first differing byte (after the opening quote) on, then the messages.
    rest = json.dumps("t " * 300)[1:]
    assert exact.rewrite_tokens == clawctx.count_tokens(rest) + clawctx.count_tokens("[]")
    assert 0.8 * exact.rewrite_tokens <= calibrated.rewrite_tokens <= 2 * exact.rewrite_tokens
    assert set(BREAK_CAUSES) == {
        "model",
        "tools",
        "system_prompt",
        "history_rewritten",
        "compaction",
        "breakpoint_moved",
    }
    assert clawctx.cache_diff is cache_diff


# The chain `cache_report` uses (`_core._CacheDiffChain`): each body compared with the one
# pushed before it, reading structurally only what the new body adds. It must name the same
# break as the pairwise walk for every pair, whatever the bodies share.

_EDITS = st.sampled_from(
    [
        "append",
        "marker",
        "system",
        "rewrite",
        "drop_first",
        "number",
        "number",
        "byte",
        "space",
        "cut",
    ]
)


def _mutated_body(base: bytes, edit: str, data: st.DataObject) -> bytes:
    body = bytearray(base)
    at = data.draw(st.integers(0, max(len(body) - 1, 0)))
    if edit == "byte":
        byte = ord(data.draw(st.sampled_from(list('0123456789az",:{}[] \\'))))
        # A cut before may have left nothing to overwrite; the byte is then the whole body.
        if body:
            body[at] = byte
        else:
            body.append(byte)
    elif edit == "space":
        body[at:at] = b" " * data.draw(st.integers(1, 3))
    elif edit == "cut":
        del body[at:]
    elif edit == "number":
        # A leading number that ends exactly where two bodies part (`1`, then `11`, ...): the
        # byte after it decides its end, so it must not be taken from the previous body.
        digits = data.draw(st.integers(1, 4))
        body = bytearray(b'{"n":' + b"1" * digits + b"," + base[base.index(b"{") + 1 :])
    return bytes(body)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(list(MODELS)), st.lists(_EDITS, min_size=2, max_size=8), st.data())
def test_the_chain_names_what_the_pairwise_walk_names(
    api: str, edits: list[str], data: st.DataObject
) -> None:
    from clawctx._core import _cache_diff, _CacheDiffChain

    history = _history(api, 3)
    system = "You are a helpful agent."
    bodies: list[bytes] = []
    for n, edit in enumerate(edits):
        if edit == "append":
            history = [*history, _user(f"more {n}", 200 + n), _assistant("ok", api, 300 + n)]
        elif edit == "system":
            system += " Be brief."
        elif edit == "rewrite":
            history = [_user("changed", 1), *history[1:]]
        elif edit == "drop_first":
            history = history[2:] or _history(api, 1)
        body = _body(api, [*history, _user(f"turn {n}", 400 + n)], system).to_json()
        if edit == "number":
            body = _mutated_body(body, edit, data)
        elif edit in ("byte", "space", "cut") or (edit == "marker" and bodies):
            body = _mutated_body(bodies[-1] if bodies else body, edit, data)
        bodies.append(body)
    chain = _CacheDiffChain()
    previous: bytes | None = None
    for body in bodies:
        try:
            # A first body is only laid out: an error iff it is not a JSON object.
            expected: object = (
                _cache_diff(body, body) if previous is None else _cache_diff(previous, body)
            )
        except ValueError:
            expected = ValueError
        try:
            got: object = chain.push(body)
        except ValueError:
            got = ValueError
            previous = None
        else:
            previous = body
        if expected is ValueError and got is not ValueError:
            # The previous body was the bad one; the chain refused it already and starts over.
            assert got is None
            continue
        assert got == expected
