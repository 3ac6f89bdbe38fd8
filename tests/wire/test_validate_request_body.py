"""``validate_request_body``: each provider rule, broken alone, gives exactly its violation;
valid bodies give none; the recorded pi-ai bodies that break a rule are listed (those are
upstream's invalid outputs, see ``upstream_invalid_payloads.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clawctx.wire import VALIDATED_APIS, BodyViolation, validate_request_body

SHARED = Path(__file__).resolve().parents[3] / "shared" / "conformance-payload"
UPSTREAM_INVALID = Path(__file__).resolve().parent / "upstream_invalid_payloads.json"

Body = dict[str, Any]


def rules(body: Body, api: str) -> list[tuple[str, str]]:
    return [(v.path, v.rule) for v in validate_request_body(body, api)]


# --- Anthropic ---------------------------------------------------------------------------------


def a_use(tid: str, name: str = "read") -> Body:
    return {"type": "tool_use", "id": tid, "name": name, "input": {}}


def a_res(tid: str) -> Body:
    return {"type": "tool_result", "tool_use_id": tid, "content": "ok"}


def text(t: str) -> Body:
    return {"type": "text", "text": t}


def anthropic(*messages: Body) -> Body:
    return {"model": "claude", "max_tokens": 10, "messages": list(messages)}


def user(*content: Any) -> Body:
    return {"role": "user", "content": list(content)}


def asst(*content: Any) -> Body:
    return {"role": "assistant", "content": list(content)}


ANTHROPIC_VALID = anthropic(
    user(text("hi")),
    asst(text("reading"), a_use("toolu_1"), a_use("toolu_2")),
    user(a_res("toolu_2"), a_res("toolu_1"), text("go on")),
    asst(text("done")),
)


def test_anthropic_valid_body_has_no_violation() -> None:
    assert validate_request_body(ANTHROPIC_VALID, "anthropic-messages") == []
    # A final assistant message may be empty (a prefill).
    assert rules(anthropic(user(text("hi")), asst()), "anthropic-messages") == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            anthropic(
                user(text("q")),
                asst(a_use("t1")),
                user(a_res("t1")),
                asst(a_use("t1")),
                user(a_res("t1")),
            ),
            [("messages[3].content[0]", "duplicate-tool-use-id")],
        ),
        (
            anthropic(user(text("q")), asst(a_use("a.b")), user(a_res("a.b"))),
            [("messages[1].content[0]", "invalid-tool-use-id")],
        ),
        (
            anthropic(user(text("q")), asst(a_use("t1")), user(text("next"))),
            [("messages[1].content[0]", "tool-use-without-result")],
        ),
        (
            anthropic(user(text("q")), asst(a_use("t1"))),
            [("messages[1].content[0]", "tool-use-without-result")],
        ),
        (
            anthropic(user(text("q")), asst(a_use("t1")), user(text("x"), a_res("t1"))),
            [("messages[2].content[1]", "tool-result-not-first")],
        ),
        (
            anthropic(user(text("q")), asst(text("a")), user(a_res("t9"))),
            [("messages[2].content[0]", "tool-result-without-tool-use")],
        ),
        (
            anthropic(user(text("q")), asst(a_use("t1")), user(a_res("t1"), a_res("t1"))),
            [("messages[2].content[1]", "duplicate-tool-result")],
        ),
        (anthropic(asst(text("a")), user(text("q"))), [("messages[0]", "first-message-not-user")]),
        (
            anthropic(user(text("q"), text("  ")), asst(text("a"))),
            [("messages[0].content[1]", "empty-text-block")],
        ),
        (anthropic(user(text("q")), asst(), user(text("r"))), [("messages[1]", "empty-content")]),
        (
            anthropic(user(text("q")), {"role": "system", "content": "s"}),
            [("messages[1]", "role-not-allowed")],
        ),
    ],
)
def test_anthropic_each_rule(body: Body, expected: list[tuple[str, str]]) -> None:
    assert rules(body, "anthropic-messages") == expected


# --- OpenAI Chat Completions -------------------------------------------------------------------


def c_asst(*ids: str) -> Body:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "read", "arguments": "{}"}}
            for i in ids
        ],
    }


def c_tool(tid: str) -> Body:
    return {"role": "tool", "tool_call_id": tid, "content": "ok"}


def c_user(t: str = "q") -> Body:
    return {"role": "user", "content": t}


def chat(*messages: Body) -> Body:
    return {"model": "gpt", "messages": [{"role": "system", "content": "s"}, *messages]}


def test_openai_chat_valid_and_each_rule() -> None:
    api = "openai-completions"
    assert rules(chat(c_user(), c_asst("a", "b"), c_tool("b"), c_tool("a"), c_user()), api) == []
    assert rules(chat(c_user(), c_asst("a", "b"), c_tool("a"), c_user()), api) == [
        ("messages[2].tool_calls[1]", "tool-call-without-result")
    ]
    assert rules(chat(c_user(), c_asst("a"), c_user(), c_tool("a")), api) == [
        ("messages[2].tool_calls[0]", "tool-call-without-result"),
        ("messages[4]", "tool-result-without-call"),
    ]
    assert rules(chat(c_user(), c_tool("z")), api) == [("messages[2]", "tool-result-without-call")]
    assert rules(chat(c_user(), c_asst("a"), c_tool("a"), c_tool("a")), api) == [
        ("messages[4]", "duplicate-tool-result")
    ]
    assert rules(chat(c_user(), c_asst("a"), c_tool("a"), c_asst("a"), c_tool("a")), api) == [
        ("messages[4].tool_calls[0]", "duplicate-tool-call-id")
    ]


# --- Mistral -----------------------------------------------------------------------------------


def m_asst(*ids: str) -> Body:
    return {
        "role": "assistant",
        "content": "",
        "toolCalls": [
            {"id": i, "type": "function", "function": {"name": "read", "arguments": "{}"}}
            for i in ids
        ],
    }


def m_tool(tid: str) -> Body:
    return {"role": "tool", "toolCallId": tid, "name": "read", "content": "ok"}


def test_mistral_valid_and_each_rule() -> None:
    api = "mistral-conversations"
    ok = {"messages": [c_user(), m_asst("abcDEF123"), m_tool("abcDEF123"), c_user()]}
    assert rules(ok, api) == []
    long_id = {"messages": [c_user(), m_asst("call_12345"), m_tool("call_12345")]}
    assert rules(long_id, api) == [("messages[1].toolCalls[0]", "invalid-tool-call-id")]
    missing = {"messages": [c_user(), m_asst("abcDEF123", "xyzXYZ789"), m_tool("xyzXYZ789")]}
    assert rules(missing, api) == [("messages[1].toolCalls[0]", "tool-call-without-result")]
    orphan = {"messages": [c_user(), m_tool("abcDEF123")]}
    assert rules(orphan, api) == [("messages[1]", "tool-result-without-call")]
    twice = {"messages": [c_user(), m_asst("abcDEF123", "abcDEF123"), m_tool("abcDEF123")]}
    assert rules(twice, api) == [("messages[1].toolCalls[1]", "duplicate-tool-call-id")]
    # The raw HTTP spelling (snake_case) is read too.
    snake = {"messages": [c_user(), c_asst("abcDEF123"), c_tool("abcDEF123")]}
    assert rules(snake, api) == []


# --- OpenAI Responses --------------------------------------------------------------------------


def fc(cid: str, iid: str | None = None) -> Body:
    item: Body = {"type": "function_call", "call_id": cid, "name": "read", "arguments": "{}"}
    if iid is not None:
        item["id"] = iid
    return item


def fco(cid: str) -> Body:
    return {"type": "function_call_output", "call_id": cid, "output": "ok"}


R_USER = {"role": "user", "content": [{"type": "input_text", "text": "q"}]}


@pytest.mark.parametrize(
    "api", ["openai-responses", "azure-openai-responses", "openai-codex-responses"]
)
def test_responses_valid_and_each_rule(api: str) -> None:
    def check(*items: Body) -> list[tuple[str, str]]:
        return rules({"model": "o", "input": [R_USER, *items]}, api)

    assert check(fc("c1", "fc_1"), fc("c2", "fc_2"), fco("c2"), fco("c1")) == []
    assert check(fc("c1")) == [("input[1]", "function-call-without-output")]
    assert check(fc("c1"), fco("c1"), fco("c1")) == [("input[3]", "duplicate-function-call-output")]
    assert check(fco("c1"), fc("c1"), fco("c1")) == [("input[1]", "output-without-call")]
    assert check(fc("c1"), fco("c1"), fc("c1")) == [("input[3]", "duplicate-call-id")]
    assert check(fc("c1", "fc_1"), fc("c2", "fc_1"), fco("c1"), fco("c2")) == [
        ("input[2]", "duplicate-item-id")
    ]


# --- Gemini ------------------------------------------------------------------------------------


def g_call(*names: str) -> Body:
    return {"role": "model", "parts": [{"functionCall": {"name": n, "args": {}}} for n in names]}


def g_resp(*names: str) -> Body:
    return {
        "role": "user",
        "parts": [{"functionResponse": {"name": n, "response": {"output": "ok"}}} for n in names],
    }


G_USER = {"role": "user", "parts": [{"text": "q"}]}


@pytest.mark.parametrize("api", ["google-generative-ai", "google-vertex", "google-gemini-cli"])
def test_gemini_valid_and_each_rule(api: str) -> None:
    nested = api == "google-gemini-cli"
    prefix = "request.contents" if nested else "contents"

    def check(*contents: Body) -> list[tuple[str, str]]:
        body: Body = {"contents": list(contents)}
        return rules({"project": "p", "request": body} if nested else body, api)

    assert check(G_USER, g_call("a", "b"), g_resp("b", "a"), {"role": "model", "parts": []}) == []
    assert check(g_call("a"), g_resp("a")) == [(f"{prefix}[0]", "first-content-not-user")]
    assert check(G_USER, g_call("a", "b"), g_resp("a")) == [
        (f"{prefix}[1].parts[0]", "function-response-count-mismatch")
    ]
    assert check(G_USER, g_call("a"), G_USER) == [
        (f"{prefix}[1].parts[0]", "function-call-without-response")
    ]
    assert check(G_USER, g_call("a"), g_resp("b")) == [
        (f"{prefix}[1].parts[0]", "function-response-name-mismatch")
    ]
    assert check(G_USER, g_resp("a")) == [
        (f"{prefix}[1].parts[0]", "function-response-without-call")
    ]
    text_turn = {"role": "model", "parts": [{"text": "thinking"}]}
    assert check(G_USER, text_turn, g_call("a"), g_resp("a")) == [
        (f"{prefix}[2].parts[0]", "function-call-turn-misplaced")
    ]


# --- Bedrock Converse --------------------------------------------------------------------------


def b_msg(role: str, *content: Body) -> Body:
    return {"role": role, "content": list(content)}


def b_use(tid: str) -> Body:
    return {"toolUse": {"toolUseId": tid, "name": "read", "input": {}}}


def b_res(tid: str) -> Body:
    return {"toolResult": {"toolUseId": tid, "content": [{"text": "ok"}], "status": "success"}}


def test_bedrock_valid_and_each_rule() -> None:
    api = "bedrock-converse-stream"
    q = b_msg("user", {"text": "q"})

    def check(*messages: Body) -> list[tuple[str, str]]:
        return rules({"modelId": "m", "messages": list(messages)}, api)

    assert (
        check(
            q, b_msg("assistant", b_use("t1"), b_use("t2")), b_msg("user", b_res("t2"), b_res("t1"))
        )
        == []
    )
    assert check(b_msg("assistant", {"text": "a"}), q) == [
        ("messages[0]", "first-message-not-user")
    ]
    assert check(q, q) == [("messages[1]", "roles-not-alternating")]
    assert check(q, b_msg("assistant", b_use("t1")), b_msg("user", {"text": "x"})) == [
        ("messages[1].content[0]", "tool-use-without-result")
    ]
    assert check(q, b_msg("assistant", {"text": "a"}), b_msg("user", b_res("t9"))) == [
        ("messages[2].content[0]", "tool-result-without-tool-use")
    ]
    assert check(q, b_msg("assistant", b_use("a b")), b_msg("user", b_res("a b"))) == [
        ("messages[1].content[0]", "invalid-tool-use-id")
    ]
    assert check(q, b_msg("assistant", b_use("t" * 65)), b_msg("user", b_res("t" * 65))) == [
        ("messages[1].content[0]", "invalid-tool-use-id")
    ]
    twice = (b_msg("assistant", b_use("t1")), b_msg("user", b_res("t1")))
    assert check(q, *twice, *twice) == [("messages[3].content[0]", "duplicate-tool-use-id")]
    assert check(b_msg("user", {"text": " "})) == [("messages[0].content[0]", "empty-text-block")]


# --- API names and the recorded bodies ---------------------------------------------------------


def test_unknown_api_lists_known_ones() -> None:
    with pytest.raises(ValueError, match="anthropic-messages") as err:
        validate_request_body({"messages": []}, "anthropic-msgs")
    assert "bedrock-converse-stream" in str(err.value)


def test_violation_is_frozen() -> None:
    v = BodyViolation("messages[0]", "r", "d")
    with pytest.raises(AttributeError):
        v.rule = "x"  # type: ignore[misc]


def _recorded() -> list[tuple[str, str, Body]]:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} not found: the recorded payloads live beside the repository")
    out = []
    for api in VALIDATED_APIS:
        path = SHARED / f"{api}.jsonl"
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            payload = case["expected"].get("payload")
            if isinstance(payload, dict):
                out.append((api, case["id"], payload))
    return out


def test_recorded_bodies_flagged_only_where_upstream_is_invalid() -> None:
    """Most recorded pi-ai bodies are valid; the rest are upstream's known invalid outputs
    (orphaned or split tool results, repeated ids, repeated ``msg_N`` item ids). The list is
    pinned so that a validator change that flags a valid body, or misses an invalid one,
    fails here."""
    expected = json.loads(UPSTREAM_INVALID.read_text(encoding="utf-8"))
    cases = _recorded()
    found = {
        case_id: sorted({v.rule for v in vs})
        for api, case_id, body in cases
        if (vs := validate_request_body(body, api))
    }
    assert found == expected
    assert len(found) * 5 < len(cases)  # "mostly valid": under a fifth flagged
