"""Blocks pi has no type for (issue 16 §2/§3): documents, files, audio, refusals and server-tool
turns are carried through a transcript in place, written back exactly, mapped across formats
where the target has an equivalent and refused loudly where it has none, and charged by
``fit_to_budget``."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

import clawctx.history as h
from clawctx.history import Transcript
from clawctx.interop import _openai_chat as openai_chat
from clawctx.interop import _pi_messages as pi_messages
from clawctx.interop import (
    fit_to_budget,
    from_anthropic,
    from_gemini,
    from_langchain,
    from_openai_chat,
    from_openai_responses,
    from_pydantic_ai,
    read,
    to_anthropic,
    to_gemini,
    to_langchain,
    to_openai_chat,
    to_openai_responses,
    to_pydantic_ai,
)
from clawctx.wire import validate_request_body

_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=4, max_size=8)
_b64 = st.binary(min_size=1, max_size=24).map(lambda b: base64.b64encode(b).decode("ascii"))
PDF = base64.b64encode(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF").decode("ascii")
WAV = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVEfmt ").decode("ascii")


def _rust_passes() -> dict[str, Callable[[Transcript], Transcript]]:
    """Transcript operations that must keep a block type they do not know where it is."""
    return {
        "repair_tool_pairing": lambda t: h.repair_tool_pairing(t).messages,
        "sanitize_tool_use_result_pairing": h.sanitize_tool_use_result_pairing,
        "repair_tool_call_inputs": lambda t: h.repair_tool_call_inputs(t).messages,
        "sanitize_tool_call_ids": h.sanitize_tool_call_ids,
        "dedupe_tool_call_ids": h.dedupe_tool_call_ids,
        "strip_thought_signatures": h.strip_thought_signatures,
        "sanitize_message_blocks full": lambda t: h.sanitize_message_blocks(
            t, sanitize_mode="full"
        ),
        "sanitize_images": h.sanitize_images,
        "drop_thinking_blocks": h.drop_thinking_blocks,
        "strip_tool_result_details": h.strip_tool_result_details,
        "drop_duplicate_tool_results": h.drop_duplicate_tool_results,
        "validate_anthropic_turns": h.validate_anthropic_turns,
        "validate_gemini_turns": h.validate_gemini_turns,
        "strip_dangling_tool_calls": h.strip_dangling_tool_calls,
        "downgrade_openai_reasoning": h.downgrade_openai_reasoning,
        "limit_history_turns": lambda t: h.limit_history_turns(t, 50),
        "prune_context": lambda t: h.prune_context(
            t, {"mode": "cache-ttl"}, context_window_tokens=1_000_000
        ),
        "convert_to_llm": h.convert_to_llm,
    }


def _carried(transcript: Transcript) -> list[tuple[str, Any]]:
    """(role of its message, block) of every carried block, in order (passes may drop other
    things, an empty text block or a system message, so indexes move)."""
    return [
        (m["role"], b)
        for m in transcript
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if b.get("type") == "foreign"
    ]


def _assert_passes_keep(transcript: Transcript) -> None:
    before = _carried(transcript)
    for name, operation in _rust_passes().items():
        assert _carried(operation(transcript)) == before, name
    for provider in ("anthropic", "openai", "google", "ollama"):
        # What is sent (the request guard's output) is valid and keeps every carried block; a
        # generated history may need it (a blank first user turn leaves an assistant first).
        sent, _ = h.guard_request(transcript, provider=provider)
        assert _carried(sent) == before, provider
        assert h.validate_for_provider(sent, provider=provider) == [], provider


# ---- Anthropic ------------------------------------------------------------------------------


def _validate_anthropic(messages: list[dict[str, Any]]) -> None:
    from anthropic.types.beta import BetaMessageParam

    TypeAdapter(list[BetaMessageParam]).validate_python(messages)


@st.composite
def _document(draw: st.DrawFn) -> dict[str, Any]:
    source = draw(
        st.sampled_from(
            [
                {"type": "base64", "media_type": "application/pdf", "data": PDF},
                {"type": "text", "media_type": "text/plain", "data": "notes"},
                {"type": "url", "url": "https://example.com/a.pdf"},
                {"type": "content", "content": [{"type": "text", "text": "chunk"}]},
            ]
        )
    )
    block: dict[str, Any] = {"type": "document", "source": source}
    if draw(st.booleans()):
        block["title"] = draw(_text)
    if draw(st.booleans()):
        block["context"] = draw(_text)
    if draw(st.booleans()):
        block["citations"] = {"enabled": True}
    if draw(st.booleans()):
        block["cache_control"] = {"type": "ephemeral"}
    return block


@st.composite
def _search_result(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "type": "search_result",
        "source": "https://example.com/" + draw(_ids),
        "title": draw(_text),
        "content": [{"type": "text", "text": draw(_text)}],
    }


@st.composite
def _server_turn(draw: st.DrawFn, n: int) -> list[dict[str, Any]]:
    """A server-tool call and its result, as one assistant message holds them."""
    call_id = f"srvtoolu_{n}_" + draw(_ids)
    tool = draw(st.sampled_from(["web_search", "code_execution", "mcp"]))
    if tool == "web_search":
        return [
            {"type": "server_tool_use", "id": call_id, "name": "web_search", "input": {"q": "x"}},
            {
                "type": "web_search_tool_result",
                "tool_use_id": call_id,
                "content": [
                    {
                        "type": "web_search_result",
                        "url": "https://example.com",
                        "title": draw(_text),
                        "encrypted_content": draw(_b64),
                    }
                ],
            },
        ]
    if tool == "code_execution":
        return [
            {
                "type": "server_tool_use",
                "id": call_id,
                "name": "code_execution",
                "input": {"code": "print(1)"},
            },
            {
                "type": "code_execution_tool_result",
                "tool_use_id": call_id,
                "content": {
                    "type": "code_execution_result",
                    "stdout": draw(_text),
                    "stderr": "",
                    "return_code": 0,
                    "content": [],
                },
            },
        ]
    return [
        {
            "type": "mcp_tool_use",
            "id": call_id,
            "name": "lookup",
            "server_name": "docs",
            "input": {"q": draw(_text)},
        },
        {
            "type": "mcp_tool_result",
            "tool_use_id": call_id,
            "is_error": draw(st.booleans()),
            "content": [{"type": "text", "text": draw(_text)}],
        },
    ]


@st.composite
def anthropic_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Native Anthropic turns with documents, search results and server-tool turns mixed in."""
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for n in range(draw(st.integers(1, 4))):
        user: list[dict[str, Any]] = list(pending)
        pending = []
        for _ in range(draw(st.integers(0, 2))):
            user.append(draw(st.one_of(_document(), _search_result())))
        user.append({"type": "text", "text": draw(_text)})
        if draw(st.booleans()):
            user.append({"type": "container_upload", "file_id": "file_" + draw(_ids)})
        out.append({"role": "user", "content": user})
        blocks: list[dict[str, Any]] = []
        if draw(st.booleans()):
            blocks += draw(_server_turn(n))
        blocks.append({"type": "text", "text": draw(_text)})
        if draw(st.booleans()):
            call_id = f"toolu_{n}_" + draw(_ids)
            blocks.append({"type": "tool_use", "id": call_id, "name": "read", "input": {}})
            inner = [draw(st.one_of(_document(), _search_result()))]
            pending.append({"type": "tool_result", "tool_use_id": call_id, "content": inner})
        out.append({"role": "assistant", "content": blocks})
    if pending:
        out.append({"role": "user", "content": pending})
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=anthropic_histories())
def test_anthropic_round_trip_carries_documents_and_server_tools(
    history: list[dict[str, Any]],
) -> None:
    _validate_anthropic(history)
    transcript = from_anthropic(history)
    written = to_anthropic(transcript)
    if validate_request_body({"messages": history}, "anthropic-messages") == []:
        assert written == (None, history)
    else:
        # A history Anthropic refuses (a user turn of one empty text block first, ...) comes
        # back repaired by the request guard, not as it was.
        assert validate_request_body({"messages": written[1]}, "anthropic-messages") == []
    _assert_passes_keep(transcript)
    # The pi shape (a plain list of dicts) with carried blocks is readable as such.
    assert all(pi_messages.claims(m) for m in transcript)


