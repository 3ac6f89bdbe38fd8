"""The transcripts held by the reports the core declares (`ToolCallInputsReport`, `PairingReport`,
`ImportedTranscript`: `rust/core/src/transcript/shared.rs`): each reads as one `Transcript`
object, the same on every read, the caller's own object when nothing changed, a new one
otherwise, and it outlives the report."""

from __future__ import annotations

import gc
import json
from typing import Any

import clawctx
from clawctx import Transcript
from clawctx._core import foreign
from clawctx._core import transcript as core_transcript

NOW = 1_767_225_600_000


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1}


def _call(cid: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": cid, "name": "read", "arguments": {}}],
        "stopReason": "toolUse",
        "timestamp": 2,
    }


def test_a_report_transcript_is_the_same_object_on_every_read() -> None:
    pairing = clawctx.repair_tool_pairing([_call("c1"), _user("next")], now_ms=NOW)
    assert isinstance(pairing, core_transcript.PairingReport)
    assert pairing.messages is pairing.messages
    assert pairing.added is pairing.added
    assert isinstance(pairing.added, Transcript)
    assert [m["toolCallId"] for m in pairing.added] == ["c1"]
    inputs = clawctx.repair_tool_call_inputs([_user("a")])
    assert isinstance(inputs, core_transcript.ToolCallInputsReport)
    assert inputs.messages is inputs.messages


def test_the_input_object_comes_back_only_when_nothing_changed() -> None:
    clean = Transcript([_user("a"), _user("b")])
    assert clawctx.repair_tool_call_inputs(clean).messages is clean
    assert clawctx.repair_tool_pairing(clean, now_ms=NOW).messages is clean
    assert core_transcript.sanitize_tool_call_inputs(clean) is clean
    assert core_transcript.sanitize_tool_use_result_pairing(clean, now_ms=NOW) is clean
    broken = Transcript([_call("c1"), _user("next")])
    repaired = clawctx.repair_tool_pairing(broken, now_ms=NOW)
    assert repaired.messages is not broken
    assert len(repaired.messages) == 3
    # A list given in comes back as a Transcript, never as the list.
    as_list = [_user("a")]
    result = clawctx.repair_tool_call_inputs(as_list).messages
    assert isinstance(result, Transcript)
    assert result == as_list


def test_a_report_transcript_outlives_its_report() -> None:
    report = clawctx.repair_tool_pairing([_call("c1")], now_ms=NOW)
    added = report.added
    messages = report.messages
    del report
    gc.collect()
    assert len(added) == 1
    assert messages.to_list()[1]["toolCallId"] == "c1"


def test_an_imported_transcript_reads_its_fields_from_the_core() -> None:
    line = {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": "s1",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": "hello"},
    }
    imported = foreign.read_transcript_bytes(json.dumps(line).encode() + b"\n")
    assert isinstance(imported, foreign.ImportedTranscript)
    assert imported.format == "claude-code"
    assert type(imported.format) is str
    assert imported.messages is imported.messages
    assert [m["content"] for m in imported.messages] == ["hello"]
    assert imported.session_id == "s1"
    assert repr(imported) == (
        "ImportedTranscript(format='claude-code', lines=1, damaged_lines=0, "
        "session_id='s1', model=None)"
    )
