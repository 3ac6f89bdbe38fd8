"""Every Python block of the README runs as written, and type-checks with mypy --strict."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import clawctx

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def readme_blocks() -> list[str]:
    return _BLOCK.findall(README.read_text(encoding="utf-8"))


def test_the_readme_has_python_blocks() -> None:
    assert len(readme_blocks()) >= 8


def test_every_readme_block_runs_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = clawctx.demo_session_path()
    before = demo.read_bytes()
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    for index, block in enumerate(readme_blocks()):
        code = compile(block, f"README.md python block {index + 1}", "exec")
        exec(code, namespace)
    # The blocks worked on a copy: the bundled demo is never modified.
    assert demo.read_bytes() == before
    assert (tmp_path / "session.jsonl").read_bytes() != before  # the examples appended
    # A few outcomes the README states in its comments.
    assert namespace["limit"] == 20
    result = namespace["result"]
    assert isinstance(result, clawctx.CompactionResult)
    assert result.summary.startswith("## Goal")


def test_readme_blocks_type_check(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    source = "\n\n".join(readme_blocks())
    module = tmp_path / "readme_blocks.py"
    module.write_text(source, encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--follow-imports=silent",
            "--python-version",
            "3.10",
            str(module),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(clawctx.__file__).parent.parent)},
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(((?:docs|tests)/[^)#]+)(?:#[^)]*)?\)", text)
    assert any(link.startswith("docs/api/") for link in links)
    for link in links:
        assert (ROOT / link).exists(), link
    # Anchors name a heading of the page (mkdocs and GitHub slugs agree for plain headings).
    for page, anchor in re.findall(r"\]\((docs/[^)#]+)#([^)]+)\)", text):
        headings = re.findall(r"^#+ (.+)$", (ROOT / page).read_text(encoding="utf-8"), re.M)
        slugs = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in headings}
        assert anchor in slugs, (page, anchor)


def test_readme_documents_the_demo_helpers() -> None:
    text = README.read_text(encoding="utf-8")
    assert "clawctx.demo_session_path()" in text and "clawctx.demo_workspace_path()" in text


def test_context_pipeline_help_shows_a_short_signature() -> None:
    signature = str(inspect.signature(clawctx.ContextPipeline))
    assert "function" not in signature and "0x" not in signature
    assert "layout: 'SystemPromptLayout | None' = None" in signature
    assert len(signature) < 1200
    # None means OpenClaw's layout.
    pipeline = clawctx.ContextPipeline(
        model=clawctx.ModelSpec("anthropic", "anthropic-messages", "claude-sonnet-4-5"),
        workspace_dir=clawctx.demo_workspace_path(),
    )
    assert pipeline.layout is clawctx.OPENCLAW_LAYOUT


@pytest.mark.parametrize("stage", ["history", "wire", "interop", "prompt", "runtime", "engine"])
def test_the_api_reference_lists_every_public_name(stage: str) -> None:
    # A name added to a stage's __all__ needs its `::: clawctx.<stage>...NAME` line in the
    # reference page, or the site silently leaves it out.
    import importlib

    page = (ROOT / "docs" / "api" / f"{stage}.md").read_text(encoding="utf-8")
    documented = set(re.findall(rf"^::: clawctx\.{stage}\.(?:\w+\.)*(\w+)$", page, re.M))
    public = set(importlib.import_module(f"clawctx.{stage}").__all__)
    assert public - documented == set()
    assert documented - public == set()