def test_anthropic_blocks_stay_in_place_and_in_order() -> None:
    history = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "read this"},
                {
                    "type": "document",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
                    "title": "spec",
                    "context": "from the team drive",
                    "citations": {"enabled": True},
                    "cache_control": {"type": "ephemeral"},
                },
                {"type": "text", "text": "and answer"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "searching"},
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
                {"type": "text", "text": "found it"},
            ],
        },
    ]
    transcript = from_anthropic(history)
    assert [b["type"] for b in transcript[0]["content"]] == ["text", "foreign", "text"]
    assert transcript[0]["content"][1] == {
        "type": "foreign",
        "format": "anthropic",
        "block": history[0]["content"][1],
    }
    assert [b["type"] for b in transcript[1]["content"]] == ["text", "foreign", "foreign", "text"]
    assert to_anthropic(transcript) == (None, history)


def test_anthropic_unknown_block_is_still_refused() -> None:
    with pytest.raises(ValueError, match="element 0"):
        from_anthropic([{"role": "user", "content": [{"type": "video", "source": {}}]}])


# ---- OpenAI Chat ----------------------------------------------------------------------------


def _validate_chat(messages: list[dict[str, Any]]) -> None:
    from openai.types.chat import ChatCompletionMessageParam

    TypeAdapter(list[ChatCompletionMessageParam]).validate_python(messages)


