"""Every Python block of the README and of the guide runs as written, and type-checks with
mypy --strict.

The README's blocks run in order in one namespace, in an empty directory. Each guide page
(``docs/guide/*.md``) does the same after the blocks of ``docs/guide/index.md`` (the setup the
guide states there: a copy of the demo session and stand-ins for a model client).
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import clawctx
from conftest import REPO

ROOT = REPO
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "guide"
GUIDE_SETUP = GUIDE / "index.md"

_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def blocks(page: Path) -> list[str]:
    """The ```python blocks of a page, in order."""
    return _BLOCK.findall(page.read_text(encoding="utf-8"))


def guide_pages() -> list[Path]:
    return sorted(p for p in GUIDE.glob("*.md") if p != GUIDE_SETUP)


def program(page: Path) -> list[tuple[str, str]]:
    """(label, source) of every block a page's examples run: the guide's setup first."""
    setup = [] if page == README else blocks(GUIDE_SETUP)
    own = [] if page == GUIDE_SETUP else blocks(page)
    name = page.relative_to(ROOT)
    return [
        (f"{GUIDE_SETUP.relative_to(ROOT)} python block {i + 1}", b) for i, b in enumerate(setup)
    ] + [(f"{name} python block {i + 1}", b) for i, b in enumerate(own)]


PAGES = [README, GUIDE_SETUP, *guide_pages()]


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def test_the_readme_and_the_guide_have_python_blocks() -> None:
    assert len(blocks(README)) >= 1
    assert len(blocks(GUIDE_SETUP)) >= 1
    assert sum(len(blocks(page)) for page in guide_pages()) >= 15
    # One page per stage, at least (the nav of mkdocs.yml lists them).
    names = {page.name for page in guide_pages()}
    assert {"sessions.md", "hygiene.md", "prompt.md", "pipeline.md", "wire-and-interop.md"} <= names
    assert {"fleet-and-report.md", "cli.md", "guarantees.md", "performance.md"} <= names
    assert "compatibility.md" in names


def test_every_guide_page_is_in_the_site_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in [GUIDE_SETUP, *guide_pages()]:
        assert f"guide/{page.name}" in nav, page.name


def _expectations(page: Path, namespace: dict[str, object]) -> None:
    """A few outcomes the pages state in their comments."""
    if page.name == "hygiene.md":
        assert namespace["limit"] == 20
    if page.name == "sessions.md":
        result = namespace["result"]
        assert isinstance(result, clawctx.CompactionResult)
        assert result.summary.startswith("## Goal")
    if page == README:
        assert isinstance(namespace["body"], dict) and namespace["body"]["messages"]
        # The real SDK's stream was read and appended: the last message is the reply.
        reply = namespace["reply"]
        assert isinstance(reply, dict) and reply["stopReason"] == "stop"
        assert reply["usage"]["input"] == 2100 and reply["usage"]["output"] == 9


# The anthropic SDK warns that the examples' model id (pi-ai 0.58.3's claude-sonnet-4-5)
# reaches its end of life on 2026-11-30; a reader sees the warning, the test does not fail on it.
@pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")
@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_block_runs_in_order(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = clawctx.demo_session_path()
    before = demo.read_bytes()
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    for label, block in program(page):
        exec(compile(block, label, "exec"), namespace)
    # The blocks worked on a copy: the bundled demo is never modified.
    assert demo.read_bytes() == before
    _expectations(page, namespace)


def test_the_sessions_page_appends_to_its_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    for label, block in program(GUIDE / "sessions.md"):
        exec(compile(block, label, "exec"), namespace)
    assert (tmp_path / "session.jsonl").read_bytes() != clawctx.demo_session_path().read_bytes()


def test_blocks_type_check(tmp_path: Path) -> None:
    # One mypy run: each page is a module of its own (its setup, then its blocks).
    pytest.importorskip("mypy")
    modules = []
    for page in PAGES:
        module = tmp_path / (re.sub(r"\W", "_", page.stem.lower()) + f"_{len(modules)}.py")
        module.write_text("\n\n".join(b for _, b in program(page)), encoding="utf-8")
        modules.append(str(module))
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
            *modules,
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
    assert any(link.startswith("docs/guide/") for link in links)
    for link in links:
        assert (ROOT / link).exists(), link
    # Anchors name a heading of the page (mkdocs and GitHub slugs agree for plain headings).
    for page, anchor in re.findall(r"\]\((docs/[^)#]+)#([^)]+)\)", text):
        headings = re.findall(r"^#+ (.+)$", (ROOT / page).read_text(encoding="utf-8"), re.M)
        slugs = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in headings}
        assert anchor in slugs, (page, anchor)


def test_the_readme_is_a_front_door() -> None:
    # The reference lives in docs/guide/; the README stays short enough to read.
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 300


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


def test_the_two_commands_and_ci_agree() -> None:
    # The README's two commands, verbatim; .ci/run runs the second one as written.
    section = README.read_text(encoding="utf-8").split("## Two commands", 1)[1].split("\n## ", 1)[0]
    install, test = re.findall(r"^```sh\n(.*?)\n```$", section, re.S | re.M)
    assert install.startswith("python -m pip install . && clawctx assemble ")
    assert (
        test
        == 'python -m pip install ".[test]" && python -m pytest && cargo test --workspace --exclude clawctx-python'
    )
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert any(line == test or line.startswith(f"{test} || exit 1") for line in ci)
