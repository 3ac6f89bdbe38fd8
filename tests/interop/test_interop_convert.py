"""Converters between clawctx transcripts and seven foreign history shapes (issue 16 §2).

Property per format: a history generated in pi's shape, written to the format, reads back to
the same messages for everything the format can hold (roles, text, images, tool calls with
ids, names and arguments, results and their error flag, thinking with its signature), and
writing what was read gives the same foreign history again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clawctx.history import Transcript, repair_tool_pairing, sanitize_tool_use_result_pairing
from clawctx.interop import _anthropic_messages as anthropic_messages
from clawctx.interop import _gemini_contents as gemini_contents
from clawctx.interop import _langchain_messages as langchain_messages
from clawctx.interop import _openai_chat as openai_chat
from clawctx.interop import _openai_responses as openai_responses
from clawctx.interop import _pydantic_ai_messages as pydantic_ai_messages
from clawctx.interop import (
    apply,
    from_anthropic,
    from_gemini,
    from_openai_chat,
    read,
    to_anthropic,
    to_gemini,
    to_openai_chat,
)

_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=4, max_size=8)
_args = st.dictionaries(
    st.sampled_from(["path", "q", "n"]), st.one_of(_text, st.integers(0, 9)), max_size=2
)
_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Alternating user / assistant turns, every call answered right after its turn."""
    out: list[dict[str, Any]] = []
    clock = 1_700_000_000_000
    used: set[str] = set()
    for _ in range(draw(st.integers(1, 4))):
        clock += 1000
        if draw(st.booleans()):
            content: Any = [
                {"type": "text", "text": draw(_text)},
                {"type": "image", "data": _PNG, "mimeType": "image/png"},
            ]
        else:
            content = draw(_text)
        out.append({"role": "user", "content": content, "timestamp": clock})
        blocks: list[dict[str, Any]] = []
        if draw(st.booleans()):
            blocks.append(
                {"type": "thinking", "thinking": draw(_text), "thinkingSignature": draw(_ids)}
            )
        blocks.append({"type": "text", "text": draw(_text)})
        calls = []
        for _ in range(draw(st.integers(0, 2))):
            call_id = draw(_ids.filter(lambda i: i not in used))
            used.add(call_id)
            calls.append((call_id, draw(st.sampled_from(["read", "exec"]))))
            blocks.append(
                {"type": "toolCall", "id": call_id, "name": calls[-1][1], "arguments": draw(_args)}
            )
        out.append({"role": "assistant", "content": blocks, "timestamp": clock + 1})
        for call_id, name in calls:
            out.append(
                {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": name,
                    "content": [{"type": "text", "text": draw(_text)}],
                    "isError": draw(st.booleans()),
                    "timestamp": clock + 2,
                }
            )
    return out


def _project(
    messages: Any, *, thinking: bool, errors: bool, images: bool, error_text: bool = True
) -> list[Any]:
    """The fields a format holds, in a comparable form."""
    out: list[Any] = []
    for m in messages:
        role = m["role"]
        content = m["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if role == "toolResult":
            error = bool(m.get("isError")) and errors
            text = "".join(b["text"] for b in blocks if b["type"] == "text")
            out.append(
                (
                    "result",
                    m["toolCallId"],
                    m["toolName"],
                    text if (error_text or not error) else None,
                    error,
                )
            )
            continue
        items: list[Any] = []
        for b in blocks:
            if b["type"] == "text":
                items.append(("text", b["text"]))
            elif b["type"] == "image" and images:
                items.append(("image", b.get("data"), b.get("mimeType")))
            elif b["type"] == "thinking" and thinking:
                items.append(("thinking", b["thinking"], b.get("thinkingSignature")))
            elif b["type"] == "toolCall":
                items.append(
                    ("call", b["id"], b["name"], json.dumps(b["arguments"], sort_keys=True))
                )
        # A user text given as a string or as one text block is the same message.
        out.append((role, tuple(i for i in items if i != ("text", "") or role != "assistant")))
    return out


def _anthropic_write(pi: Any) -> Any:
    return anthropic_messages.write(pi)[1]


def _anthropic_read(native: Any) -> Any:
    return anthropic_messages.read(native)[0]


def _gemini_write(pi: Any) -> Any:
    return gemini_contents.write(pi)[1]


FORMATS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any], dict[str, bool]]] = {
    "openai_chat": (
        openai_chat.write,
        lambda x: openai_chat.read(x)[0],
        {"thinking": False, "errors": False, "images": True},
    ),
    "openai_responses": (
        openai_responses.write,
        lambda x: openai_responses.read(x)[0],
        {"thinking": False, "errors": False, "images": True},
    ),
    "anthropic": (
        _anthropic_write,
        _anthropic_read,
        {"thinking": True, "errors": True, "images": True},
    ),
    "gemini": (
        _gemini_write,
        lambda x: gemini_contents.read(x)[0],
        {"thinking": True, "errors": True, "images": True},
    ),
    "langchain": (
        langchain_messages.write,
        lambda x: langchain_messages.read(x)[0],
        {"thinking": True, "errors": True, "images": True},
    ),
    "pydantic_ai": (
        pydantic_ai_messages.write,
        lambda x: pydantic_ai_messages.read(x)[0],
        {"thinking": True, "errors": True, "images": True},
    ),
}