@st.composite
def _chat_part(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["pdf", "file_id", "audio", "text"]))
    if kind == "pdf":
        file: dict[str, Any] = {"file_data": "data:application/pdf;base64," + PDF}
        if draw(st.booleans()):
            file["filename"] = draw(_ids) + ".pdf"
        return {"type": "file", "file": file}
    if kind == "file_id":
        return {"type": "file", "file": {"file_id": "file-" + draw(_ids)}}
    if kind == "audio":
        audio_format = draw(st.sampled_from(["wav", "mp3"]))
        return {"type": "input_audio", "input_audio": {"data": draw(_b64), "format": audio_format}}
    return {"type": "text", "text": draw(_text)}


@st.composite
def chat_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": "be brief"}]
    for n in range(draw(st.integers(1, 4))):
        parts = draw(st.lists(_chat_part(), min_size=1, max_size=3))
        out.append({"role": "user", "content": parts})
        if draw(st.booleans()):
            content: Any = [{"type": "refusal", "refusal": draw(_text)}]
            if draw(st.booleans()):
                content.insert(0, {"type": "text", "text": draw(_text)})
            out.append({"role": "assistant", "content": content})
        else:
            call = {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": "read", "arguments": "{}"},
            }
            out.append({"role": "assistant", "content": draw(_text), "tool_calls": [call]})
            out.append({"role": "tool", "tool_call_id": f"call_{n}", "content": draw(_text)})
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=chat_histories())
def test_openai_chat_round_trip_carries_files_audio_and_refusals(
    history: list[dict[str, Any]],
) -> None:
    _validate_chat(history)
    transcript = from_openai_chat(history)
    assert to_openai_chat(transcript) == history
    _assert_passes_keep(transcript)


@pytest.mark.parametrize(
    ("part", "match"),
    [
        ({"type": "input_audio", "input_audio": {}}, "needs data and format"),
        ({"type": "file", "file": {"filename": "a.pdf"}}, "needs file.file_data or file_id"),
        (
            {"type": "file", "file": {"file_id": "f", "mystery": 1}},
            "has field 'mystery'",
        ),
    ],
)
def test_openai_chat_incomplete_parts_are_refused(part: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=f"element 0: .*{match}"):
        openai_chat.read([{"role": "user", "content": [part]}])


# ---- across formats -------------------------------------------------------------------------


def _anthropic_pdf(**extra: Any) -> dict[str, Any]:
    return {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
        **extra,
    }


def test_anthropic_pdf_document_is_a_chat_file_part_and_back() -> None:
    history = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "sum up"}, _anthropic_pdf(title="r.pdf")],
        }
    ]
    chat = to_openai_chat(from_anthropic(history))
    assert chat == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "sum up"},
                {
                    "type": "file",
                    "file": {
                        "file_data": "data:application/pdf;base64," + PDF,
                        "filename": "r.pdf",
                    },
                },
            ],
        }
    ]
    _validate_chat(chat)
    # And the Chat file part back to an Anthropic document.
    assert to_anthropic(from_openai_chat(chat)) == (None, history)


def test_text_document_goes_to_chat_as_a_text_file_and_comes_back_as_text() -> None:
    document = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "line one\nline two"},
    }
    chat = to_openai_chat(from_anthropic([{"role": "user", "content": [document]}]))
    encoded = base64.b64encode(b"line one\nline two").decode("ascii")
    assert chat[0]["content"] == [
        {"type": "file", "file": {"file_data": "data:text/plain;base64," + encoded}}
    ]
    assert to_anthropic(from_openai_chat(chat))[1][0]["content"] == [document]


def test_document_options_are_not_written_where_they_have_no_form_but_context_is_refused() -> None:
    cached = _anthropic_pdf(citations={"enabled": True}, cache_control={"type": "ephemeral"})
    chat = to_openai_chat(from_anthropic([{"role": "user", "content": [cached]}]))
    assert chat[0]["content"][0]["type"] == "file"
    with_context = _anthropic_pdf(context="read with care")
    with pytest.raises(ValueError, match=r"anthropic document block .*no OpenAI Chat equivalent"):
        to_openai_chat(from_anthropic([{"role": "user", "content": [with_context]}]))


@pytest.mark.parametrize(
    ("block", "match"),
    [
        (
            {"type": "document", "source": {"type": "url", "url": "https://x/a.pdf"}},
            "anthropic document",
        ),
        (
            {"type": "document", "source": {"type": "file", "file_id": "file_1"}},
            "anthropic document",
        ),
        (
            {"type": "search_result", "source": "s", "title": "t", "content": []},
            "anthropic search_result",
        ),
    ],
)
def test_anthropic_blocks_without_a_chat_form_are_refused(
    block: dict[str, Any], match: str
) -> None:
    with pytest.raises(ValueError, match=f"{match} block in a user message has no OpenAI Chat"):
        to_openai_chat(from_anthropic([{"role": "user", "content": [block]}]))


def test_server_tool_turn_has_no_chat_form() -> None:
    history = [
        {"role": "user", "content": "news?"},
        {
            "role": "assistant",
            "content": [
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            ],
        },
    ]
    with pytest.raises(ValueError, match="anthropic server_tool_use block in an assistant message"):
        to_openai_chat(from_anthropic(history))


