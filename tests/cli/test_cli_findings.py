"""The command-line findings of issue 18, one test (or more) each."""

from __future__ import annotations

import argparse
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import clawctx
from clawctx.cli import COMMANDS, MODEL_APIS, PROVIDERS, build_parser, main
from conftest import REPO

TORN_SESSION = (
    b'{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}\n'
    b'{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z",'
    b'"message":{"role":"user","content":"hi","timestamp":1}}\n'
    b'{"type":"mess\n'
    b'xx{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:00.000Z",'
    b'"message":{"role":"user","content":"again","timestamp":2}}\n'
)


def _not_sessions(tmp_path: Path) -> dict[str, Path]:
    files = {
        "binary": bytes(range(256)) * 16,  # 4 KB, no JSON at all
        "array": b'[{"type":"session","version":3,"id":"x","cwd":"/"}]\n',
        "headerless": b'{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"x"}}\n'
        b'{"type":"message","id":"b","parentId":"a","message":{"role":"user","content":"y"}}\n',
        "empty": b"",
    }
    paths = {}
    for name, data in files.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(data)
        paths[name] = path
    return paths


# ---- repair and inspect agree --------------------------------------------------------------


@pytest.mark.parametrize("kind", ["binary", "array", "headerless", "empty"])
def test_repair_and_inspect_reject_the_same_files_with_the_same_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    path = _not_sessions(tmp_path)[kind]
    before = path.read_bytes()
    assert main(["inspect", str(path)]) == 1
    inspect_err = capsys.readouterr().err
    assert main(["repair", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing reported as "ok"
    prefix = f"clawctx inspect: {path}: "
    assert inspect_err.startswith(prefix)
    reason = inspect_err[len(prefix) :].strip()
    assert reason
    assert captured.err == f"clawctx repair: {path}: skipped: not a session file ({reason})\n"
    assert path.read_bytes() == before  # neither command wrote
    assert main(["inspect", "--check", str(path)]) == 1


def test_a_binary_file_is_not_called_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _not_sessions(tmp_path)["binary"]
    assert main(["repair", str(path)]) == 1
    err = capsys.readouterr().err
    assert "empty" not in err and "ok" not in err
    assert "no valid JSON record" in err


# ---- repair --dry-run / --json / --verbose ---------------------------------------------------


def test_repair_dry_run_lists_each_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "torn.jsonl"
    path.write_bytes(TORN_SESSION)
    assert main(["repair", "--dry-run", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        f"{path}: would repair: dropped 1 malformed line(s), "
        "salvaged 1 record(s) from damaged line(s)"
    )
    assert out[1] == "  line 3: would be dropped: torn or invalid JSON (13 bytes dropped)"
    assert out[2] == "  line 4: would be salvaged: torn or invalid JSON (2 bytes dropped)"
    assert path.read_bytes() == TORN_SESSION
    assert sorted(p.name for p in tmp_path.iterdir()) == ["torn.jsonl"]  # no backup either
    # The dry run predicts exactly what the real repair then does.
    assert main(["repair", "--json", str(path)]) == 0
    [outcome] = json.loads(capsys.readouterr().out)
    assert outcome["status"] == "repaired"
    assert [(c["line"], c["kind"]) for c in outcome["changes"]] == [(3, "dropped"), (4, "salvaged")]
    assert Path(outcome["backup_path"]).read_bytes() == TORN_SESSION


def test_repair_json_reports_every_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.jsonl"
    clawctx.Session.create(good, cwd="/")
    bad = _not_sessions(tmp_path)["array"]
    status = main(
        ["repair", "--json", "--dry-run", str(good), str(bad), str(tmp_path / "no.jsonl")]
    )
    assert status == 1
    captured = capsys.readouterr()
    assert captured.err == ""
    outcomes = json.loads(captured.out)
    assert [o["status"] for o in outcomes] == ["ok", "skipped", "error"]
    assert outcomes[1]["reason"].startswith("not a session file (")
    assert outcomes[2]["reason"] == "no such file"


def test_repair_verbose_lists_the_changes_and_the_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "torn.jsonl"
    path.write_bytes(TORN_SESSION)
    assert main(["repair", "--verbose", "--delete-backup", str(path)]) == 0
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert out[0].startswith(f"{path}: repaired: dropped 1 malformed line(s)")
    assert out[1] == "  line 3: dropped: torn or invalid JSON (13 bytes dropped)"
    assert "clawctx: session file repaired" in captured.err
    # Without --verbose the library's log line does not duplicate the report.
    path.write_bytes(TORN_SESSION)
    assert main(["repair", "--delete-backup", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and len(captured.out.splitlines()) == 1


# ---- inspect --check and several files -------------------------------------------------------


def test_inspect_check_fails_only_for_damaged_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.jsonl"
    shutil.copyfile(clawctx.demo_session_path(), good)
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(TORN_SESSION)
    assert main(["inspect", "--check", str(good)]) == 0
    assert capsys.readouterr().out == f"{good}: ok\n"
    assert main(["inspect", "--check", str(good), str(torn)]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith(
        f"{good}: ok\n{torn}: damaged: line 3: skipped (torn or invalid JSON"
    )
    # Without --check, a damaged but readable file is reported with exit 0.
    assert main(["inspect", str(torn)]) == 0
    assert "damaged  2 line(s)" in capsys.readouterr().out


def test_inspect_takes_several_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(TORN_SESSION)
    demo = str(clawctx.demo_session_path())
    assert main(["inspect", "--json", demo, str(torn)]) == 0
    reports = json.loads(capsys.readouterr().out)
    assert [r["path"] for r in reports] == [demo, str(torn)]
    assert [r["damaged"] for r in reports] == [False, True]
    assert main(["inspect", demo, str(torn)]) == 0
    out = capsys.readouterr().out
    assert out.count("session  ") == 2
    # One unreadable file fails the run but not the others' reports.
    assert main(["inspect", demo, str(tmp_path / "missing.jsonl")]) == 1
    captured = capsys.readouterr()
    assert "session  " in captured.out
    assert captured.err == f"clawctx inspect: {tmp_path / 'missing.jsonl'}: no such file\n"


# ---- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["inspect", "repair", "assemble"])
def test_errors_go_to_stderr_naming_the_file_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    for target in (tmp_path, tmp_path / "missing.jsonl", _not_sessions(tmp_path)["binary"]):
        assert main([command, str(target)]) == 1
        captured = capsys.readouterr()
        assert captured.out == ""
        [line] = captured.err.splitlines()
        assert line.count(str(target)) == 1, line
        assert "os error" not in line and "Errno" not in line
        assert not re.search(r"Some\(|None\)|\w+ \{ ", line), line  # no Rust Debug text


# ---- assemble options -------------------------------------------------------------------------


def test_provider_and_model_api_are_validated_with_a_suggestion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["assemble", "--provider", "antropic"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "unknown value 'antropic' (did you mean 'anthropic'?)" in err
    with pytest.raises(SystemExit):
        main(["assemble", "--model-api", "openai-response"])
    assert "(did you mean 'openai-responses'?)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["assemble", "--model-api", "zzz"])
    err = capsys.readouterr().err
    assert "did you mean" not in err and "choose from anthropic-messages" in err


def test_help_lists_the_choices(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["assemble", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in PROVIDERS + MODEL_APIS:
        assert name in text


@pytest.mark.parametrize("command", ["assemble", "inspect"])
@pytest.mark.parametrize("value", ["0", "-5", "lots"])
def test_context_window_must_be_positive(
    capsys: pytest.CaptureFixture[str], command: str, value: str
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--context-window", value])
    assert exit_info.value.code == 2
    assert "argument --context-window" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [[], ["assemble"], ["inspect"], ["repair"]])
def test_help_has_no_rest_markup_and_ends_with_examples(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    text = capsys.readouterr().out
    assert "``" not in text and ":class:" not in text and ":func:" not in text
    tail = text.rstrip().split("\n\n")[-1].splitlines()
    assert tail[0] == "examples:"
    assert all(line.startswith("  clawctx ") for line in tail[1:])


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_is_registered_from_what_its_module_declares(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    # clawctx/cli/__init__.py builds every subcommand the same way from its module's SUMMARY,
    # DESCRIPTION, EXAMPLES, add_arguments and run (the Command protocol in cli/_common.py).
    command = COMMANDS[name]
    with pytest.raises(SystemExit):
        main(["--help"])
    listing = " ".join(capsys.readouterr().out.split())
    assert f"{name} {' '.join(command.SUMMARY.split())}" in listing
    with pytest.raises(SystemExit):
        main([name, "--help"])
    text = capsys.readouterr().out
    assert " ".join(command.DESCRIPTION.split()) in " ".join(text.split())
    assert text.rstrip().endswith(command.EXAMPLES.rstrip())
    assert f"usage: clawctx {name} " in text
    # A usage error shows the subcommand's usage line, not the top-level one.
    with pytest.raises(SystemExit) as exit_info:
        main([name, "--no-such-option"])
    assert exit_info.value.code == 2
    assert f"usage: clawctx {name} " in capsys.readouterr().err
    args = build_parser().parse_args([name, "--help"][:1] + _minimal_args(name))
    assert args.handler is command.run


def _minimal_args(name: str) -> list[str]:
    """Arguments that satisfy the command's required ones (nothing runs)."""
    return {
        "convert": ["in.jsonl", "-o", "out.jsonl"],
        "repair": ["s.jsonl"],
        "report": ["s.jsonl"],
        "cache": ["s.jsonl"],
        "scan": ["."],
        "doctor": ["s.jsonl"],
    }.get(name, [])


# ---- layout and colour ---------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_without_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    terminal = _Terminal()
    monkeypatch.setattr("sys.stdout", terminal)
    assert main(["inspect"]) == 0
    assert "\x1b[" in terminal.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    terminal = _Terminal()
    monkeypatch.setattr("sys.stdout", terminal)
    assert main(["inspect"]) == 0
    assert "\x1b[" not in terminal.getvalue()
    assert "version  3 (current)" in terminal.getvalue()
    monkeypatch.delenv("NO_COLOR")
    piped = io.StringIO()
    monkeypatch.setattr("sys.stdout", piped)
    assert main(["inspect"]) == 0
    assert "\x1b[" not in piped.getvalue()


def test_rich_output_keeps_the_system_prompt_text(monkeypatch: pytest.MonkeyPatch) -> None:
    # The system prompt holds [brackets] that rich markup would eat; it must print verbatim.
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    terminal = _Terminal()
    monkeypatch.setattr("sys.stdout", terminal)
    assert main(["assemble", "--prompt", "hi [bold]there[/bold]"]) == 0
    plain = re.sub(r"\x1b\[[0-9;]*m", "", terminal.getvalue())
    assert "user: hi [bold]there[/bold]" in plain
    assert "<available_skills>" in plain


def test_assemble_prints_the_summary_first_and_the_system_prompt_last(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["assemble"]) == 0
    out = capsys.readouterr().out
    report, messages, system = (
        out.index("=== report ==="),
        out.index("=== messages ("),
        out.index("=== system prompt ==="),
    )
    assert report == 0 and report < messages < system
    assert out.rstrip().endswith(out[system:].splitlines()[-1])
    assert "system prompt: " in out[:messages] and " lines (printed last)" in out[:messages]


# ---- the demo -------------------------------------------------------------------------------------


def test_demo_prompt_has_no_missing_files_and_a_real_heartbeat_prompt(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from clawctx.history.heartbeat import DEFAULT_HEARTBEAT_PROMPT

    assert main(["assemble", "--json"]) == 0
    system = json.loads(capsys.readouterr().out)["system_prompt"]
    assert "[MISSING]" not in system
    assert "Heartbeat prompt: (configured)" not in system
    assert f"Heartbeat prompt: {DEFAULT_HEARTBEAT_PROMPT}" in system
    assert "site-packages" not in system or "[MISSING]" not in system


def test_inspect_and_assemble_explain_the_thinking_level(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["inspect", "--json"]) == 0
    recorded = json.loads(capsys.readouterr().out)["thinking_level"]
    assert recorded == "medium"
    assert main(["inspect"]) == 0
    assert "thinking level medium (as recorded in the session file)" in capsys.readouterr().out
    assert main(["assemble"]) == 0
    out = capsys.readouterr().out
    think = next(line for line in out.splitlines() if line.startswith("think level: "))
    assert "(model default)" in think and f"records thinking level {recorded}" in think
    # get-reply-run.ts's shorthand: a prompt starting with a level word sets the level.
    assert main(["assemble", "--prompt", "high what changed?"]) == 0
    out = capsys.readouterr().out
    assert "think level: high (the level word the prompt starts with)" in out


def test_parser_is_buildable_without_side_effects() -> None:
    assert build_parser().prog == "clawctx"


def test_the_docs_page_lists_every_option() -> None:
    page = (REPO / "docs" / "guide" / "cli.md").read_text(encoding="utf-8")
    parser = build_parser()
    commands = next(
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    )
    for name, sub in commands.choices.items():
        assert f"## `clawctx {name}`" in page
        for action in sub._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert option in page, (name, option)


def test_a_closed_pipe_stops_quietly() -> None:
    with subprocess.Popen(
        # Far more than a pipe buffer holds (a report is about 1.5 KB).
        [sys.executable, "-m", "clawctx", "inspect", *[str(clawctx.demo_session_path())] * 200],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()  # like `| head -1`
        err = process.stderr.read()
        process.wait(timeout=60)
    assert b"Traceback" not in err and b"BrokenPipeError" not in err


def test_assemble_payload_prints_the_request_body(capsys: pytest.CaptureFixture[str]) -> None:
    # The demo session through the default Anthropic model: the body pi-ai would send.
    assert main(["assemble", "--payload"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["model"] == "claude-sonnet-4-5"
    assert body["stream"] is True
    assert body["messages"][-1]["role"] == "user"
    assert isinstance(body["system"], list)


def test_assemble_payload_for_an_openai_model(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["assemble", "--payload", "--provider", "openai", "--model-api", "openai-responses"]
    assert main([*argv, "--model", "gpt-5"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["model"] == "gpt-5"
    assert "input" in body
