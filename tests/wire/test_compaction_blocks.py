"""Provider-side compaction blocks round-trip (issue 31, item 2): an Anthropic ``compaction``
content block and an OpenAI Responses ``compaction`` output item are kept by
``parse_response``, stored in pi's assistant message, and sent back verbatim to their own
provider (and only there) by the payload writers, through the real SDKs over a mock
transport; the bodies validate against the SDKs' beta parameter types."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx.history import Session, Transcript
from clawctx.wire import build_request_payload, parse_response

from ._sdk_loop import Replay

anthropic = pytest.importorskip("anthropic", reason="the anthropic SDK (test extra)")
openai = pytest.importorskip("openai", reason="the openai SDK (test extra)")
pydantic = pytest.importorskip("pydantic")

pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

CLAUDE = {
    "id": "claude-sonnet-4-5",
    "name": "claude-sonnet-4-5",
    "api": "anthropic-messages",
    "provider": "anthropic",
    "baseUrl": "https://api.anthropic.com",
    "reasoning": False,
    "input": ["text"],
    "maxTokens": 64000,
}
GPT = {**CLAUDE, "id": "gpt-5", "name": "gpt-5", "api": "openai-responses", "provider": "openai"}
GEMINI = {
    **CLAUDE,
    "id": "gemini-2.5-pro",
    "name": "gemini-2.5-pro",
    "api": "google-generative-ai",
    "provider": "google",
}

#: What Anthropic returns when it compacts (beta `compact-2026-01-12`).
BLOCK = {
    "type": "compaction",
    "content": "Summary: the user is shipping on Friday.",
    "encrypted_content": "ENC/anthropic==",
    "signature": "sig-1",
}
ITEM = {
    "type": "compaction",
    "id": "cmp_0123",
    "encrypted_content": "gAAAA-opaque-compacted-context",
}


def _sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _anthropic_reply(text: str) -> bytes:
    """A streamed reply whose first block is a compaction block (content in its delta)."""
    start = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    opened = {
        "type": "compaction",
        "content": None,
        "encrypted_content": None,
        "signature": "sig-1",
    }
    delta = {
        "type": "compaction_delta",
        "content": BLOCK["content"],
        "encrypted_content": BLOCK["encrypted_content"],
    }
    return _sse(
        [
            {"type": "message_start", "message": start},
            {"type": "content_block_start", "index": 0, "content_block": opened},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "text", "text": ""},
            },
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "text_delta", "text": text},
            },
            {"type": "content_block_stop", "index": 1},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 5},
            },
            {"type": "message_stop"},
        ]
    )


def _responses_reply(text: str) -> bytes:
    """A streamed Responses reply with a compaction item before the message."""
    message = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    response = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-5",
        "status": "completed",
        "output": [ITEM, message],
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "total_tokens": 15,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    events: list[dict[str, Any]] = [
        {
            "type": "response.created",
            "response": {**response, "output": [], "status": "in_progress"},
        },
        {"type": "response.output_item.added", "output_index": 0, "item": ITEM},
        {"type": "response.output_item.done", "output_index": 0, "item": ITEM},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {**message, "content": [], "status": "in_progress"},
        },
        {
            "type": "response.content_part.added",
            "output_index": 1,
            "item_id": "msg_1",
            "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        {
            "type": "response.output_text.delta",
            "output_index": 1,
            "item_id": "msg_1",
            "content_index": 0,
            "delta": text,
        },
        {"type": "response.output_item.done", "output_index": 1, "item": message},
        {"type": "response.completed", "response": response},
    ]
    for n, event in enumerate(events):
        event["sequence_number"] = n
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _history(tmp_path: Path) -> Session:
    session = Session.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    session.append_message({"role": "user", "content": "old question", "timestamp": 1})
    session.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "old answer"}],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "stopReason": "stop",
            "usage": {},
            "timestamp": 2,
        }
    )
    session.append_message({"role": "user", "content": "When do we ship?", "timestamp": 3})
    return session


def test_anthropic_block_round_trips_through_the_sdk(tmp_path: Path) -> None:
    from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming

    replay = Replay(anthropic, "/v1/messages", [_anthropic_reply("Friday."), _anthropic_reply("x")])
    client = anthropic.Anthropic(
        api_key="k", base_url="https://api.anthropic.test", http_client=replay.http_client()
    )
    session = _history(tmp_path)
    first = build_request_payload(CLAUDE, {"messages": session.context().messages}).to_dict()
    stream = client.beta.messages.create(**first, betas=["compact-2026-01-12"])
    reply = parse_response(CLAUDE, stream)
    block = reply["content"][0]
    assert block["type"] == "compaction" and block["api"] == "anthropic-messages"
    assert block["content"] == BLOCK["content"]
    assert block["raw"] == BLOCK
    assert reply["content"][1] == {"type": "text", "text": "Friday."}
    assert reply["stopReason"] == "stop"
    session.append_message(reply)
    session.append_message({"role": "user", "content": "And then?", "timestamp": 9})

    # The next request: it starts at the compacted turn, the block first and verbatim.
    reopened = Session.open(tmp_path / "s.jsonl", read_only=True)
    second = build_request_payload(CLAUDE, {"messages": reopened.context().messages}).to_dict()
    assert second["messages"][0] == {
        "role": "assistant",
        "content": [BLOCK, {"type": "text", "text": "Friday."}],
    }
    assert [m["role"] for m in second["messages"]] == ["assistant", "user"]
    body = {k: v for k, v in second.items() if k != "stream"}
    pydantic.TypeAdapter(MessageCreateParamsNonStreaming).validate_python(body)
    client.beta.messages.create(**second, betas=["compact-2026-01-12"])
    assert replay.sent[1]["messages"][0]["content"][0] == BLOCK


def test_responses_item_round_trips_through_the_sdk(tmp_path: Path) -> None:
    from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

    replay = Replay(openai, "/responses", [_responses_reply("Friday."), _responses_reply("x")])
    client = openai.OpenAI(
        api_key="k", base_url="https://api.openai.test/v1", http_client=replay.http_client()
    )
    session = _history(tmp_path)
    first = build_request_payload(
        GPT, {"system_prompt": "sys", "messages": session.context().messages}
    ).to_dict()
    stream = client.responses.create(**first)
    reply = parse_response(GPT, stream)
    assert reply["content"][0] == {
        "type": "compaction",
        "api": "openai-responses",
        "content": None,
        "raw": ITEM,
    }
    assert reply["content"][1]["text"] == "Friday."
    session.append_message(reply)
    session.append_message({"role": "user", "content": "And then?", "timestamp": 9})

    second = build_request_payload(
        GPT, {"system_prompt": "sys", "messages": session.context().messages}
    ).to_dict()
    items = second["input"]
    # The system prompt stays; every history item before the compaction item is left out.
    assert items[0]["role"] in ("system", "developer")
    assert items[1] == ITEM
    assert items[2]["type"] == "message" and items[2]["content"][0]["text"] == "Friday."
    assert items[3]["role"] == "user"
    assert len(items) == 4
    body = {k: v for k, v in second.items() if k != "stream"}
    pydantic.TypeAdapter(ResponseCreateParamsNonStreaming).validate_python(body)
    client.responses.create(**second)
    assert replay.sent[1]["input"][1] == ITEM


def _compacted(block: dict[str, Any], api: str, provider: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "old question", "timestamp": 1},
        {
            "role": "assistant",
            "content": [block, {"type": "text", "text": "Friday."}],
            "api": api,
            "provider": provider,
            "model": "m",
            "stopReason": "stop",
            "timestamp": 2,
        },
        {"role": "user", "content": "And then?", "timestamp": 3},
    ]


ANTHROPIC_PI = {
    "type": "compaction",
    "api": "anthropic-messages",
    "content": BLOCK["content"],
    "raw": BLOCK,
}
RESPONSES_PI = {"type": "compaction", "api": "openai-responses", "content": None, "raw": ITEM}


@pytest.mark.parametrize("model", [GEMINI, GPT, {**CLAUDE, "api": "openai-completions"}])
def test_other_providers_get_the_readable_summary(model: dict[str, Any]) -> None:
    messages = _compacted(ANTHROPIC_PI, "anthropic-messages", "anthropic")
    text = json.dumps(build_request_payload(model, {"messages": messages}).to_dict())
    assert "old question" not in text  # the summary replaces what came before
    assert BLOCK["content"] in text
    assert "ENC/anthropic" not in text and "sig-1" not in text


@pytest.mark.parametrize("model", [GEMINI, CLAUDE, {**CLAUDE, "api": "mistral-conversations"}])
def test_opaque_items_are_dropped_elsewhere_and_history_kept(model: dict[str, Any]) -> None:
    messages = _compacted(RESPONSES_PI, "openai-responses", "openai")
    text = json.dumps(build_request_payload(model, {"messages": messages}).to_dict())
    assert "old question" in text
    assert "cmp_0123" not in text and "gAAAA" not in text
    assert "Friday." in text


def test_only_the_last_block_with_content_is_sent() -> None:
    failed = {**ANTHROPIC_PI, "content": None, "raw": {**BLOCK, "content": None}}
    newer = {**ANTHROPIC_PI, "content": "newer", "raw": {**BLOCK, "content": "newer"}}
    messages = _compacted(ANTHROPIC_PI, "anthropic-messages", "anthropic")
    messages[1]["provider"] = "anthropic"
    messages += [
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "t"}, newer, failed],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "m",
            "stopReason": "stop",
            "timestamp": 4,
        },
        {"role": "user", "content": "more", "timestamp": 5},
    ]
    body = build_request_payload(CLAUDE, {"messages": messages}).to_dict()
    assert body["messages"][0]["content"] == [newer["raw"], {"type": "text", "text": "t"}]
    assert len(body["messages"]) == 2
    # The stored bytes path and the value path agree.
    assert body == build_request_payload(CLAUDE, {"messages": Transcript(messages)}).to_dict()


def test_non_streaming_bodies_keep_the_block() -> None:
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [BLOCK],
        "stop_reason": "compaction",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    reply = parse_response(CLAUDE, body)
    assert reply["content"] == [ANTHROPIC_PI]
    # `pause_after_compaction`: the turn ends with the block; pi's stop reason is "stop".
    assert reply["stopReason"] == "stop"
    assert "errorMessage" not in reply


def test_pipeline_model_spec_reads_the_item() -> None:
    spec = clawctx.ModelSpec("openai", "openai-responses", "gpt-5", context_window=400_000)
    reply = parse_response(spec, _responses_reply("ok"))
    assert reply["content"][0]["raw"] == ITEM


def test_validate_request_body_knows_compaction_blocks() -> None:
    from clawctx.wire import validate_request_body

    first = {"role": "assistant", "content": [BLOCK, {"type": "text", "text": "t"}]}
    ok = {"model": "m", "max_tokens": 1, "messages": [first, {"role": "user", "content": "q"}]}
    assert validate_request_body(ok, "anthropic-messages") == []
    late = {
        "model": "m",
        "max_tokens": 1,
        "messages": [{"role": "user", "content": "q"}, first, {"role": "user", "content": "r"}],
    }
    rules = [v.rule for v in validate_request_body(late, "anthropic-messages")]
    assert rules == ["compaction-block-misplaced"]
    two = {"role": "assistant", "content": [BLOCK, BLOCK]}
    rules = [
        v.rule
        for v in validate_request_body(
            {"model": "m", "max_tokens": 1, "messages": [two]}, "anthropic-messages"
        )
    ]
    assert rules == ["compaction-block-misplaced", "compaction-block-ambiguous"]
    # Without a compaction block an assistant turn first is refused as before.
    plain = {"model": "m", "max_tokens": 1, "messages": [{"role": "assistant", "content": "x"}]}
    assert [v.rule for v in validate_request_body(plain, "anthropic-messages")] == [
        "first-message-not-user"
    ]


def test_pipeline_turns_carry_the_block_back(tmp_path: Path) -> None:
    from clawctx.wire import validate_request_body

    from ._sdk_loop import demo_pipeline

    model = clawctx.ModelSpec(
        "anthropic", "anthropic-messages", "claude-sonnet-4-5", context_window=200_000
    )
    replay = Replay(anthropic, "/v1/messages", [_anthropic_reply("Friday."), _anthropic_reply("x")])
    client = anthropic.Anthropic(
        api_key="k", base_url="https://api.anthropic.test", http_client=replay.http_client()
    )
    pipeline, session, _path = demo_pipeline(tmp_path, model)
    first = pipeline.prepare(session, clawctx.PromptRequest(text="When do we ship?"))
    stream = client.beta.messages.create(**first.request_payload(), betas=["compact-2026-01-12"])
    pipeline.record_turn(session, first, [stream])
    second = pipeline.prepare(session, clawctx.PromptRequest(text="And then?"))
    body = second.request_payload()
    assert body["messages"][0] == {
        "role": "assistant",
        "content": [BLOCK, {"type": "text", "text": "Friday."}],
    }
    assert body["messages"][-1]["role"] == "user"
    assert validate_request_body(body, "anthropic-messages") == []
    client.beta.messages.create(**body, betas=["compact-2026-01-12"])
    assert replay.sent[1]["messages"][0]["content"][0] == BLOCK


def test_streamed_signature_and_deltas_replace_the_fields() -> None:
    # A signature delta on a compaction block (written as Anthropic writes deltas, which the
    # reader's fast path takes for thinking blocks) and a second compaction delta: the block's
    # fields are replaced, as the anthropic SDK accumulates them.
    start = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    events = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "compaction"}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "compaction_delta", "content": "first", "encrypted_content": "e1"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "compaction_delta", "content": "second"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "s2"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "compaction"},
            "usage": {"output_tokens": 2},
        },
        {"type": "message_stop"},
    ]
    sse = "".join(
        f"event: {e['type']}\ndata: {json.dumps(e, separators=(',', ':'))}\n\n" for e in events
    )
    reply = parse_response(CLAUDE, sse)
    assert reply["content"] == [
        {
            "type": "compaction",
            "api": "anthropic-messages",
            "content": "second",
            "raw": {
                "type": "compaction",
                "content": "second",
                "encrypted_content": None,
                "signature": "s2",
            },
        }
    ]
    assert reply["stopReason"] == "stop"
    # The incremental reader gives the same message.
    stream = clawctx.wire.ResponseStream(CLAUDE)
    stream.feed(sse)
    stream.finish()
    assert stream.message["content"] == reply["content"]