def test_a_document_in_a_tool_result_has_no_chat_form() -> None:
    history = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "fetch", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [_anthropic_pdf()]}
            ],
        },
    ]
    with pytest.raises(ValueError, match="in a tool result has no OpenAI Chat equivalent"):
        to_openai_chat(from_anthropic(history))


def test_chat_audio_and_refusal_have_no_anthropic_form() -> None:
    audio = [
        {
            "role": "user",
            "content": [{"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}}],
        }
    ]
    with pytest.raises(ValueError, match=r"openai_chat input_audio block .*no Anthropic"):
        to_anthropic(from_openai_chat(audio))
    refusal = [
        {"role": "user", "content": "help"},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "I can't"}]},
    ]
    with pytest.raises(ValueError, match="openai_chat refusal block in an assistant message"):
        to_anthropic(from_openai_chat(refusal))
    # A Chat file id names a file at OpenAI: Anthropic cannot read it.
    file_id = [{"role": "user", "content": [{"type": "file", "file": {"file_id": "file-1"}}]}]
    with pytest.raises(ValueError, match="openai_chat file block"):
        to_anthropic(from_openai_chat(file_id))


# ---- fit_to_budget --------------------------------------------------------------------------


def _big_pdf(n_bytes: int) -> str:
    return base64.b64encode(b"%PDF-1.4\n" + b"x" * n_bytes).decode("ascii")


def test_a_large_document_is_charged_and_trimmed_anthropic() -> None:
    big = _anthropic_pdf()
    big["source"] = {**big["source"], "data": _big_pdf(2_000_000)}
    history = [
        {"role": "user", "content": [big, {"type": "text", "text": "summarise"}]},
        {"role": "assistant", "content": "It is about x."},
        {"role": "user", "content": "thanks, and y?"},
        {"role": "assistant", "content": "y too."},
    ]
    whole = fit_to_budget(history, 10_000_000)
    # Charged as its JSON text under chars/4: about one token per 3 bytes of the file.
    assert whole.tokens > 600_000
    fit = fit_to_budget(history, 1_000)
    assert fit.messages == history[2:]
    assert fit.dropped == history[:2]
    # The exact counters charge it too.
    assert fit_to_budget(history, 1_000, counter="o200k_base").messages == history[2:]


def test_a_text_document_is_charged_by_its_text() -> None:
    text = "word " * 4000
    document = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": text},
    }
    history = [{"role": "user", "content": [document]}]
    assert fit_to_budget(history, 100_000).tokens == len(text) // 4


def test_a_large_file_is_charged_and_trimmed_chat() -> None:
    part = {
        "type": "file",
        "file": {
            "file_data": "data:application/pdf;base64," + _big_pdf(400_000),
            "filename": "a.pdf",
        },
    }
    history = [
        {"role": "user", "content": [part]},
        {"role": "assistant", "content": "read"},
        {"role": "user", "content": "next"},
    ]
    assert fit_to_budget(history, 100).messages == history[2:]
    assert fit_to_budget(history, 1_000_000).messages == history
    # A Transcript holding carried blocks is charged the same way.
    transcript = from_openai_chat(history)
    assert fit_to_budget(transcript, 100).messages == transcript[2:]


def test_server_tool_turns_are_kept_or_dropped_whole_and_pairs_never_split() -> None:
    search = [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"q": "x"}},
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_1",
            "content": [
                {
                    "type": "web_search_result",
                    "url": "https://example.com",
                    "title": "t",
                    "encrypted_content": "e" * 4000,
                }
            ],
        },
    ]
    history = [
        {"role": "user", "content": "look it up"},
        {
            "role": "assistant",
            "content": [
                *search,
                {"type": "text", "text": "and read the file"},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"p": "a"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "file text"},
                {"type": "text", "text": "and?"},
            ],
        },
        {"role": "assistant", "content": "done"},
    ]
    for budget in range(0, 1_300, 20):
        fit = fit_to_budget({"messages": history}, budget, start_on="any")
        kept = fit.messages["messages"]
        assert kept in (history, history[3:], []), budget
        for message in kept:
            if message["role"] == "assistant" and isinstance(message["content"], list):
                assert message["content"][:2] == search
    # The search result's JSON is what keeps the first turn out of a small budget.
    fit = fit_to_budget({"messages": history}, 1_000, start_on="any")
    assert fit.messages["messages"] == history[3:]
    assert fit_to_budget({"messages": history}, 1_300).messages["messages"] == history


def test_fit_to_budget_repairs_around_carried_blocks_and_writes_them_back() -> None:
    """A missing result is added (pairing repaired), so the history is rebuilt: the carried
    blocks come back exactly where they were."""
    history = [
        {"role": "user", "content": [_anthropic_pdf(title="t"), {"type": "text", "text": "go"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}},
            ],
        },
        {"role": "user", "content": "well?"},
    ]
    fit = fit_to_budget(history, 100_000)
    assert fit.repaired and fit.added_results == 1
    assert fit.messages[0] == history[0]
    assert fit.messages[1] == history[1]
    assert fit.messages[2]["content"][0]["type"] == "tool_result"
    _validate_anthropic(fit.messages)


