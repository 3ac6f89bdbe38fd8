"""Transcript, convert_to_llm (pi-mono 0.58.3 `packages/coding-agent/src/core/messages.ts`, ``convertToLlm``)
and estimate_tokens (`packages/coding-agent/src/core/compaction/compaction.ts`, ``estimateTokens``)."""

from __future__ import annotations

import json

import pytest

import clawctx


def test_from_json_keeps_each_message_byte_for_byte() -> None:
    raw = b'[{"role":"user","content":"h\\u00e9", "timestamp": 1.0},\n {"role":"assistant","content":[]}]'
    t = clawctx.Transcript.from_json(raw)
    assert len(t) == 2
    assert (
        t.to_json()
        == b'[{"role":"user","content":"h\\u00e9", "timestamp": 1.0},{"role":"assistant","content":[]}]'
    )
    assert t[0] == {"role": "user", "content": "hé", "timestamp": 1.0}
    assert t[-1]["role"] == "assistant"
    assert t.roles() == ["user", "assistant"]
    assert clawctx.Transcript.from_json(t.to_json().decode()) == t


def test_from_list_serializes_like_json_stringify() -> None:
    big = 2**53 + 1  # JavaScript would round it; clawctx keeps the exact value
    t = clawctx.Transcript.from_list([{"role": "user", "content": "x", "n": 2.0, "big": big}])
    assert t.to_json() == b'[{"role":"user","content":"x","n":2,"big":9007199254740993}]'
    assert t.to_list() == [{"role": "user", "content": "x", "n": 2.0, "big": big}]
    with pytest.raises(TypeError, match="out of range"):
        clawctx.Transcript.from_list([{"role": "user", "n": 10**20}])  # beyond 64 bits
    assert clawctx.Transcript(t) == t
    assert clawctx.Transcript() == clawctx.Transcript([])
    assert len(clawctx.Transcript()) == 0


def test_indexing_slicing_iteration() -> None:
    t = clawctx.Transcript.from_list([{"role": "user", "content": str(i)} for i in range(5)])
    assert [m["content"] for m in t] == ["0", "1", "2", "3", "4"]
    sliced = t[1:5:2]
    assert isinstance(sliced, clawctx.Transcript)
    assert [m["content"] for m in sliced] == ["1", "3"]
    assert t[::-1][0]["content"] == "4"
    with pytest.raises(IndexError):
        t[5]
    with pytest.raises(IndexError):
        t[-6]
    with pytest.raises(TypeError):
        t["x"]  # type: ignore[call-overload]
    assert t != t[1:]
    assert t == [m for m in t]  # a Transcript equals a list of the same messages (issue 18)


def test_invalid_transcripts_are_rejected() -> None:
    with pytest.raises(ValueError):
        clawctx.Transcript.from_json(b"[1, 2]")
    with pytest.raises(ValueError):
        clawctx.Transcript.from_json(b'{"role":"user"}')
    with pytest.raises(ValueError):
        clawctx.Transcript.from_json(b"[{]")
    # Upstream's transcript repairs pass non-object entries through (conformance cases
    # repair_tool_use_result_pairing-031/032/121), so a list may hold them: they are kept.
    assert clawctx.Transcript.from_list([1]).to_list() == [1]  # type: ignore[list-item]
    with pytest.raises(TypeError):
        clawctx.Transcript.from_list(5)  # type: ignore[arg-type]


def test_lone_surrogate_escapes_are_read_as_replacement_characters() -> None:
    t = clawctx.Transcript.from_json(b'[{"role":"user","content":"a\\ud800b"}]')
    assert t[0]["content"] == "a\ufffdb"


