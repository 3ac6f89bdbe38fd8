"""``clawctx cache SESSION``: per-turn hit rates, breaks with causes and costs (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clawctx.cli import main
from clawctx.engine import cache_report

MODEL = ("anthropic-messages", "anthropic", "claude-sonnet-4-5")


def _usage(inp: int, read: int, write: int) -> dict[str, Any]:
    # Sonnet prices per token: cache writes $3.75/M, reads $0.30/M.
    return {
        "input": inp,
        "output": 10,
        "cacheRead": read,
        "cacheWrite": write,
        "totalTokens": inp + read + write + 10,
        "cost": {
            "input": inp * 3e-6,
            "output": 10 * 15e-6,
            "cacheRead": read * 0.3e-6,
            "cacheWrite": write * 3.75e-6,
            "total": 0.0,
        },
    }


def _write_session(
    path: Path, model_of_last: tuple[str, str, str] = MODEL, *, second_compaction: bool = False
) -> None:
    lines: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": "s1",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": "/tmp",
        }
    ]
    parent: str | None = None
    n = 0

    def add(entry: dict[str, Any]) -> str:
        nonlocal parent, n
        n += 1
        entry_id = f"e{n}"
        lines.append(
            {
                "id": entry_id,
                "parentId": parent,
                "timestamp": f"2026-01-01T00:00:{n:02d}.000Z",
                **entry,
            }
        )
        parent = entry_id
        return entry_id

    def user(text: str) -> str:
        return add(
            {"type": "message", "message": {"role": "user", "content": text, "timestamp": n}}
        )

    def assistant(text: str, usage: dict[str, Any], model: tuple[str, str, str] = MODEL) -> str:
        api, provider, model_id = model
        return add(
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": text}],
                    "api": api,
                    "provider": provider,
                    "model": model_id,
                    "usage": usage,
                    "stopReason": "stop",
                    "timestamp": n,
                },
            }
        )

    user("first question " + "lorem ipsum " * 200)
    assistant("first answer", _usage(5, 0, 2000))
    user("second question")
    assistant("second answer", _usage(5, 2000, 20))
    kept = user("third question")
    add(
        {
            "type": "compaction",
            "summary": "The user asked two questions.",
            "firstKeptEntryId": kept,
            "tokensBefore": 2100,
        }
    )
    assistant("third answer", _usage(5, 0, 600))
    user("fourth question")
    assistant("fourth answer", _usage(5, 0, 650), model_of_last)
    if second_compaction:
        # The same summary text again: the bodies differ first after it.
        kept = user("fifth question")
        add(
            {
                "type": "compaction",
                "summary": "The user asked two questions.",
                "firstKeptEntryId": kept,
                "tokensBefore": 900,
            }
        )
        assistant("fifth answer", _usage(5, 0, 300))
        # A branch back to the third question: a rewritten history, no compaction since.
        parent = "e5"
        user("another fourth question")
        assistant("another fourth answer", _usage(5, 0, 300))
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_cache_json_reports_hit_rates_breaks_and_costs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = tmp_path / "s.jsonl"
    _write_session(session, ("anthropic-messages", "anthropic", "claude-opus-4-1"))
    assert main(["cache", str(session), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    turns = report["turns"]
    assert [t["index"] for t in turns] == [0, 1, 2, 3]
    # Hit rate from the recorded usage: cacheRead / (input + cacheRead + cacheWrite).
    assert turns[0]["hitRate"] == 0
    assert turns[1]["hitRate"] == pytest.approx(2000 / 2025)
    # The second turn's request extends the first one's.
    assert turns[0]["break"] is None and turns[1]["break"] is None
    # The compaction replaced the history with its summary: a break at the first message.
    brk = turns[2]["break"]
    assert brk["cause"] == "compaction"
    assert brk["path"].startswith("messages[0]")
    assert brk["rewriteTokens"] > 0
    # Priced at Sonnet's write premium over a read, from the recorded costs.
    assert brk["cost"] == pytest.approx(brk["rewriteTokens"] * (3.75e-6 - 0.3e-6))
    # The last turn ran on another model: nothing of the previous cache is read.
    assert turns[3]["break"]["cause"] == "model"
    assert turns[3]["break"]["path"] == "model"
    assert report["breaks"] == 2
    assert report["cacheWriteCost"] == pytest.approx((2000 + 20 + 600 + 650) * 3.75e-6)


def test_cache_text_output_and_library_call_agree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = tmp_path / "s.jsonl"
    _write_session(session)
    assert main(["cache", str(session)]) == 0
    out = capsys.readouterr().out
    assert "4 assistant turns" in out
    assert "BREAK compaction at messages[0]" in out
    report = cache_report(session)
    assert [t.cache_break.cause for t in report.breaks if t.cache_break] == ["compaction"]
    # A changed system prompt on every turn is no break: the same one is sent each time.
    with_prompt = cache_report(session, system_prompt="You are an agent.")
    assert len(with_prompt.breaks) == 1


def test_a_later_compaction_that_keeps_its_summary_is_named_as_such(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    _write_session(session, second_compaction=True)
    report = cache_report(session)
    causes = [(t.index, t.cache_break.cause) for t in report.turns if t.cache_break]
    # Turn 4 follows the second compaction: the summary message is the same, the history
    # after it is not; the session's compaction entry names the cause. Turn 5 switched
    # branches: a rewritten history.
    assert causes == [(2, "compaction"), (4, "compaction"), (5, "history_rewritten")]
    assert report.turns[4].cache_break is not None
    assert report.turns[4].cache_break.path.startswith("messages[1]")


def test_cache_missing_file_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cache", str(tmp_path / "none.jsonl")]) == 1
    assert "none.jsonl" in capsys.readouterr().err


def test_a_turn_pi_ai_cannot_build_is_reported_not_fatal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    from clawctx.errors import PayloadError

    # The module (the engine package exports its function under the same name).
    module = importlib.import_module("clawctx.engine.cache_report")

    session = tmp_path / "s.jsonl"
    _write_session(session)
    real = module.build_request_payload
    calls = 0

    def flaky(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise PayloadError("Unexpected token")
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "build_request_payload", flaky)
    report = module.cache_report(session)
    assert [t.rebuild_error for t in report.turns] == [None, "Unexpected token", None, None]
    # No request for turn 1, so turn 2 is compared with nothing.
    assert report.turns[2].cache_break is None
    # Without rebuilding: hit rates only.
    quick = module.cache_report(session, rebuild=False)
    assert quick.breaks == () and quick.turns[1].hit_rate == pytest.approx(2000 / 2025)


def test_a_parent_cycle_after_the_previous_turn_ends_the_boundary_walk(tmp_path: Path) -> None:
    # Two messages naming each other as parent, written after the first turn, and a turn on
    # them: the walk back for a compaction since the previous turn must end.
    import threading

    api, provider, model = MODEL

    def message(entry_id: str, parent: str | None, role: str) -> dict[str, Any]:
        body: dict[str, Any] = {"role": role, "content": f"{entry_id} text", "timestamp": 1}
        if role == "assistant":
            body = {
                "role": "assistant",
                "content": [{"type": "text", "text": f"{entry_id} text"}],
                "api": api,
                "provider": provider,
                "model": model,
                "usage": _usage(5, 0, 10),
                "stopReason": "stop",
                "timestamp": 1,
            }
        return {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": body,
        }

    lines = [
        {
            "type": "session",
            "version": 3,
            "id": "s",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": "/tmp",
        },
        message("u1", None, "user"),
        message("a1", "u1", "assistant"),
        message("x", "y", "user"),
        message("y", "x", "assistant"),
        message("a2", "x", "assistant"),
    ]
    session = tmp_path / "cycle.jsonl"
    session.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    reports: list[Any] = []
    worker = threading.Thread(target=lambda: reports.append(cache_report(session)), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "cache_report did not finish within 60 s"
    assert [t.entry_id for t in reports[0].turns] == ["a1", "y", "a2"]
