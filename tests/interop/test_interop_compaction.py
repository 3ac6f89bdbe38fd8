"""Anthropic server compaction blocks in the interop converters (issue 31, item 2): read into
pi's compaction block (the original under ``raw``) and written back verbatim by
``to_anthropic``; another API's opaque item is left out there."""

from __future__ import annotations

from typing import Any

from clawctx.interop import read, to_anthropic, to_openai_chat

BLOCK = {"type": "compaction", "content": "S", "encrypted_content": "E", "signature": "sig"}


def test_anthropic_compaction_blocks_round_trip() -> None:
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": [BLOCK, {"type": "text", "text": "t"}]},
    ]
    converted = read(history)
    assert converted.format == "anthropic"
    block = converted.transcript.to_list()[1]["content"][0]
    assert block == {
        "type": "compaction",
        "api": "anthropic-messages",
        "content": "S",
        "raw": BLOCK,
    }
    _system, messages = to_anthropic(converted.transcript)
    assert messages == history
    # Other formats have no such block: it is not written.
    assert to_openai_chat(converted.transcript)[1] == {"role": "assistant", "content": "t"}


def test_an_opaque_item_is_left_out_of_anthropic_messages() -> None:
    item = {
        "type": "compaction",
        "api": "openai-responses",
        "content": None,
        "raw": {"type": "compaction", "id": "cmp_1", "encrypted_content": "X"},
    }
    pi = [
        {"role": "user", "content": "a", "timestamp": 1},
        {
            "role": "assistant",
            "content": [item, {"type": "text", "text": "t"}],
            "api": "openai-responses",
            "provider": "openai",
            "model": "gpt-5",
            "stopReason": "stop",
            "timestamp": 2,
        },
    ]
    _system, messages = to_anthropic(pi)
    assert messages[1] == {"role": "assistant", "content": [{"type": "text", "text": "t"}]}


def test_responses_compaction_items_round_trip() -> None:
    from clawctx.interop import to_openai_responses

    item = {"type": "compaction", "id": "cmp_1", "encrypted_content": "X"}
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "a"},
        item,
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "t", "annotations": []}],
        },
    ]
    converted = read(history)
    assert converted.format == "openai_responses"
    blocks = converted.transcript.to_list()[1]["content"]
    assert blocks[0] == {
        "type": "compaction",
        "api": "openai-responses",
        "content": None,
        "raw": item,
    }
    items = to_openai_responses(converted.transcript)
    assert items[1] == item
    # Anthropic's block has no Responses form.
    anthropic = read([{"role": "user", "content": "a"}, {"role": "assistant", "content": [BLOCK]}])
    assert not any(i.get("type") == "compaction" for i in to_openai_responses(anthropic.transcript))