def test_the_transcript_estimate_gives_carried_blocks_nothing_which_is_why_fit_charges_them() -> (
    None
):
    transcript = from_anthropic([{"role": "user", "content": [_anthropic_pdf()]}])
    assert list(transcript.token_counts()) == [0]
    as_text = json.dumps(_anthropic_pdf(), separators=(",", ":"))
    expected = h.estimate_tokens({"role": "user", "content": [{"type": "text", "text": as_text}]})
    assert expected > 0
    assert fit_to_budget(transcript, 10_000).tokens == expected


# ---- OpenAI Responses -----------------------------------------------------------------------


def _validate_responses(items: list[dict[str, Any]]) -> None:
    from openai.types.responses import ResponseInputParam

    TypeAdapter(ResponseInputParam).validate_python(items)


@st.composite
def _responses_part(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["data", "url", "id", "text"]))
    if kind == "data":
        part: dict[str, Any] = {
            "type": "input_file",
            "file_data": "data:application/pdf;base64," + PDF,
        }
        if draw(st.booleans()):
            part["filename"] = draw(_ids) + ".pdf"
        return part
    if kind == "url":
        return {"type": "input_file", "file_url": "https://example.com/" + draw(_ids) + ".pdf"}
    if kind == "id":
        return {"type": "input_file", "file_id": "file-" + draw(_ids)}
    return {"type": "input_text", "text": draw(_text)}


@st.composite
def responses_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in range(draw(st.integers(1, 4))):
        parts = draw(st.lists(_responses_part(), min_size=1, max_size=3))
        out.append({"role": "user", "content": parts})
        if draw(st.booleans()):
            content = [{"type": "refusal", "refusal": draw(_text)}]
            if draw(st.booleans()):
                content.insert(0, {"type": "output_text", "text": draw(_text), "annotations": []})
            out.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "id": f"msg_{n}",
                    "status": "completed",
                    "content": content,
                }
            )
        else:
            out.append(
                {"type": "function_call", "call_id": f"call_{n}", "name": "read", "arguments": "{}"}
            )
            output: Any = draw(_text)
            if draw(st.booleans()):
                output = [
                    {"type": "input_text", "text": output},
                    {"type": "input_file", "file_data": "data:application/pdf;base64," + PDF},
                ]
            out.append({"type": "function_call_output", "call_id": f"call_{n}", "output": output})
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=responses_histories())
def test_openai_responses_round_trip_carries_files_audio_and_refusals(
    history: list[dict[str, Any]],
) -> None:
    _validate_responses(history)
    transcript = from_openai_responses(history)
    assert to_openai_responses(transcript) == history
    _assert_passes_keep(transcript)


def test_responses_input_file_and_chat_file_and_anthropic_document_are_one_pdf() -> None:
    document = _anthropic_pdf(title="r.pdf")
    items = to_openai_responses(from_anthropic([{"role": "user", "content": [document]}]))
    assert items == [
        {
            "role": "user",
            "content": [
                {
                    "type": "input_file",
                    "file_data": "data:application/pdf;base64," + PDF,
                    "filename": "r.pdf",
                }
            ],
        }
    ]
    _validate_responses(items)
    assert to_anthropic(from_openai_responses(items))[1][0]["content"] == [document]
    chat = to_openai_chat(from_openai_responses(items))
    assert chat[0]["content"][0]["file"]["file_data"] == items[0]["content"][0]["file_data"]
    # An Anthropic PDF by URL is a Responses file_url.
    by_url = {"type": "document", "source": {"type": "url", "url": "https://x/a.pdf"}}
    items = to_openai_responses(from_anthropic([{"role": "user", "content": [by_url]}]))
    assert items[0]["content"] == [{"type": "input_file", "file_url": "https://x/a.pdf"}]
    assert to_anthropic(from_openai_responses(items))[1][0]["content"] == [by_url]


def test_refusals_map_between_chat_and_responses() -> None:
    chat = [
        {"role": "user", "content": "help"},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "I can't"}]},
    ]
    items = to_openai_responses(from_openai_chat(chat))
    assert items[1] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "refusal", "refusal": "I can't"}],
    }
    assert to_openai_chat(from_openai_responses(items)) == chat


def test_responses_audio_is_carried_but_other_audio_is_not_written_as_responses() -> None:
    """openai 3.57 types Responses input content as text, image and file: an input_audio part
    read is given back as it was, Chat audio is refused rather than guessed into that shape."""
    audio = {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}}
    items = [{"role": "user", "content": [{"type": "input_text", "text": "hear"}, audio]}]
    assert to_openai_responses(from_openai_responses(items)) == items
    chat = [{"role": "user", "content": [audio]}]
    with pytest.raises(ValueError, match="openai_chat input_audio block in a user message has no"):
        to_openai_responses(from_openai_chat(chat))


