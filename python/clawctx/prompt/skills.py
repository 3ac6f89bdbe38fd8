"""Workspace skills: ``skills/<name>/SKILL.md`` files whose front matter names and describes
them (OpenClaw 2026.3.13 `src/agents/skills/workspace.ts`, ``buildWorkspaceSkillsPrompt``; the
block text is pi-mono 0.58.3 `packages/coding-agent/src/core/skills.ts`). The system prompt lists
them in ``<available_skills>``; the model reads a skill's file only when its description matches
the task.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from clawctx.prompt._file_cache import FileCache, now_ns
from clawctx.prompt.system_prompt import Skill

__all__ = ["load_workspace_skills", "parse_skill_front_matter"]

#: A SKILL.md larger than this is not read (front matter sits at the top of a small file).
_MAX_SKILL_FILE_BYTES: Final = 256 * 1024
_TRUE_WORDS: Final = frozenset({"true", "yes", "on", "1"})


def parse_skill_front_matter(text: str) -> dict[str, str]:
    """The ``key: value`` lines of a leading ``---`` … ``---`` block (quotes around a value
    removed). Files without front matter give ``{}``. Only flat scalar keys are read — the
    subset of YAML skill files use for ``name``, ``description`` and
    ``disable-model-invocation``."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    fields: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            return fields
        key, sep, value = line.partition(":")
        if not sep or line[:1].isspace():
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        fields[key.strip()] = value
    return {}  # an unterminated block is not front matter


#: Front matter read from SKILL.md files in this process, reused while a file is unchanged.
_FRONT_MATTER: FileCache[dict[str, str] | None] = FileCache()


def _front_matter(real: Path) -> dict[str, str] | None:
    """The front matter of the SKILL.md at ``real`` (``None``: not a regular file, or too
    large), reused while the file is unchanged. Raises ``OSError`` when it cannot be read."""
    with open(real, "rb") as f:
        info = os.fstat(f.fileno())
        kept = _FRONT_MATTER.get(real, info)
        if kept is not None:
            return kept
        read_at = now_ns()
        fields: dict[str, str] | None = None
        if stat.S_ISREG(info.st_mode) and info.st_size <= _MAX_SKILL_FILE_BYTES:
            text = f.read(_MAX_SKILL_FILE_BYTES + 1).decode("utf-8", errors="replace")
            fields = parse_skill_front_matter(text)
    _FRONT_MATTER.put(real, info, fields, read_at_ns=read_at)
    return fields


def load_workspace_skills(workspace_dir: str | os.PathLike[str]) -> list[Skill]:
    """Skills in ``<workspace>/skills/*/SKILL.md``, sorted by directory name. A skill's name
    defaults to its directory name; files without a description, unreadable files and entries
    that resolve outside the workspace (symlinks) are skipped. ``location`` is the SKILL.md
    path, which the model reads with the ``read`` tool. A SKILL.md read before in this process
    and unchanged since (device, inode, size and times) is not read again."""
    root = Path(workspace_dir)
    skills_dir = root / "skills"
    if not skills_dir.is_dir():
        return []
    real_root = root.resolve()
    skills: list[Skill] = []
    for entry in sorted(skills_dir.iterdir(), key=lambda p: p.name):
        skill_file = entry / "SKILL.md"
        try:
            real = skill_file.resolve(strict=True)
            # is_file first: opening a FIFO would wait for a writer.
            if not real.is_relative_to(real_root) or not real.is_file():
                continue
            fields = _front_matter(real)
        except OSError:
            continue
        if fields is None:
            continue
        description = fields.get("description", "").strip()
        if not description:
            continue
        skills.append(
            Skill(
                name=fields.get("name", "").strip() or entry.name,
                description=description,
                location=str(skill_file),
                disable_model_invocation=(
                    fields.get("disable-model-invocation", "").strip().lower() in _TRUE_WORDS
                ),
            )
        )
    return skills
