"""Workspace files and skills read once per process while unchanged (issue 32, item 1: the second
request reads nothing it read before)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx._core import Session
from clawctx.prompt import _file_cache, skills, workspace
from clawctx.prompt.skills import load_workspace_skills
from clawctx.prompt.workspace import load_workspace_bootstrap_files

#: A short racy window for the tests (the default is 2 s): files written before the sleep in
#: `_settle` count as settled.
WINDOW_NS = 50_000_000


@pytest.fixture(autouse=True)
def _fresh_caches(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_file_cache, "RACY_WINDOW_NS", WINDOW_NS)
    workspace._BOOTSTRAP_FILES.clear()
    skills._FRONT_MATTER.clear()
    yield
    workspace._BOOTSTRAP_FILES.clear()
    skills._FRONT_MATTER.clear()


def _settle() -> None:
    time.sleep(2 * WINDOW_NS / 1e9)


def _count_preads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records each ``os.pread`` (the workspace reader's only way of reading content)."""
    calls: list[str] = []
    real: Callable[..., bytes] = os.pread

    def counting(fd: int, size: int, offset: int) -> bytes:
        calls.append(os.readlink(f"/proc/self/fd/{fd}") if os.path.exists("/proc") else str(fd))
        return real(fd, size, offset)

    monkeypatch.setattr(os, "pread", counting)
    return calls


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "AGENTS.md").write_text("Be brief.\n")
    (root / "SOUL.md").write_text("Kind and exact.\n")
    (root / "MEMORY.md").write_text("The user likes tea.\n")
    skill = root / "skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: Ship it\n---\nSteps.\n")
    return root


def _contents(root: Path) -> dict[str, str | None]:
    return {f.name: f.content for f in load_workspace_bootstrap_files(root)}


def test_an_unchanged_workspace_is_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _workspace(tmp_path)
    _settle()
    first = load_workspace_bootstrap_files(root)
    reads = _count_preads(monkeypatch)
    second = load_workspace_bootstrap_files(root)
    assert second == first
    assert reads == []


def test_a_file_written_just_before_it_was_read_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Within the racy window the times may not show a second write in the same tick.
    monkeypatch.setattr(_file_cache, "RACY_WINDOW_NS", 3_600 * 10**9)
    root = _workspace(tmp_path)
    load_workspace_bootstrap_files(root)
    reads = _count_preads(monkeypatch)
    load_workspace_bootstrap_files(root)
    assert any(path.endswith("AGENTS.md") for path in reads)


def test_a_change_of_the_same_size_with_the_old_times_restored_is_seen(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    agents = root / "AGENTS.md"
    _settle()
    before = os.stat(agents)
    assert _contents(root)["AGENTS.md"] == "Be brief.\n"
    agents.write_text("Be vocal.\n")
    os.utime(agents, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(agents).st_size == before.st_size
    assert _contents(root)["AGENTS.md"] == "Be vocal.\n"


def test_a_replaced_file_is_read_again(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    agents = root / "AGENTS.md"
    _settle()
    before = os.stat(agents)
    assert _contents(root)["AGENTS.md"] == "Be brief.\n"
    replacement = root / "new.md"
    replacement.write_text("Be vocal.\n")
    os.utime(replacement, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(replacement, agents)
    assert _contents(root)["AGENTS.md"] == "Be vocal.\n"
    agents.unlink()
    files = {f.name: f for f in load_workspace_bootstrap_files(root)}
    assert files["AGENTS.md"].missing


def test_large_files_and_limits_are_kept_apart(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (root / "TOOLS.md").write_text("x" * 5000 + "\n")
    _settle()
    whole = {f.name: f for f in load_workspace_bootstrap_files(root)}["TOOLS.md"]
    windows = {f.name: f for f in load_workspace_bootstrap_files(root, max_file_bytes=1000)}
    assert whole.content_length is None and whole.content == "x" * 5000 + "\n"
    assert windows["TOOLS.md"].content_length == 5000
    # Head and tail windows of 500 bytes each, the trailing newline trimmed.
    assert windows["TOOLS.md"].content == "x" * 999


def test_skills_are_not_parsed_again_until_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _workspace(tmp_path)
    _settle()
    assert [s.description for s in load_workspace_skills(root)] == ["Ship it"]
    parsed: list[str] = []
    real = skills.parse_skill_front_matter

    def counting(text: str) -> dict[str, str]:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(skills, "parse_skill_front_matter", counting)
    assert [s.description for s in load_workspace_skills(root)] == ["Ship it"]
    assert parsed == []
    skill = root / "skills" / "deploy" / "SKILL.md"
    skill.write_text("---\nname: deploy\ndescription: Ship it now\n---\n")
    assert [s.description for s in load_workspace_skills(root)] == ["Ship it now"]
    assert len(parsed) == 1


def test_the_second_request_of_a_pipeline_reads_no_workspace_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _workspace(tmp_path)
    _settle()
    model = clawctx.ModelSpec(
        provider="anthropic", api="anthropic-messages", id="claude-sonnet-4-5"
    )
    pipeline = clawctx.ContextPipeline(
        model=model,
        workspace_dir=root,
        system_prompt=clawctx.SystemPromptParams(workspace_dir=str(root), tool_names=("read",)),
    )
    session = Session.create(tmp_path / "s.jsonl", cwd=str(root))
    first = pipeline.prepare(session, clawctx.PromptRequest(text="hello"))
    assert "Be brief." in first.system_prompt
    reads = _count_preads(monkeypatch)
    second: Any = pipeline.prepare(session, clawctx.PromptRequest(text="hello again"))
    assert second.system_prompt == first.system_prompt
    assert [r for r in reads if str(root) in r] == []