def test_anthropic_server_tools_have_no_responses_form() -> None:
    history = [
        {"role": "user", "content": "news?"},
        {
            "role": "assistant",
            "content": [
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            ],
        },
    ]
    with pytest.raises(ValueError, match="server_tool_use block in an assistant message has no"):
        to_openai_responses(from_anthropic(history))


# ---- Gemini ---------------------------------------------------------------------------------


def _validate_gemini(contents: list[dict[str, Any]]) -> None:
    from google.genai import types

    for content in contents:
        types.Content.model_validate(content)


@st.composite
def _gemini_user_part(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["pdf", "audio", "file_data", "text", "image"]))
    if kind == "pdf":
        return {"inline_data": {"mime_type": "application/pdf", "data": PDF}}
    if kind == "audio":
        return {"inline_data": {"mime_type": "audio/ogg", "data": draw(_b64)}}
    if kind == "file_data":
        uri = "https://generativelanguage.googleapis.com/v1beta/files/" + draw(_ids)
        return {"file_data": {"file_uri": uri, "mime_type": "video/mp4"}}
    if kind == "image":
        return {"inline_data": {"mime_type": "image/png", "data": PDF}}
    return {"text": draw(_text)}


@st.composite
def gemini_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []  # function responses open the next user content
    for n in range(draw(st.integers(1, 4))):
        parts = draw(st.lists(_gemini_user_part(), min_size=1, max_size=3))
        out.append({"role": "user", "parts": pending + parts})
        pending = []
        model: list[dict[str, Any]] = [{"text": draw(_text)}]
        if draw(st.booleans()):
            model += [
                {"executable_code": {"language": "PYTHON", "code": "print(1)"}},
                {"code_execution_result": {"outcome": "OUTCOME_OK", "output": draw(_text)}},
            ]
        if draw(st.booleans()):
            model.append({"function_call": {"id": f"c{n}", "name": "read", "args": {}}})
            response = {"id": f"c{n}", "name": "read", "response": {"output": draw(_text)}}
            pending = [{"function_response": response}]
        out.append({"role": "model", "parts": model})
    if pending:
        out.append({"role": "user", "parts": pending})
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=gemini_histories())
def test_gemini_round_trip_carries_files_audio_and_code_execution(
    history: list[dict[str, Any]],
) -> None:
    _validate_gemini(history)
    transcript = from_gemini(history)
    assert to_gemini(transcript) == (None, history)
    _assert_passes_keep(transcript)


def test_gemini_content_objects_with_carried_parts_come_back_as_objects() -> None:
    from google.genai import types

    contents = [
        types.Content(
            role="user",
            parts=[
                types.Part(text="read"),
                types.Part(inline_data=types.Blob(data=b"%PDF-1.4 x", mime_type="application/pdf")),
            ],
        ),
        types.Content(
            role="model",
            parts=[
                types.Part(
                    executable_code=types.ExecutableCode(language="PYTHON", code="print(2)")
                ),
                types.Part(
                    inline_data=types.Blob(data=b"\x89PNG\r\n", mime_type="image/png"),
                ),
            ],
        ),
    ]
    converted = read(contents)
    assert converted.transcript[0]["content"][1]["block"] == {
        "inline_data": {
            "data": base64.b64encode(b"%PDF-1.4 x").decode(),
            "mime_type": "application/pdf",
        }
    }
    assert converted.restore(converted.transcript) == contents


def test_gemini_inline_pdf_and_audio_map_to_anthropic_chat_and_back() -> None:
    contents = [
        {"role": "user", "parts": [{"inline_data": {"mime_type": "application/pdf", "data": PDF}}]}
    ]
    assert to_anthropic(from_gemini(contents))[1][0]["content"] == [_anthropic_pdf()]
    assert to_gemini(from_anthropic(to_anthropic(from_gemini(contents))[1])) == (None, contents)
    wav = [{"role": "user", "parts": [{"inline_data": {"mime_type": "audio/wav", "data": WAV}}]}]
    chat = to_openai_chat(from_gemini(wav))
    assert chat[0]["content"] == [
        {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}}
    ]
    assert to_gemini(from_openai_chat(chat)) == (None, wav)
    # A plain-text file is an Anthropic text document.
    text = base64.b64encode(b"hello").decode()
    plain = [
        {"role": "user", "parts": [{"inline_data": {"mime_type": "text/plain", "data": text}}]}
    ]
    assert to_anthropic(from_gemini(plain))[1][0]["content"] == [
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "hello"},
        }
    ]


