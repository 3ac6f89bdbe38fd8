"""Issue 29's command-line findings (tried as a new user would) and issue 27's over-window flag:
each finding, with the behaviour it asked for."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

import clawctx
from clawctx.cli import MODEL_APIS
from clawctx.history.scan import session_paths
from clawctx.wire import SUPPORTED_APIS

from .conftest import session_lines, text, write_session
from .test_doctor import Run

FOREIGN = Path(__file__).resolve().parents[1] / "fixtures" / "foreign"


def test_report_without_matplotlib_prints_the_install_hint(
    tmp_path: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the extra were not installed
    status, out, err = run_cli(
        "report", str(clawctx.demo_session_path()), "-o", str(tmp_path / "r.html")
    )
    assert status == 1 and out == ""
    assert err.strip().endswith('pip install "clawctx[report]"')
    assert "Traceback" not in err
    assert not (tmp_path / "r.html").exists()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/agent/s.jsonl (a session), root/.hidden/h.jsonl (a session), root/empty.jsonl."""
    root = tmp_path / "root"
    for rel in ("agent/s.jsonl", ".hidden/h.jsonl"):
        (root / rel).parent.mkdir(parents=True)
        write_session(root / rel, session_lines([text("user", "hi"), text("assistant", "hey")]))
    (root / "empty.jsonl").write_bytes(b"")
    return root


def test_scan_shows_paths_relative_to_the_root(tree: Path, run_cli: Run) -> None:
    status, out, _ = run_cli("scan", str(tree))
    assert status == 0
    rows = out.splitlines()[1:-1]
    assert [row.split()[0] for row in rows] == [".hidden/h.jsonl", "agent/s.jsonl", "empty.jsonl"]
    assert str(tree) not in out
    status, out, _ = run_cli("scan", str(tree), "--wide")
    assert str(tree / "agent" / "s.jsonl") in out
    status, out, _ = run_cli("scan", str(tree / "*" / "*.jsonl"))
    assert "agent/s.jsonl" in out and str(tree) not in out


def test_an_empty_file_is_an_empty_session(tree: Path, run_cli: Run) -> None:
    status, out, err = run_cli("scan", str(tree / "empty.jsonl"))
    assert (status, err) == (0, "")
    assert "1 file, 1 session, 0 errors" in out
    status, out, _ = run_cli("scan", str(tree / "empty.jsonl"), "--json")
    record = json.loads(out)
    assert record["error"] is None and record["format"] == "pi" and record["messages"] == 0


def test_scan_report_and_dask_count_the_same_folder_the_same_way(tree: Path) -> None:
    from clawctx.report._fleet import find_session_files

    scanned = session_paths(tree)
    assert len(scanned) == 3  # the hidden folder and the empty file included
    assert find_session_files([tree]) == scanned
    records = list(clawctx.history.scan.iter_sessions(tree))
    assert [r.error for r in records] == [None, None, None]
    if importlib.util.find_spec("dask") is not None and importlib.util.find_spec("fsspec"):
        from clawctx.dask import list_sessions

        assert sorted(Path(p.removeprefix("file://")) for p in list_sessions(str(tree))) == sorted(
            scanned
        )


@pytest.mark.parametrize("name", ["claude_small.jsonl", "codex_small.jsonl"])
def test_assemble_and_repair_on_a_foreign_file_point_to_convert(
    tmp_path: Path, run_cli: Run, name: str
) -> None:
    path = tmp_path / name
    shutil.copyfile(FOREIGN / name, path)
    before = path.read_bytes()
    label = "Claude Code" if name.startswith("claude") else "Codex"
    for command in ("assemble", "repair"):
        status, _, err = run_cli(command, str(path))
        assert status == 1
        assert f"a {label} transcript, not a pi session" in err, err
        assert f"clawctx convert {path} -o session.jsonl" in err
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_provider_alone_picks_its_api(run_cli: Run) -> None:
    status, out, _ = run_cli("assemble", "--provider", "openai", "--payload")
    assert status == 0
    body = json.loads(out)
    assert "input" in body and body["model"] == "gpt-5"  # an OpenAI Responses body
    status, out, _ = run_cli("assemble", "--provider", "google", "--payload")
    assert status == 0 and "contents" in json.loads(out)
    status, out, _ = run_cli("assemble", "--provider", "mistral", "--payload")
    assert status == 0 and json.loads(out)["model"] == "mistral-large-latest"


