"""The clawctx command line."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import clawctx
from clawctx.cli import main


def demo_records() -> list[dict[str, object]]:
    text = clawctx.demo_session_path().read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_inspect_demo_json_matches_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    records = demo_records()
    assert report["header"] == records[0]
    assert report["entries"] == len(records) - 1
    assert report["entry_counts"] == dict(Counter(str(r["type"]) for r in records[1:]))
    assert report["file_version"] == 3 and report["migration_needed"] is False
    assert report["leaf_id"] == records[-1]["id"]
    # The demo has an abandoned branch and a compaction, so the leaf path is shorter than the
    # file and the context starts with the compaction summary.
    assert report["leaf_path_entries"] < report["entries"]
    assert report["context_roles"]["compactionSummary"] == 1
    assert report["skipped_lines"] == []
    assert report["tool_calls_without_results"] == []
    assert report["estimated_tokens"] > 0


def test_inspect_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect"]) == 0
    out = capsys.readouterr().out
    assert "version  3 (current)" in out
    assert "tool calls without results on the leaf path: 0" in out
    assert "compactionSummary" in out


def test_inspect_reports_damage_and_orphans(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.jsonl"
    session = clawctx.Session.create(path, cwd="/", now_ms=0)
    session.append_message({"role": "user", "content": "go", "timestamp": 1})
    session.append_message(
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "call_1", "name": "read", "arguments": {}}],
            "provider": "p",
            "model": "m",
            "stopReason": "toolUse",
            "timestamp": 2,
        }
    )
    session.append_message(
        {
            "role": "toolResult",
            "toolCallId": "call_9",
            "toolName": "read",
            "content": [],
            "timestamp": 3,
        }
    )
    with path.open("a") as f:
        f.write('{"type":"message","id":"torn"\n')
    before = path.read_bytes()
    assert main(["inspect", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["tool_calls_without_results"] == ["call_1"]
    assert report["tool_results_without_calls"] == ["call_9"]
    assert [s["line"] for s in report["skipped_lines"]] == [5]
    assert path.read_bytes() == before  # inspect never writes


def test_inspect_migration_notice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "v1.jsonl"
    path.write_text(
        '{"type":"session","id":"x","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}\n'
    )
    assert main(["inspect", str(path)]) == 0
    assert "version  1 (migration to v3 would apply)" in capsys.readouterr().out


def test_inspect_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(tmp_path / "missing.jsonl")]) == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert main(["inspect", str(bad)]) == 1
    assert "bad.jsonl" in capsys.readouterr().err


def test_repair_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.jsonl"
    clawctx.Session.create(good, cwd="/")
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(good.read_bytes() + b'{"type":"message"')
    headerless = tmp_path / "headerless.jsonl"
    headerless.write_text('{"type":"custom","customType":"x","id":"1","parentId":null}\n')
    status = main(["repair", str(good), str(torn), str(headerless)])
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert status == 1
    assert out[0] == f"{good}: ok: nothing to repair"
    assert out[1].startswith(f"{torn}: repaired: dropped 1 malformed line(s); backup ")
    # A skipped file is an error: on stderr, with the loader's reason (issue 18).
    assert captured.err == (
        f"clawctx repair: {headerless}: skipped: not a session file "
        '(line 1: first record is a "custom" entry, not a session header)\n'
    )
    assert torn.read_bytes() == good.read_bytes()
    assert main(["repair", str(torn)]) == 0


def test_console_script_entry_point() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "clawctx", "inspect", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(result.stdout)["session_id"] == demo_records()[0]["id"]


def test_inspect_previews_pairing_repair_tokens_and_pruning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.jsonl"
    session = clawctx.Session.create(path, cwd="/", now_ms=0)
    big = "x" * 60_000
    for turn in range(5):
        session.append_message({"role": "user", "content": f"turn {turn}", "timestamp": turn})
        call = {"type": "toolCall", "id": f"call_{turn}", "name": "read", "arguments": {"p": turn}}
        session.append_message(
            {"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": turn}
        )
        if turn != 2:  # turn 2's result is missing
            session.append_message(
                {
                    "role": "toolResult",
                    "toolCallId": f"call_{turn}",
                    "toolName": "read",
                    "content": [{"type": "text", "text": big}],
                    "isError": False,
                    "timestamp": turn,
                }
            )
    assert main(["inspect", str(path), "--json", "--context-window", "20000"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["pairing_repair"]["synthetic_results_for"] == ["call_2"]
    assert report["pairing_repair"]["changes_transcript"] is True
    by_role = report["estimated_tokens_by_role"]
    assert by_role["toolResult"] == 4 * 15_000
    assert sum(by_role.values()) == report["estimated_tokens"]
    pruning = report["pruning_preview"]
    # 240,000 result chars in a 20,000-token (80,000-char) window: the two results before the
    # last three assistants are soft-trimmed; the hard clear is then skipped because those two
    # (the only prunable ones) hold fewer than minPrunableToolChars (50,000) chars.
    assert pruning["context_window_tokens"] == 20_000
    assert pruning["soft_trimmed_results"] == 2
    assert pruning["cleared_results"] == 0
    assert pruning["chars_after"] < pruning["chars_before"]
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "pairing repair would: insert 1 synthetic result(s)" in out
    assert "soft-trim 2 and clear 0 tool result(s)" in out


def test_assemble_subagent_session_key_gets_the_minimal_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from clawctx import demo_session_path
    from clawctx.cli import main

    session = tmp_path / "copy.jsonl"
    session.write_bytes(demo_session_path().read_bytes())
    before = session.read_bytes()
    status = main(
        [
            "assemble",
            str(session),
            "--session-key",
            "agent:main:subagent:abc",
            "--json",
            "--provider",
            "google",
            "--model-api",
            "google-generative-ai",
            "--model",
            "gemini-2.5-pro",
            "--tools",
            "read,sessions_spawn",
            "--prompt",
            "go",
        ]
    )
    assert status == 0
    out = json.loads(capsys.readouterr().out)
    assert "## Silent Replies" not in out["system_prompt"]
    assert "- sessions_spawn:" in out["system_prompt"]
    # Sub-agents get only AGENTS.md and TOOLS.md from the workspace (OpenClaw 2026.3.13 src/agents/workspace.ts,
    # filterBootstrapFilesForSession).
    assert "AGENTS.md\n" in out["system_prompt"] and "TOOLS.md\n" in out["system_prompt"]
    assert "SOUL.md\n" not in out["system_prompt"]
    assert session.read_bytes() == before  # assemble is read-only


def test_assemble_reports_a_missing_session_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from clawctx.cli import main

    assert main(["assemble", str(tmp_path / "missing.jsonl")]) == 1
    assert "clawctx assemble:" in capsys.readouterr().err