@pytest.mark.parametrize(
    ("contents", "target", "match"),
    [
        (
            [{"role": "user", "parts": [{"inline_data": {"mime_type": "audio/ogg", "data": WAV}}]}],
            "anthropic",
            "gemini inline_data block in a user message has no Anthropic",
        ),
        (
            [{"role": "user", "parts": [{"inline_data": {"mime_type": "audio/ogg", "data": WAV}}]}],
            "chat",
            "gemini inline_data block in a user message has no OpenAI Chat",
        ),
        (
            [
                {"role": "user", "parts": [{"text": "run"}]},
                {
                    "role": "model",
                    "parts": [{"executable_code": {"code": "1", "language": "PYTHON"}}],
                },
            ],
            "chat",
            "gemini executable_code block in an assistant message has no OpenAI Chat",
        ),
        (
            [
                {
                    "role": "user",
                    "parts": [{"file_data": {"file_uri": "gs://b/a", "mime_type": "a/b"}}],
                }
            ],
            "responses",
            "gemini file_data block in a user message has no OpenAI Responses",
        ),
    ],
)
def test_gemini_parts_without_an_equivalent_are_refused(
    contents: list[dict[str, Any]], target: str, match: str
) -> None:
    transcript = from_gemini(contents)
    write = {
        "anthropic": to_anthropic,
        "chat": to_openai_chat,
        "responses": to_openai_responses,
    }[target]
    with pytest.raises(ValueError, match=match):
        write(transcript)


def test_anthropic_server_tools_and_search_results_have_no_gemini_form() -> None:
    history = [
        {"role": "user", "content": "news?"},
        {
            "role": "assistant",
            "content": [
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            ],
        },
    ]
    with pytest.raises(
        ValueError, match="server_tool_use block in an assistant message has no Gem"
    ):
        to_gemini(from_anthropic(history))
    search = {"type": "search_result", "source": "s", "title": "t", "content": []}
    with pytest.raises(ValueError, match="search_result block in a user message has no Gemini"):
        to_gemini(from_anthropic([{"role": "user", "content": [search]}]))


def test_a_gemini_part_mixing_a_call_with_other_fields_is_refused() -> None:
    part = {"function_call": {"name": "f", "args": {}}, "executable_code": {"code": "1"}}
    with pytest.raises(ValueError, match="element 0: part"):
        from_gemini([{"role": "model", "parts": [part]}])


# ---- LangChain ------------------------------------------------------------------------------


@st.composite
def _langchain_block(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["pdf", "audio", "plain", "legacy", "text"]))
    if kind == "pdf":
        return {"type": "file", "base64": PDF, "mime_type": "application/pdf"}
    if kind == "audio":
        return {"type": "audio", "base64": draw(_b64), "mime_type": "audio/wav"}
    if kind == "plain":
        return {"type": "text-plain", "text": draw(_text), "mime_type": "text/plain"}
    if kind == "legacy":
        return {
            "type": "file",
            "source_type": "base64",
            "data": PDF,
            "mime_type": "application/pdf",
        }
    return {"type": "text", "text": draw(_text)}


@st.composite
def langchain_histories(draw: st.DrawFn) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    out: list[Any] = []
    for n in range(draw(st.integers(1, 3))):
        out.append(HumanMessage(content=draw(st.lists(_langchain_block(), min_size=2, max_size=3))))
        # A lone text is a string (what writing gives back for one text block).
        content: Any = draw(_text)
        if draw(st.booleans()):
            content = [
                {"type": "server_tool_call", "id": f"srv{n}", "name": "web_search", "args": {}},
                {"type": "server_tool_result", "tool_call_id": f"srv{n}", "status": "success"},
                {"type": "text", "text": content or "found"},
            ]
        calls = [{"name": "read", "args": {}, "id": f"c{n}", "type": "tool_call"}]
        out.append(AIMessage(content=content, tool_calls=calls))
        out.append(
            ToolMessage(
                content=[{"type": "file", "base64": PDF, "mime_type": "application/pdf"}],
                tool_call_id=f"c{n}",
            )
        )
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=langchain_histories())
def test_langchain_round_trip_carries_files_audio_and_server_tools(history: list[Any]) -> None:
    transcript = from_langchain(history)
    assert to_langchain(transcript) == history
    _assert_passes_keep(transcript)


def test_anthropic_pdf_and_chat_audio_are_langchain_standard_blocks_and_back() -> None:
    from langchain_core.messages import HumanMessage

    history = [
        {"role": "user", "content": [{"type": "text", "text": "x"}, _anthropic_pdf(title="r")]}
    ]
    messages = to_langchain(from_anthropic(history))
    assert messages == [
        HumanMessage(
            content=[
                {"type": "text", "text": "x"},
                {
                    "type": "file",
                    "base64": PDF,
                    "mime_type": "application/pdf",
                    "extras": {"filename": "r"},
                },
            ]
        )
    ]
    assert to_anthropic(from_langchain(messages)) == (None, history)
    chat = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "hear"},
                {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}},
            ],
        }
    ]
    messages = to_langchain(from_openai_chat(chat))
    assert messages[0].content[1] == {"type": "audio", "base64": WAV, "mime_type": "audio/wav"}
    assert to_openai_chat(from_langchain(messages)) == chat


