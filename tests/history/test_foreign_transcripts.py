"""Claude Code sessions and Codex rollouts read as pi transcripts: the mapping on fixtures
written from the formats' definitions (`tests/fixtures/foreign/`), every real file under
`../shared/realworld-transcripts`, and every transcript operation on the result."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx import _core
from clawctx.cli import main
from clawctx.engine.pipeline import ContextPipeline, ModelSpec, PromptRequest
from clawctx.history import (
    ClawctxError,
    Session,
    Transcript,
    count_message_tokens,
    detect_transcript_format,
    estimate_context_tokens,
    import_transcript,
    import_transcript_bytes,
    limit_history_turns,
    prune_context,
    read_transcript,
    repair_tool_call_inputs,
    repair_tool_pairing,
    sanitize_session_history,
    validate_for_provider,
)
from clawctx.prompt.system_prompt import SystemPromptParams
from conftest import FIXTURES as TEST_FIXTURES
from conftest import SHARED

FIXTURES = TEST_FIXTURES / "foreign"
REAL = SHARED / "realworld-transcripts"
REAL_FILES = sorted(REAL.rglob("*.jsonl")) if REAL.is_dir() else []
needs_real = pytest.mark.skipif(
    not REAL_FILES, reason="../shared/realworld-transcripts is absent (a plain clone)"
)

USAGE = {
    "input": 3,
    "output": 40,
    "cacheRead": 2000,
    "cacheWrite": 100,
    "totalTokens": 2143,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}
CLAUDE = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-opus-4-6"}
CODEX = {"api": "openai-responses", "provider": "openai"}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _real_format(path: Path) -> str:
    return "codex" if path.name.startswith("rollout-") or "/codex/" in str(path) else "claude-code"


# ---- the mapping, message by message -----------------------------------------------------


def test_claude_code_small_fixture_maps_exactly() -> None:
    path = FIXTURES / "claude_small.jsonl"
    before = _sha(path)
    imported = read_transcript(path)
    assert imported.messages.to_list() == [
        {"role": "user", "content": "What is in this directory?", "timestamp": 1770757916846},
        {
            "role": "assistant",
            # Three lines of one API response (message.id msg_01), a progress line between.
            "content": [
                {"type": "thinking", "thinking": "I should list it.", "thinkingSignature": "sig1"},
                {
                    "type": "toolCall",
                    "id": "toolu_A",
                    "name": "Bash",
                    "arguments": {"command": "ls"},
                },
                {
                    "type": "toolCall",
                    "id": "toolu_B",
                    "name": "Read",
                    "arguments": {"file_path": "/home/dev/app/logo.png"},
                },
            ],
            **CLAUDE,
            "usage": USAGE,
            "stopReason": "toolUse",
            "timestamp": 1770757918000,
        },
        {
            "role": "toolResult",
            "toolCallId": "toolu_B",
            "toolName": "Read",
            "content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}],
            "isError": False,
            "timestamp": 1770757919000,
        },
        {
            "role": "toolResult",
            "toolCallId": "toolu_A",
            "toolName": "Bash",
            "content": [{"type": "text", "text": "ls: cannot open directory"}],
            "isError": True,
            "timestamp": 1770757919100,
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "The listing failed; the logo is a PNG."}],
            **CLAUDE,
            "usage": USAGE,
            "stopReason": "stop",
            "timestamp": 1770757922000,
        },
    ]
    assert imported.format == "claude-code"
    assert (imported.lines, imported.damaged_lines, imported.torn_last_line) == (13, 1, True)
    assert imported.dropped_sidechain_lines == 2
    assert imported.session_id == "0b6c1b7e-1111-4222-8333-444455556666"
    assert (imported.cwd, imported.version, imported.model) == (
        "/home/dev/app",
        "2.1.38",
        "claude-opus-4-6",
    )
    assert imported.first_timestamp == "2026-02-10T21:11:56.846Z"
    assert imported.last_timestamp == "2026-02-10T21:12:02.000Z"
    assert _sha(path) == before  # read only


def test_claude_code_compaction_keeps_the_summary_and_what_follows() -> None:
    imported = read_transcript(FIXTURES / "claude_compacted.jsonl")
    assert imported.messages.to_list() == [
        {
            "role": "user",
            "content": "This session is being continued from a previous conversation that ran"
            " out of context. Summary: the refactor is half done.",
            "timestamp": 1772362800100,
        },
        {
            "role": "user",
            "content": [
                {"type": "image", "data": "/9j/4AAQ", "mimeType": "image/jpeg"},
                {"type": "text", "text": "Does this screenshot look right?"},
            ],
            "timestamp": 1772362860000,
        },
        {
            "role": "assistant",
            # redacted_thinking is not carried over; its line still starts the message.
            "content": [{"type": "text", "text": "Yes, the layout matches."}],
            **CLAUDE,
            "usage": USAGE,
            "stopReason": "stop",
            "timestamp": 1772362863000,
        },
    ]
    assert (imported.compactions, imported.off_path_lines, imported.damaged_lines) == (1, 2, 0)


def test_codex_small_fixture_maps_exactly() -> None:
    imported = read_transcript(FIXTURES / "codex_small.jsonl")
    model = {**CODEX, "model": "gpt-5-codex"}
    assert imported.messages.to_list() == [
        # The harness's environment context stays (model-visible); the developer message does not.
        {
            "role": "user",
            "content": "<environment_context>\n  <cwd>/home/dev/app</cwd>\n</environment_context>",
            "timestamp": 1763393428300,
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Run the tests and fix the failure."},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            ],
            "timestamp": 1763393429100,
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "**Running tests**"},
                {
                    "type": "toolCall",
                    "id": "call_1",
                    "name": "shell",
                    "arguments": {"command": ["pytest", "-q"], "workdir": "/home/dev/app"},
                },
                # Unparsable arguments are kept whole.
                {
                    "type": "toolCall",
                    "id": "call_2",
                    "name": "shell",
                    "arguments": {"raw": '{"command":["git","status"]'},
                },
            ],
            **model,
            "stopReason": "toolUse",
            "timestamp": 1763393431000,
            "usage": {
                "input": 1000,
                "output": 60,
                "cacheRead": 4000,
                "cacheWrite": 0,
                "totalTokens": 5060,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
        },
        {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "shell",
            "content": [
                {
                    "type": "text",
                    "text": '{"output":"1 failed\\n","metadata":{"exit_code":1,"duration_seconds":1.5}}',
                }
            ],
            "isError": True,  # exit code 1
            "timestamp": 1763393433000,
        },
        {
            "role": "toolResult",
            "toolCallId": "call_2",
            "toolName": "shell",
            "content": [
                {
                    "type": "text",
                    "text": "failed to parse function arguments: EOF while parsing a list",
                }
            ],
            "isError": False,
            "timestamp": 1763393433100,
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "toolCall",
                    "id": "call_3",
                    "name": "apply_patch",
                    "arguments": {
                        "input": "*** Begin Patch\n*** Update File: app.py\n@@\n-x = 1\n+x = 2\n"
                        "*** End Patch"
                    },
                }
            ],
            **model,
            "stopReason": "toolUse",
            "timestamp": 1763393435100,
        },
        {
            "role": "toolResult",
            "toolCallId": "call_3",
            "toolName": "apply_patch",
            "content": [
                {"type": "text", "text": "Success. Updated the following files:\nM app.py\n"}
            ],
            "isError": False,
            "timestamp": 1763393435200,
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "toolCall",
                    "id": "call_4",
                    "name": "local_shell",
                    "arguments": {
                        "command": ["pytest", "-q"],
                        "timeout_ms": 60000,
                        "working_directory": "/home/dev/app",
                        "env": None,
                        "user": None,
                    },
                }
            ],
            **model,
            "stopReason": "toolUse",
            "timestamp": 1763393436000,
        },
        {
            "role": "toolResult",
            "toolCallId": "call_4",
            "toolName": "local_shell",
            "content": [
                {
                    "type": "text",
                    "text": "Exit code: 0\nWall time: 1.2 seconds\nOutput:\n3 passed\n",
                }
            ],
            "isError": False,
            "timestamp": 1763393437000,
        },
        # web_search_call and ghost_snapshot leave nothing; the answer is its own message.
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Fixed: x is now 2 and the tests pass."}],
            **model,
            "stopReason": "stop",
            "timestamp": 1763393439000,
        },
    ]
    assert (imported.lines, imported.damaged_lines, imported.torn_last_line) == (23, 1, True)
    assert (imported.version, imported.cwd) == ("0.58.0", "/home/dev/app")
    assert imported.session_id == "019a93b9-f380-7600-98ff-940e6b99603c"


def test_codex_compacted_replaces_the_history_with_its_replacement() -> None:
    imported = read_transcript(FIXTURES / "codex_compacted.jsonl")
    summary = (
        "Another language model started to solve this problem and produced a summary of its"
        " thinking process.\nSummary of the first task."
    )
    assert imported.messages.to_list() == [
        {"role": "user", "content": "first task", "timestamp": 1767326400000},
        {"role": "user", "content": summary, "timestamp": 1767326400000},
        {"role": "user", "content": "second task", "timestamp": 1767326401000},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "part one\n\npart two"},
                {"type": "text", "text": "second answer"},
            ],
            **CODEX,
            "model": "gpt-5.2",
            "stopReason": "stop",
            "timestamp": 1767326402000,
        },
    ]
    assert (imported.compactions, imported.model, imported.version) == (1, "gpt-5.2", "0.104.0")


# ---- sizes ---------------------------------------------------------------------------------


def _claude_lines(turns: int) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    parent = None
    for t in range(turns):
        common = {"isSidechain": False, "sessionId": "s", "timestamp": "2026-01-01T00:00:00.000Z"}
        prompt = {**common, "parentUuid": parent, "type": "user", "uuid": f"u{t}",
                  "message": {"role": "user", "content": f"prompt {t}"}}  # fmt: skip
        calls = [
            {**common, "parentUuid": f"u{t}" if k == 0 else f"a{t}.{k - 1}", "type": "assistant",
             "uuid": f"a{t}.{k}", "message": {"id": f"msg{t}", "role": "assistant", "content": [
                 {"type": "tool_use", "id": f"t{t}.{k}", "name": "Read", "input": {"n": k}}]}}
            for k in range(2)
        ]  # fmt: skip
        results = [
            {**common, "parentUuid": f"a{t}.{k}", "type": "user", "uuid": f"r{t}.{k}",
             "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": f"t{t}.{k}", "content": "x" * k}]}}
            for k in range(2)
        ]  # fmt: skip
        answer = {**common, "parentUuid": f"r{t}.0", "type": "assistant", "uuid": f"z{t}",
                  "message": {"id": f"msgz{t}", "role": "assistant",
                              "content": [{"type": "text", "text": f"answer {t}"}]}}  # fmt: skip
        lines += [prompt, *calls, *results, answer]
        parent = f"z{t}"
    return lines


def _codex_lines(turns: int) -> list[dict[str, Any]]:
    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {
            "timestamp": "2026-01-01T00:00:00.000Z",
            "type": "response_item",
            "payload": payload,
        }

    lines: list[dict[str, Any]] = [
        {"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta", "payload": {"id": "x"}}
    ]
    for t in range(turns):
        lines += [
            item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"p{t}"}]}),
            item({"type": "function_call", "name": "shell", "arguments": "{}", "call_id": f"a{t}"}),
            item({"type": "function_call", "name": "shell", "arguments": "{}", "call_id": f"b{t}"}),
            item({"type": "function_call_output", "call_id": f"a{t}", "output": "ok"}),
            item({"type": "function_call_output", "call_id": f"b{t}", "output": "ok"}),
            item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}),
        ]  # fmt: skip
    return lines


@pytest.mark.parametrize("turns", [1, 40, 2000])
@pytest.mark.parametrize("kind", ["claude-code", "codex"])
def test_generated_sessions_of_several_sizes(tmp_path: Path, kind: str, turns: int) -> None:
    lines = _claude_lines(turns) if kind == "claude-code" else _codex_lines(turns)
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert detect_transcript_format(path) == kind
    messages = import_transcript(path)
    # Per turn: prompt, one assistant with both calls, two results, the answer.
    assert len(messages) == 5 * turns
    assert messages.roles()[:5] == ["user", "assistant", "toolResult", "toolResult", "assistant"]
    assert len(messages[1]["content"]) == 2
    assert repair_tool_pairing(messages).added == []


# ---- bytes, file objects, errors --------------------------------------------------------------


def test_bytes_and_file_objects_give_the_same_transcript() -> None:
    path = FIXTURES / "codex_small.jsonl"
    data = path.read_bytes()
    expected = import_transcript(path)
    assert import_transcript_bytes(data) == expected
    assert import_transcript_bytes(bytearray(data)) == expected
    assert import_transcript_bytes(memoryview(data)) == expected
    assert import_transcript_bytes(io.BytesIO(data), format="codex") == expected
    assert isinstance(expected, Transcript)
    assert read_transcript(io.BytesIO(data)).format == "codex"


def test_format_detection_edge_cases(tmp_path: Path) -> None:
    cases = {
        "empty": (b"", "claude-code"),
        "blank": (b"\n\n", "claude-code"),
        "title": (b'{"type":"summary","summary":"T","leafUuid":"u"}\n', "claude-code"),
        "snapshot": (
            b'{"type":"file-history-snapshot","messageId":"m","snapshot":{},"isSnapshotUpdate":false}\n',
            "claude-code",
        ),
        "pi": (b'{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\n', "pi"),
        # A first line longer than the first read.
        "long": (
            json.dumps(
                {"timestamp": "t", "type": "session_meta", "payload": {"x": "y" * 200_000}}
            ).encode()
            + b"\n",
            "codex",
        ),
    }
    for name, (data, expected) in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(data)
        assert detect_transcript_format(path) == expected, name
        assert _core.detect_transcript_format_bytes(data) == expected, name
    assert len(import_transcript(tmp_path / "empty.jsonl")) == 0
    assert len(import_transcript(tmp_path / "title.jsonl")) == 0


def test_bad_input_raises_typed_errors(tmp_path: Path) -> None:
    for data in (b"\x00\x01\xff" * 100, b"[1, 2]\n", b'{"hello": "world"}\n'):
        with pytest.raises(ValueError, match="not a Claude Code, Codex or pi transcript"):
            import_transcript_bytes(data)
    with pytest.raises(FileNotFoundError):
        import_transcript(tmp_path / "missing.jsonl")
    with pytest.raises(ClawctxError, match="not a regular file"):
        import_transcript(tmp_path)
    with pytest.raises(ValueError, match="format must be"):
        import_transcript(FIXTURES / "codex_small.jsonl", format="openai")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        import_transcript_bytes("text")  # type: ignore[arg-type]


def test_pi_sessions_import_as_their_context() -> None:
    demo = clawctx.demo_session_path()
    imported = read_transcript(demo)
    assert imported.format == "pi"
    assert imported.messages == Session.open(demo, read_only=True).context().messages
    assert import_transcript_bytes(demo.read_bytes()) == imported.messages
    assert imported.session_id == Session.open(demo, read_only=True).session_id


# ---- every transcript operation works on an imported transcript ------------------------------


@pytest.mark.parametrize(
    "name", ["claude_small", "claude_compacted", "codex_small", "codex_compacted"]
)
def test_transcript_operations_accept_imported_transcripts(tmp_path: Path, name: str) -> None:
    messages = import_transcript(FIXTURES / f"{name}.jsonl")
    as_list = messages.to_list()
    assert repair_tool_pairing(messages).messages == repair_tool_pairing(as_list).messages
    assert repair_tool_pairing(messages).added == []
    assert repair_tool_call_inputs(messages).messages == repair_tool_call_inputs(as_list).messages
    assert limit_history_turns(messages, 1) == limit_history_turns(as_list, 1)
    pruned = prune_context(messages, {"mode": "cache-ttl"}, context_window_tokens=1000)
    assert len(pruned) == len(messages)
    assert estimate_context_tokens(messages).tokens == estimate_context_tokens(as_list).tokens > 0
    assert list(count_message_tokens(messages)) == list(count_message_tokens(as_list))
    assert messages.token_counts().tolist() == Transcript.from_list(as_list).token_counts().tolist()
    for provider in ("anthropic", "openai", "google"):
        violations = validate_for_provider(
            sanitize_session_history(messages, provider=provider), provider=provider
        )
        assert violations == [], (provider, violations)
    # The pipeline's history: the converted session prepared for a request.
    out = tmp_path / "s.jsonl"
    assert main(["convert", str(FIXTURES / f"{name}.jsonl"), "-o", str(out)]) == 0
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    pipeline = ContextPipeline(
        model=ModelSpec(provider="anthropic", api="anthropic-messages", id="claude-sonnet-4-5"),
        workspace_dir=workspace,
        system_prompt=SystemPromptParams(workspace_dir=str(workspace), tool_names=("read",)),
    )
    prepared = pipeline.prepare(out, PromptRequest(text="go on"))
    last = messages[len(messages) - 1]
    assert last["role"] == "assistant"
    # The request's hygiene for Claude drops another provider's unsigned thinking (Codex's
    # reasoning summaries); the answer's text reaches the request unchanged.
    sent = prepared.messages[len(prepared.messages) - 1]["content"]

    def texts(content: list[dict[str, object]]) -> list[dict[str, object]]:
        return [block for block in content if block.get("type") == "text"]

    assert texts(sent) == texts(last["content"]) != []
    if name.startswith("claude"):
        assert sent == last["content"]


# ---- the command line ------------------------------------------------------------------------


def test_inspect_json_has_the_format_and_message_count(capsys: pytest.CaptureFixture[str]) -> None:
    for name, fmt, count in (("claude_small", "claude-code", 5), ("codex_small", "codex", 10)):
        assert main(["inspect", "--json", str(FIXTURES / f"{name}.jsonl")]) == 0
        report = json.loads(capsys.readouterr().out)
        assert (report["format"], report["messages"]) == (fmt, count)
        assert report["damaged_lines"] == 1 and report["torn_last_line"] is True
    # --check counts skipped lines as damage, for foreign files too.
    assert main(["inspect", "--check", str(FIXTURES / "claude_small.jsonl")]) == 1
    assert main(["inspect", "--check", str(FIXTURES / "claude_compacted.jsonl")]) == 0
    assert main(["inspect", str(FIXTURES / "codex_compacted.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "codex 0.104.0" in out and "messages 4" in out
    assert main(["inspect", "--json", str(clawctx.demo_session_path())]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "pi"


def test_convert_refuses_to_overwrite_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = FIXTURES / "claude_small.jsonl"
    out = tmp_path / "out.jsonl"
    out.write_text("keep me\n")
    assert main(["convert", str(source), "-o", str(out)]) == 1
    assert "use --force" in capsys.readouterr().err
    assert out.read_text() == "keep me\n"
    assert main(["convert", str(source), "-o", str(out), "--force", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["messages"] == 5
    assert Session.open(out, read_only=True).context().messages == import_transcript(source)
    # Never onto the input itself, --force or not.
    copy = tmp_path / "in.jsonl"
    copy.write_bytes(source.read_bytes())
    assert main(["convert", str(copy), "-o", str(copy), "--force"]) == 1
    assert copy.read_bytes() == source.read_bytes()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_converted_session_has_header_ids_and_a_parent_chain(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    assert main(["convert", str(FIXTURES / "codex_small.jsonl"), "-o", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["cwd"] == "/home/dev/app"
    assert lines[0]["id"] == "019a93b9-f380-7600-98ff-940e6b99603c"
    parent = None
    for entry in lines[1:]:
        assert entry["type"] == "message" and entry["parentId"] == parent and entry["id"]
        parent = entry["id"]
    assert len(lines) == 11


# ---- every real file -----------------------------------------------------------------------


@needs_real
def test_all_real_files_are_present() -> None:
    assert len(REAL_FILES) == 31


@needs_real
@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: str(p.relative_to(REAL)))
def test_real_file_imports_inspects_converts_and_round_trips(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: Path
) -> None:
    before = _sha(path)
    assert detect_transcript_format(path) == _real_format(path)
    imported = read_transcript(path)
    messages = imported.messages
    assert imported.format == _real_format(path)
    assert imported.damaged_lines == 0
    # The mapping pairs every call with its result in real files.
    pairing = repair_tool_pairing(messages)
    assert (pairing.added, pairing.dropped_orphan_count, pairing.dropped_duplicate_count) == (
        [],
        0,
        0,
    )
    for message in messages:
        assert message["role"] in {"user", "assistant", "toolResult"}
    if path.stat().st_size:
        assert main(["inspect", "--json", str(path)]) == 0
        report = json.loads(capsys.readouterr().out)
        assert (report["format"], report["messages"]) == (imported.format, len(messages))
    else:
        # An empty file has nothing to inspect, as for pi files (tests/cli/test_cli_findings.py).
        assert main(["inspect", str(path)]) == 1
        capsys.readouterr()
    out = tmp_path / "converted.jsonl"
    assert main(["convert", str(path), "-o", str(out)]) == 0
    session = Session.open(out, read_only=True)
    assert session.skipped_lines == []
    assert session.context().messages == messages
    assert _sha(path) == before
