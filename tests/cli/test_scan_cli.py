"""`clawctx scan`: the table, every output format, sorting, --top, --jobs, exit codes and the
progress bar (on for a terminal, off otherwise)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import clawctx
from clawctx.cli import main
from clawctx.history import SessionSummary

HEADER = (
    '{"type":"session","version":3,"id":"%s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}'
)


def session_text(session_id: str, messages: int, chars: int) -> str:
    lines = [HEADER % session_id]
    parent = None
    for i in range(messages):
        entry = {
            "type": "message",
            "id": f"e{i}",
            "parentId": parent,
            "timestamp": f"2026-01-0{1 + i % 9}T00:00:00.000Z",
            "message": {"role": "user", "content": "y" * chars, "timestamp": i},
        }
        lines.append(json.dumps(entry))
        parent = f"e{i}"
    return "\n".join(lines) + "\n"


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    """small (2 x 4 chars), big (3 x 400 chars), mid (5 x 40 chars) under a tree, no errors."""
    root = tmp_path / "sessions"
    (root / "deep").mkdir(parents=True)
    (root / "small.jsonl").write_text(session_text("small", 2, 4))
    (root / "deep" / "big.jsonl").write_text(session_text("big", 3, 400))
    (root / "mid.jsonl").write_text(session_text("mid", 5, 40))
    (root / "notes.txt").write_text("not a session")
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["scan", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def json_lines(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


def test_table_lists_every_session_with_its_columns(
    sessions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, str(sessions))
    assert status == 0 and err == ""
    for heading in (
        "format",
        "size",
        "entries",
        "user",
        "assistant",
        "tool",
        "unpaired",
        "damaged",
        "compact",
        "branches",
        "model",
        "last activity",
    ):
        assert heading in out, heading
    for name in ("small.jsonl", "big.jsonl", "mid.jsonl"):
        assert name in out
    assert "notes.txt" not in out
    assert "3 files, 3 sessions, 0 errors, 352 estimated tokens" in out


def test_json_lines_carry_every_field(sessions: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, str(sessions), "--json", "--jobs", "2")
    assert status == 0
    records = json_lines(out)
    # Directories are walked in path order.
    assert [Path(str(r["path"])).name for r in records] == ["big.jsonl", "mid.jsonl", "small.jsonl"]
    assert all(list(r) == SessionSummary.fields for r in records)
    assert [r["estimated_tokens"] for r in records] == [300, 50, 2]
    assert {r["format"] for r in records} == {"pi"}


def test_csv(sessions: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, str(sessions), "--csv")
    assert status == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == SessionSummary.fields
    assert [row["session_id"] for row in rows] == ["big", "mid", "small"]
    assert rows[0]["error"] == "" and rows[0]["entries"] == "3"


def test_parquet(sessions: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parquet = pytest.importorskip("pyarrow.parquet")
    out_path = tmp_path / "records.parquet"
    status, out, _ = run(capsys, str(sessions), "--parquet", str(out_path), "--sort", "entries")
    assert status == 0 and f"wrote 3 records to {out_path}" in out
    table = parquet.read_table(out_path)
    assert table.column_names == SessionSummary.fields
    assert table.column("session_id").to_pylist() == ["small", "big", "mid"]
    status, _, err = run(capsys, str(sessions), "--parquet", str(tmp_path / "no" / "x.parquet"))
    assert status == 1 and "x.parquet" in err


def test_parquet_without_pyarrow(
    sessions: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    status, _, err = run(capsys, str(sessions), "--parquet", str(tmp_path / "x.parquet"))
    assert status == 1 and 'pip install "clawctx[arrow]"' in err


def test_sort_desc_and_top(sessions: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def ids(*flags: str) -> list[object]:
        status, out, _ = run(capsys, str(sessions), "--json", *flags)
        assert status == 0
        return [r["session_id"] for r in json_lines(out)]

    assert ids("--sort", "estimated_tokens") == ["small", "mid", "big"]
    assert ids("--sort=-estimated_tokens") == ["big", "mid", "small"]
    assert ids("--sort", "entries", "--desc") == ["mid", "big", "small"]
    assert ids("--sort=-entries", "--top", "2") == ["mid", "big"]
    assert ids("--top", "1") == ["big"]
    # The table obeys them too.
    status, out, _ = run(capsys, str(sessions), "--sort=-estimated_tokens", "--top", "1")
    assert status == 0 and "big.jsonl" in out and "small.jsonl" not in out


def test_missing_values_sort_last(
    sessions: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("garbage\n")
    for flag in ("--sort=session_id", "--sort=-session_id"):
        status, out, _ = run(capsys, str(bad), str(sessions), "--json", flag)
        assert status == 1
        assert json_lines(out)[-1]["error"] is not None


def test_errors_exit_1_and_name_the_file(
    sessions: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "unknown.jsonl"
    bad.write_text('{"hello": 1}\n')
    status, out, err = run(capsys, str(sessions), str(bad))
    assert status == 1
    assert f"clawctx scan: {bad}: " in err
    assert "error:" in out and "4 files, 3 sessions, 1 error," in out
    status, out, err = run(capsys, str(bad), "--json")
    assert status == 1 and json_lines(out)[0]["error"]


def test_globs_and_no_match(sessions: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, str(sessions / "**" / "b*.jsonl"), "--json")
    assert status == 0 and [r["session_id"] for r in json_lines(out)] == ["big"]
    status, out, err = run(capsys, str(sessions / "zzz*.jsonl"))
    assert status == 1 and out == "" and "no session files matched" in err


def test_bad_arguments_exit_2(sessions: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, str(sessions), "--sort", "nope")
    assert status == 2 and "unknown column 'nope'" in err
    for argv in (["--jobs", "0"], ["--top", "x"], ["--json", "--csv"]):
        with pytest.raises(SystemExit) as exit_info:
            main(["scan", str(sessions), *argv])
        assert exit_info.value.code == 2
    capsys.readouterr()


def test_jobs_gives_the_same_records(sessions: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, one, _ = run(capsys, str(sessions), "--json", "--jobs", "1")
    _, two, _ = run(capsys, str(sessions), "--json", "--jobs", "2")
    assert one == two


def test_progress_bar_on_a_terminal(
    sessions: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setenv("TERM", "xterm")
    status, out, err = run(capsys, str(sessions), "--json")
    assert status == 0 and len(json_lines(out)) == 3
    assert "scanning" in err and "3/3" in err


def test_no_progress_bar_when_not_a_terminal(sessions: Path) -> None:
    package_root = Path(clawctx.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    done = subprocess.run(
        [sys.executable, "-m", "clawctx", "scan", str(sessions)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "\x1b[" not in done.stdout
    assert "big.jsonl" in done.stdout and "3 files, 3 sessions" in done.stdout