def test_convert_to_llm_exact_texts() -> None:
    messages = [
        {"role": "user", "content": "q", "timestamp": 1},
        {
            "role": "bashExecution",
            "command": "ls -la",
            "output": "a\nb",
            "exitCode": 2,
            "cancelled": False,
            "truncated": True,
            "fullOutputPath": "/tmp/out.txt",
            "timestamp": 2,
        },
        {"role": "bashExecution", "command": "true", "output": "", "exitCode": 0, "timestamp": 3},
        {
            "role": "bashExecution",
            "command": "secret",
            "output": "x",
            "excludeFromContext": True,
            "timestamp": 4,
        },
        {"role": "custom", "customType": "t", "content": "note", "display": True, "timestamp": 5},
        {"role": "branchSummary", "summary": "B", "fromId": "x", "timestamp": 6},
        {"role": "compactionSummary", "summary": "C", "tokensBefore": 9, "timestamp": 7},
        {"role": "hookMessage", "content": "dropped", "timestamp": 8},
        {
            "role": "toolResult",
            "toolCallId": "c",
            "toolName": "read",
            "content": [],
            "isError": False,
        },
    ]
    out = clawctx.convert_to_llm(messages).to_list()
    texts = [
        m["content"][0]["text"] if m["role"] == "user" and m is not out[0] else None for m in out
    ]
    assert [m["role"] for m in out] == [
        "user",
        "user",
        "user",
        "user",
        "user",
        "user",
        "toolResult",
    ]
    assert texts[1] == (
        "Ran `ls -la`\n```\na\nb\n```\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/out.txt]"
    )
    assert texts[2] == "Ran `true`\n(no output)"
    assert out[3] == {"role": "user", "content": [{"type": "text", "text": "note"}], "timestamp": 5}
    assert texts[4] == (
        "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nB</summary>"
    )
    assert texts[5] == (
        "The conversation history before this point was compacted into the following summary:"
        "\n\n<summary>\nC\n</summary>"
    )
    assert [m.get("timestamp") for m in out[:6]] == [1, 2, 3, 5, 6, 7]


def test_convert_to_llm_passes_llm_roles_through_unchanged() -> None:
    raw = b'[{"role":"assistant","content":[{"type":"text","text":"x"}],"usage":{"cost":0.10}}]'
    t = clawctx.Transcript.from_json(raw)
    assert clawctx.convert_to_llm(t).to_json() == raw


def test_estimate_tokens_rules() -> None:
    est = clawctx.estimate_tokens
    assert est({"role": "user", "content": "12345"}) == 2
    assert est({"role": "user", "content": [{"type": "image", "data": "x" * 999}]}) == 0
    args = {"path": "/a/b", "n": 1}
    call = {"type": "toolCall", "id": "c", "name": "read", "arguments": args}
    chars = len("read") + len(json.dumps(args, separators=(",", ":")))
    assert est({"role": "assistant", "content": [call]}) == -(-chars // 4)
    image_result = {
        "role": "toolResult",
        "content": [{"type": "image", "data": "", "mimeType": "image/png"}],
    }
    assert est(image_result) == 1200
    assert (
        est({"role": "bashExecution", "command": "ab", "output": "cd", "excludeFromContext": True})
        == 1
    )
    assert est({"role": "compactionSummary", "summary": "😀😀"}) == 1  # 4 UTF-16 code units
    assert est({"role": "branchSummary", "summary": "x" * 9}) == 3
    assert est({"role": "system", "content": "x" * 100}) == 0


def test_replace_messages_shares_untouched_messages_and_checks_indices() -> None:
    from clawctx import Transcript

    original = Transcript.from_json(
        b'[{"role":"user","content":"a" },{"role":"assistant","content":[]}]'
    )
    replaced = original.replace_messages({-1: {"role": "assistant", "content": "x"}})
    # The untouched message keeps its exact bytes (the odd space survives).
    assert (
        replaced.to_json() == b'[{"role":"user","content":"a" },{"role":"assistant","content":"x"}]'
    )
    assert original[1] == {"role": "assistant", "content": []}
    assert original.replace_messages({}) == original
    with pytest.raises(IndexError):
        original.replace_messages({2: {"role": "user", "content": "b"}})
    with pytest.raises(TypeError):
        original.replace_messages({0: "not a dict"})


def test_transcript_concatenation_with_transcripts_and_lists() -> None:
    from clawctx import Transcript

    head = Transcript.from_json(b'[{"role":"user","content":"a" }]')
    joined = head + [{"role": "assistant", "content": "b"}]
    assert joined.roles() == ["user", "assistant"]
    assert (joined + head).to_json().startswith(b'[{"role":"user","content":"a" }')
    assert ([{"role": "system", "content": "s"}] + head).roles() == ["system", "user"]
    assert len(head) == 1


def test_top_level_values_reads_only_messages_with_the_field() -> None:
    from clawctx import Transcript

    messages = Transcript(
        [
            {"role": "user", "content": 'mentions "provenance" only in text'},
            {"role": "user", "content": "b", "provenance": {"kind": "inter_session"}},
            {"role": "assistant", "content": [], "nested": {"provenance": 1}},
        ]
    )
    assert messages.top_level_values("provenance") == {1: {"kind": "inter_session"}}
    assert messages.top_level_values("absent") == {}
