"""Workspace skills (skills/<name>/SKILL.md) for the system prompt's skills block
(OpenClaw 2026.3.13 `src/agents/skills/workspace.ts`, ``buildWorkspaceSkillsPrompt``; text by pi-mono 0.58.3
`packages/coding-agent/src/core/skills.ts`, ``formatSkillsForPrompt``)."""

from __future__ import annotations

import os
from pathlib import Path

from clawctx.prompt import (
    Skill,
    format_skills_for_prompt,
    load_workspace_skills,
    parse_skill_front_matter,
)


def _skill(root: Path, name: str, text: str) -> Path:
    path = root / "skills" / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_front_matter_is_read_from_a_leading_block_only() -> None:
    text = '---\nname: demo\ndescription: "Does: things"\n  nested: ignored\n---\n# Body\nkey: no\n'
    assert parse_skill_front_matter(text) == {"name": "demo", "description": "Does: things"}
    assert parse_skill_front_matter("# no front matter\n---\n") == {}
    assert parse_skill_front_matter("---\nname: unterminated\n") == {}
    assert parse_skill_front_matter("\ufeff---\nname: bom\n---\n") == {"name": "bom"}


def test_skills_are_loaded_sorted_with_defaults_and_skips(tmp_path: Path) -> None:
    beta = _skill(tmp_path, "beta", "---\ndescription: Second <skill>\n---\n")
    alpha = _skill(tmp_path, "alpha", "---\nname: first\ndescription: First\n---\n")
    _skill(tmp_path, "nodesc", "---\nname: x\n---\n")
    _skill(tmp_path, "hidden", "---\ndescription: H\ndisable-model-invocation: true\n---\n")
    skills = load_workspace_skills(tmp_path)
    assert skills == [
        Skill(name="first", description="First", location=str(alpha)),
        Skill(name="beta", description="Second <skill>", location=str(beta)),
        Skill(
            name="hidden",
            description="H",
            location=str(tmp_path / "skills/hidden/SKILL.md"),
            disable_model_invocation=True,
        ),
    ]
    block = format_skills_for_prompt(skills)
    assert "<name>beta</name>" in block and "Second &lt;skill&gt;" in block
    # disable_model_invocation skills are left out (pi formatSkillsForPrompt)
    assert "<name>hidden</name>" not in block


def test_skill_files_outside_the_workspace_are_ignored(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "skills" / "escape").mkdir(parents=True)
    outside = tmp_path / "SKILL.md"
    outside.write_text("---\ndescription: secret\n---\n", encoding="utf-8")
    os.symlink(outside, workspace / "skills" / "escape" / "SKILL.md")
    assert load_workspace_skills(workspace) == []
    assert load_workspace_skills(tmp_path / "missing") == []
