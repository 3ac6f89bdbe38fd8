"""``clawctx doctor`` and ``clawctx.doctor``: damage, leaf-path problems and per-provider
request validity, read-only unless ``--fix``."""

from __future__ import annotations

import base64
import json
import os
import struct
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import clawctx
from clawctx import _core
from clawctx.engine import DOCTOR_PROVIDERS, DoctorReport
from clawctx.engine import diagnose as doctor_module

from .conftest import call, result, session_lines, text, write_session

REPO = Path(__file__).resolve().parents[2]
FOREIGN = REPO / "tests" / "fixtures" / "foreign"
REAL = REPO.parent / "shared" / "realworld-transcripts" / "agent-history" / "tests"
REAL = REAL / "fixtures" / "real_sessions"

Run = Callable[..., tuple[int, str, str]]


def _png(width: int, height: int) -> str:
    """The base64 of a PNG header saying ``width`` x ``height`` (enough for the size probe)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return base64.b64encode(
        b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\0\0\0\0"
    ).decode()


def _clean() -> list[dict[str, Any]]:
    return [text("user", "read a.txt"), call("c1"), result("c1"), text("assistant", "done")]


def _kinds(report: DoctorReport) -> set[str]:
    return {f.kind for f in report.findings}


def test_the_demo_session_is_clean(run_cli: Run) -> None:
    report = clawctx.doctor(clawctx.demo_session_path())
    assert report.ok, report.findings
    assert set(report.providers) == set(DOCTOR_PROVIDERS)
    status, out, err = run_cli("doctor", str(clawctx.demo_session_path()))
    assert (status, err) == (0, "")
    assert ": ok (pi, 23 messages)" in out


def test_a_clean_crafted_session_is_clean(tmp_path: Path) -> None:
    report = clawctx.doctor(write_session(tmp_path / "s.jsonl", session_lines(_clean())))
    assert report.ok, report.findings
    assert report.messages == 4


def _compaction_cut() -> list[dict[str, Any]]:
    lines = session_lines(_clean())
    # The compaction keeps from the tool result (entry 3) on: its call (entry 2) is summarized.
    lines.append(
        {
            "type": "compaction",
            "id": "0000000c",
            "parentId": lines[-1]["id"],
            "timestamp": "2026-03-14T09:01:00.000Z",
            "summary": "read a.txt",
            "firstKeptEntryId": lines[3]["id"],
            "tokensBefore": 1000,
        }
    )
    return lines


def _image_session() -> list[dict[str, Any]]:
    message = text("user", "look")
    message["content"].append({"type": "image", "data": _png(3000, 2000), "mimeType": "image/png"})
    return session_lines([message, text("assistant", "a wide picture")])


CASES: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "unanswered-tool-call": lambda: session_lines(
        [text("user", "go"), call("c1", "c2"), result("c1"), text("assistant", "ok")]
    ),
    "orphaned-tool-result": lambda: session_lines(
        [text("user", "go"), text("assistant", "ok"), result("zz"), text("assistant", "ok")]
    ),
    "repeated-tool-call-id": lambda: session_lines(
        [text("user", "go"), call("c1"), result("c1"), call("c1"), result("c1")]
        + [text("assistant", "ok")]
    ),
    "compaction-cuts-pair": _compaction_cut,
    "empty-turn": lambda: session_lines(
        [text("user", "go"), {**text("assistant", ""), "content": []}, text("user", "again")]
        + [text("assistant", "ok")]
    ),
    "oversize-image": _image_session,
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_each_problem_is_found(tmp_path: Path, run_cli: Run, kind: str) -> None:
    path = write_session(tmp_path / "s.jsonl", CASES[kind]())
    report = clawctx.doctor(path)
    assert kind in _kinds(report), report.findings
    assert not report.ok
    status, out, _ = run_cli("doctor", str(path))
    assert status == 1
    assert f"  {kind}" in out


def test_the_clean_baselines_of_the_cases_are_clean(tmp_path: Path) -> None:
    # The same shapes without the problem: nothing is reported, so each case above is its
    # problem and not the shape around it.
    lines = session_lines(_clean())
    lines.append({**_compaction_cut()[-1], "firstKeptEntryId": lines[1]["id"]})
    assert clawctx.doctor(write_session(tmp_path / "a.jsonl", lines)).ok
    small = _image_session()
    small[1]["message"]["content"][1]["data"] = _png(800, 600)
    assert clawctx.doctor(write_session(tmp_path / "b.jsonl", small)).ok


def test_damage_is_found_as_repair_sees_it(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", session_lines(_clean()))
    with path.open("ab") as f:
        f.write(b'{"type":"message","id":"x\x00y"}\n{"type":"mess')
    report = clawctx.doctor(path)
    damaged = [f for f in report.findings if f.kind == "damaged-line"]
    assert [f.line for f in damaged] == [6, 7]
    assert "NUL" in damaged[0].detail
    assert all(f.handled == "file" for f in damaged)


def test_bad_utf8_is_damage(tmp_path: Path) -> None:
    # Invalid UTF-8 that breaks a line (here before its record) is damage, as for `repair`;
    # inside a string of a valid line it is read as U+FFFD and left alone, as upstream does.
    path = write_session(tmp_path / "s.jsonl", session_lines(_clean()))
    lines = path.read_bytes().split(b"\n")
    lines[4] = b"\xff\xfe" + lines[4]
    path.write_bytes(b"\n".join(lines))
    details = [f.detail for f in clawctx.doctor(path).findings if f.kind == "damaged-line"]
    assert details and "UTF-8" in details[0]


def test_a_context_over_the_window_is_flagged(tmp_path: Path, run_cli: Run) -> None:
    path = write_session(tmp_path / "s.jsonl", session_lines(_clean()))
    assert clawctx.doctor(path).ok
    report = clawctx.doctor(path, context_window=5)
    assert "over-context-window" in _kinds(report)
    status, out, _ = run_cli("doctor", str(path), "--context-window", "5")
    assert status == 1 and "over the 5-token window" in out


def test_a_request_the_validator_rejects_is_reported_per_provider(
    tmp_path: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_session(tmp_path / "s.jsonl", session_lines(_clean()))
    seen: list[tuple[str | None, str | None]] = []
    real = clawctx.history.validate_for_provider

    def validate(messages: Any, *, provider: str | None, model_api: str | None) -> list[Any]:
        seen.append((provider, model_api))
        if model_api == "openai-responses":
            return [SimpleNamespace(index=2, rule="duplicate-call-id", detail="call_id c1 twice")]
        return real(messages, provider=provider, model_api=model_api)

    monkeypatch.setattr(doctor_module, "validate_for_provider", validate)
    report = clawctx.doctor(path)
    assert seen == list(DOCTOR_PROVIDERS.values())
    assert [f.provider for f in report.findings] == ["openai-responses"]
    assert report.providers["openai-responses"] == [
        "message 2: duplicate-call-id: call_id c1 twice"
    ]
    assert all(report.providers[p] == [] for p in DOCTOR_PROVIDERS if p != "openai-responses")


def test_provider_choice(tmp_path: Path, run_cli: Run) -> None:
    path = write_session(tmp_path / "s.jsonl", session_lines(_clean()))
    status, out, _ = run_cli("doctor", str(path), "--provider", "anthropic", "--json")
    assert status == 0
    assert list(json.loads(out)[0]["providers"]) == ["anthropic"]
    status, _, err = run_cli("doctor", str(path), "--provider", "antropic")
    assert status == 2
    assert "did you mean 'anthropic'" in err
    with pytest.raises(ValueError, match="known: anthropic"):
        clawctx.doctor(path, providers=["antropic"])


def test_json_schema(tmp_path: Path, run_cli: Run) -> None:
    path = write_session(tmp_path / "s.jsonl", CASES["unanswered-tool-call"]())
    status, out, _ = run_cli("doctor", str(path), str(clawctx.demo_session_path()), "--json")
    assert status == 1
    reports = json.loads(out)
    assert [r["ok"] for r in reports] == [False, True]
    keys = {"path", "format", "messages", "estimated_tokens", "context_window", "findings"}
    for r in reports:
        assert set(r) == keys | {"providers", "ok"}
        assert set(r["providers"]) == set(DOCTOR_PROVIDERS)
    finding = reports[0]["findings"][0]
    assert set(finding) == {"kind", "detail", "line", "provider", "handled"}
    assert finding["kind"] == "unanswered-tool-call" and finding["handled"] == "request"


def test_read_only_without_fix(tmp_path: Path, run_cli: Run) -> None:
    path = write_session(tmp_path / "s.jsonl", session_lines(_clean()))
    with path.open("ab") as f:
        f.write(b'{"type":"mess')
    os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    status, _, _ = run_cli("doctor", str(path))
    assert status == 1
    clawctx.doctor(path)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_fix_repairs_the_file_with_a_backup(tmp_path: Path, run_cli: Run) -> None:
    path = write_session(tmp_path / "s.jsonl", CASES["unanswered-tool-call"]())
    original = path.read_bytes() + b'{"type":"message","id":"x\x00"}\n'
    path.write_bytes(original)
    status, out, _ = run_cli("doctor", str(path), "--fix")
    assert status == 1  # it needed attention; the unanswered call is left to the request
    assert "fix: repaired" in out
    assert "handled when the request is built (the file keeps them): unanswered-tool-call" in out
    backups = [p for p in tmp_path.iterdir() if p.name != "s.jsonl"]
    assert len(backups) == 1 and backups[0].read_bytes() == original
    report, _ = _core.repair_session_bytes(path.read_bytes())
    assert not report.repaired
    assert "damaged-line" not in _kinds(clawctx.doctor(path))
    status, out, _ = run_cli("doctor", str(path), "--fix", "--json")
    assert json.loads(out)[0]["fix"]["repaired"] is False


def test_empty_file_is_an_empty_session(tmp_path: Path, run_cli: Run) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    assert clawctx.doctor(path).ok
    assert run_cli("doctor", str(path))[0] == 0


def test_not_a_session_needs_attention(tmp_path: Path, run_cli: Run) -> None:
    path = tmp_path / "list.jsonl"
    path.write_text('[{"type": "session"}]\n', encoding="utf-8")
    assert "not-a-session" in _kinds(clawctx.doctor(path))
    assert run_cli("doctor", str(path))[0] == 1
    status, _, err = run_cli("doctor", str(tmp_path / "missing.jsonl"))
    assert status == 1 and "missing.jsonl: no such file" in err


def test_claude_code_transcript(tmp_path: Path, run_cli: Run) -> None:
    path = tmp_path / "claude.jsonl"
    path.write_bytes((FOREIGN / "claude_small.jsonl").read_bytes())
    report = clawctx.doctor(path)
    assert report.format == "claude-code" and report.messages == 5
    assert [(f.kind, f.handled) for f in report.findings] == [("damaged-line", "convert")]
    before = path.read_bytes()
    status, out, _ = run_cli("doctor", str(path), "--fix")
    assert status == 1 and "clawctx convert skips them" in out
    assert path.read_bytes() == before  # a foreign file is never rewritten


def test_codex_transcript() -> None:
    report = clawctx.doctor(FOREIGN / "codex_compacted.jsonl")
    assert report.format == "codex"
    assert report.ok, report.findings


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/realworld-transcripts is absent")
@pytest.mark.parametrize("name", ["claude/session-01.jsonl", "codex/session-01.jsonl"])
def test_real_world_transcripts(name: str, run_cli: Run) -> None:
    path = REAL / name
    report = clawctx.doctor(path)
    assert report.format == ("codex" if name.startswith("codex") else "claude-code")
    assert report.messages > 0
    status, out, _ = run_cli("doctor", str(path), "--json")
    assert json.loads(out)[0]["format"] == report.format
    assert status == (0 if report.ok else 1)