@pytest.mark.parametrize("name", sorted(FORMATS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=histories())
def test_round_trip_keeps_what_the_format_holds(name: str, history: list[dict[str, Any]]) -> None:
    write, read_back, holds = FORMATS[name]
    native = write(history)
    again = read_back(native)
    assert _project(again, **holds) == _project(history, **holds)
    assert write(again) == native
    # The Rust passes read what the converter produced.
    assert repair_tool_pairing(Transcript(again)).messages == Transcript(again)


def test_openai_chat_messages_map_one_to_one() -> None:
    messages = [
        {"role": "system", "content": "be brief"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "see"},
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64," + _PNG, "detail": "low"},
                },
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "a"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "text of a"},
        {"role": "assistant", "content": "done"},
    ]
    transcript = from_openai_chat(messages)
    assert transcript.roles() == ["system", "user", "assistant", "toolResult", "assistant"]
    assert transcript[1]["content"][1] == {
        "type": "image",
        "data": _PNG,
        "mimeType": "image/png",
        "detail": "low",
    }
    assert transcript[3]["toolName"] == "read"
    # The arguments text is given back as it was (spacing included).
    assert to_openai_chat(transcript) == messages


def test_anthropic_signatures_redacted_thinking_and_errors_survive() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "plan", "signature": "sig-1"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "tool_use", "id": "toolu_1", "name": "exec", "input": {"cmd": "ls"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "denied",
                    "is_error": True,
                },
                {"type": "text", "text": "why?"},
            ],
        },
    ]
    transcript = from_anthropic(messages, system="sys")
    assert transcript.roles() == ["system", "user", "assistant", "toolResult", "user"]
    assert transcript[2]["content"][1] == {
        "type": "thinking",
        "thinking": "",
        "thinkingSignature": "opaque",
        "redacted": True,
    }
    assert transcript[3]["isError"] is True
    assert to_anthropic(transcript) == ("sys", messages)


def test_gemini_calls_without_ids_pair_by_name_and_keep_no_id() -> None:
    contents = [
        {"role": "user", "parts": [{"text": "weather?"}]},
        {
            "role": "model",
            "parts": [
                {
                    "function_call": {"name": "weather", "args": {"city": "Oslo"}},
                    "thought_signature": "c2ln",
                }
            ],
        },
        {
            "role": "user",
            "parts": [{"function_response": {"name": "weather", "response": {"output": "cold"}}}],
        },
    ]
    transcript = from_gemini(contents)
    call = transcript[1]["content"][0]
    assert transcript[2]["toolCallId"] == call["id"]
    assert call["thoughtSignature"] == "c2ln"
    assert to_gemini(transcript) == (None, contents)


def test_gemini_content_objects_are_read() -> None:
    from google.genai import types

    contents = [
        types.Content(role="user", parts=[types.Part(text="hi")]),
        types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(id="c1", name="f", args={}))],
        ),
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id="c1", name="f", response={"error": "boom"}
                    )
                )
            ],
        ),
    ]
    converted = read(contents)
    assert converted.format == "gemini"
    assert converted.transcript[2]["isError"] is True
    restored = converted.restore(converted.transcript)
    assert all(isinstance(c, types.Content) for c in restored)
    assert restored == contents


def test_langchain_and_pydantic_ai_objects_are_detected() -> None:
    from langchain_core.messages import AIMessage, HumanMessage
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

    assert read([HumanMessage("hi"), AIMessage("yo")]).format == "langchain"
    assert (
        read(
            [ModelRequest(parts=[UserPromptPart("hi")]), ModelResponse(parts=[TextPart("yo")])]
        ).format
        == "pydantic_ai"
    )


@pytest.mark.parametrize(
    ("history", "error", "match"),
    [
        (
            [
                {"role": "user", "content": "a"},
                {"role": "toolResult", "toolCallId": "x", "content": []},
                {"role": "tool", "tool_call_id": "x", "content": "c"},
            ],
            ValueError,
            "element 2",
        ),
        ([{"role": "user", "content": "a"}, {"who": "me"}], ValueError, "element 1 .*not readable"),
        ([{"role": "user", "content": "a"}, object()], TypeError, "element 1 .*LangChain"),
        ("just text", TypeError, "not str"),
        ({"contents": []}, TypeError, "Anthropic request"),
        (
            [{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}],
            ValueError,
            "element 0",
        ),
    ],
)
def test_a_shape_it_cannot_read_is_refused(
    history: Any, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        read(history)


def test_a_field_it_cannot_carry_is_refused_not_dropped() -> None:
    with pytest.raises(ValueError, match="element 0: an assistant message has field 'audio'"):
        from_openai_chat([{"role": "assistant", "content": "x", "audio": {"id": "a1"}}])
    # Empty fields, as SDK model dumps have them, are fine.
    assert from_openai_chat([{"role": "assistant", "content": "x", "audio": None, "refusal": None}])


def test_apply_runs_a_transcript_operation_and_answers_in_the_callers_shape() -> None:
    history = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "user", "content": "still there?"},
    ]
    repaired = apply(sanitize_tool_use_result_pairing, history)
    assert [m["role"] for m in repaired] == ["user", "assistant", "tool", "user"]
    assert repaired[2]["tool_call_id"] == "c1"