def test_server_tool_turns_have_no_langchain_form() -> None:
    history = [
        {"role": "user", "content": "news?"},
        {
            "role": "assistant",
            "content": [
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            ],
        },
    ]
    with pytest.raises(ValueError, match="anthropic server_tool_use block has no LangChain"):
        to_langchain(from_anthropic(history))
    # And a LangChain server tool call has none in Anthropic.
    from langchain_core.messages import AIMessage, HumanMessage

    lc = [
        HumanMessage("news?"),
        AIMessage(content=[{"type": "server_tool_call", "id": "s", "name": "web", "args": {}}]),
    ]
    with pytest.raises(ValueError, match="langchain server_tool_call block in an assistant"):
        to_anthropic(from_langchain(lc))


def test_langchain_unknown_block_is_still_refused() -> None:
    from langchain_core.messages import HumanMessage

    with pytest.raises(ValueError, match="element 0: content block 'hologram' is not supported"):
        from_langchain([HumanMessage(content=[{"type": "hologram"}])])


def test_a_large_file_is_charged_and_trimmed_langchain() -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    big = {"type": "file", "base64": _big_pdf(400_000), "mime_type": "application/pdf"}
    history = [
        HumanMessage(content=[{"type": "text", "text": "read"}, big]),
        AIMessage("read it"),
        HumanMessage("next"),
        AIMessage("ok"),
    ]
    fit = fit_to_budget(history, 100)
    assert fit.messages == history[2:]
    assert fit.dropped == history[:2]
    assert fit_to_budget(history, 1_000_000).messages == history


# ---- pydantic-ai ----------------------------------------------------------------------------


def test_pydantic_ai_round_trip_carries_documents_audio_and_native_tools() -> None:
    from pydantic_ai import messages as m

    history = [
        m.ModelRequest(
            parts=[
                m.UserPromptPart(
                    [
                        "read these",
                        m.BinaryContent(data=b"%PDF-1.4 x", media_type="application/pdf"),
                        m.BinaryContent(data=b"RIFF....WAVE", media_type="audio/wav"),
                        m.DocumentUrl(url="https://example.com/a.pdf"),
                        m.AudioUrl(url="https://example.com/a.mp3"),
                    ]
                )
            ]
        ),
        m.ModelResponse(
            parts=[
                m.NativeToolCallPart(
                    tool_name="web_search", args={"q": "x"}, tool_call_id="s1", provider_name="a"
                ),
                m.NativeToolReturnPart(
                    tool_name="web_search", content=[{"url": "u"}], tool_call_id="s1"
                ),
                m.TextPart("found"),
            ]
        ),
    ]
    transcript = from_pydantic_ai(history)
    assert [b["type"] for b in transcript[0]["content"]] == ["text", *["foreign"] * 4]
    assert [b["type"] for b in transcript[1]["content"]] == ["foreign", "foreign", "text"]
    back = to_pydantic_ai(transcript)
    assert back[0].parts[0].content == history[0].parts[0].content
    assert back[1].parts == history[1].parts
    _assert_passes_keep(transcript)


def test_pydantic_ai_binary_pdf_maps_to_anthropic_and_chat_and_back() -> None:
    from pydantic_ai import messages as m

    pdf = base64.b64decode(PDF)
    history = [
        m.ModelRequest(
            parts=[m.UserPromptPart([m.BinaryContent(data=pdf, media_type="application/pdf")])]
        )
    ]
    assert to_anthropic(from_pydantic_ai(history))[1][0]["content"] == [_anthropic_pdf()]
    chat = to_openai_chat(from_pydantic_ai(history))
    assert chat[0]["content"] == [
        {"type": "file", "file": {"file_data": "data:application/pdf;base64," + PDF}}
    ]
    back = to_pydantic_ai(from_anthropic([{"role": "user", "content": [_anthropic_pdf()]}]))
    item = back[0].parts[0].content[0]
    assert isinstance(item, m.BinaryContent) and item.data == pdf
    assert item.media_type == "application/pdf"


def test_pydantic_ai_native_tools_and_audio_urls_are_refused_elsewhere() -> None:
    from pydantic_ai import messages as m

    call = m.NativeToolCallPart(tool_name="web_search", args={}, tool_call_id="s1")
    history = [
        m.ModelRequest(parts=[m.UserPromptPart("news?")]),
        m.ModelResponse(parts=[call]),
    ]
    with pytest.raises(ValueError, match="pydantic_ai builtin-tool-call block in an assistant"):
        to_anthropic(from_pydantic_ai(history))
    audio = [m.ModelRequest(parts=[m.UserPromptPart([m.AudioUrl(url="https://x/a.mp3")])])]
    with pytest.raises(ValueError, match="pydantic_ai audio-url block in a user message has no"):
        to_openai_chat(from_pydantic_ai(audio))
    # Server-tool turns of Anthropic have no pydantic-ai form either.
    anthropic = [
        {"role": "user", "content": "news?"},
        {
            "role": "assistant",
            "content": [
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
            ],
        },
    ]
    with pytest.raises(ValueError, match="anthropic server_tool_use block in an assistant message"):
        to_pydantic_ai(from_anthropic(anthropic))