@pytest.mark.parametrize("api", MODEL_APIS)
def test_every_listed_api_works(api: str, run_cli: Run) -> None:
    assert "mistral-conversations" in MODEL_APIS
    status, out, err = run_cli("assemble", "--model-api", api)
    assert (status, err) == (0, ""), err
    status, out, err = run_cli("assemble", "--model-api", api, "--payload")
    if api == "google-gemini-cli":
        # pi-ai throws without the OAuth token Cloud Code Assist needs: the error says so.
        assert status == 1
        assert err.startswith(f"clawctx assemble: --payload: {api}: ")
        assert "OAuth" in err and "demo-session" not in err
    elif api in SUPPORTED_APIS:
        assert status == 0 and json.loads(out)
    else:
        # The cause is the API, not the session file.
        assert status == 1
        assert err.startswith(f"clawctx assemble: --payload: no request body for {api}")
        assert "demo-session" not in err


def test_inspect_check_writes_ok_and_damaged_to_one_stream(tmp_path: Path, run_cli: Run) -> None:
    good = write_session(tmp_path / "good.jsonl", session_lines([text("user", "hi")]))
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(good.read_bytes() + b'{"type":"mess')
    status, out, err = run_cli("inspect", "--check", str(good), str(torn))
    assert (status, err) == (1, "")
    lines = out.splitlines()
    assert lines[0] == f"{good}: ok"
    assert lines[1].startswith(f"{torn}: damaged: line 3: ")


def test_file_level_errors_name_no_line_0(tmp_path: Path, run_cli: Run) -> None:
    bad = tmp_path / "array.jsonl"
    bad.write_text("[1, 2]\n")
    status, out, err = run_cli("scan", str(bad), "--json")
    assert status == 1
    record = json.loads(out)
    assert record["error"].endswith("no valid JSON record in the file")
    assert "line 0" not in record["error"] and "line 0" not in err
    with pytest.raises(clawctx.ClawctxError) as caught:
        clawctx.Session.open(bad, read_only=True)
    assert "line 0" not in str(caught.value)


def test_one_file_reads_1_file(tree: Path, run_cli: Run) -> None:
    status, out, _ = run_cli("scan", str(tree / "agent" / "s.jsonl"))
    assert status == 0 and "1 file, 1 session, 0 errors," in out
    status, out, _ = run_cli("scan", str(tree))
    assert "3 files, 3 sessions, 0 errors," in out


@pytest.mark.parametrize(
    ("args", "usage"),
    [
        (("assemble", "--provider", "antropic"), "usage: clawctx assemble"),
        (("assemble", "--model-api", "anthropic"), "usage: clawctx assemble"),
        (("doctor", "x.jsonl", "--provider", "gemini"), "usage: clawctx doctor"),
        (("scan", "x", "--top", "0"), "usage: clawctx scan"),
    ],
)
def test_usage_errors_show_the_subcommands_usage(
    args: tuple[str, ...], usage: str, run_cli: Run
) -> None:
    status, _, err = run_cli(*args)
    assert status == 2
    assert err.startswith(usage), err


def test_assemble_flags_a_context_over_the_window(run_cli: Run) -> None:
    status, out, _ = run_cli("assemble", "--context-window", "1000")
    assert status == 0
    line = next(x for x in out.splitlines() if x.startswith("over the context window"))
    assert "against a 1,000-token window" in line
    status, out, _ = run_cli("assemble")
    assert "over the context window" not in out
