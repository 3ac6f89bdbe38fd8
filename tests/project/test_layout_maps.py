"""The layout maps the prose draws agree with the import-graph tables and with the folders.

Three documents draw the stages: the README's "Layout" tree, ``CONTRIBUTING.md``'s "Layout in
one paragraph" (the ``a`` → ``b`` chains) and ``docs/index.md`` (the chain and the API pages).
``test_import_graph.py`` holds the order the imports are checked against (``RUST_STAGES``,
``PYTHON_LAYERS``); a stage added there, or a folder added under ``rust/core/src`` or
``python/clawctx``, fails here until every map shows it in its place.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).resolve().parent


def _import_graph() -> ModuleType:
    # Loaded by path: the tables live in the test module that enforces them.
    spec = importlib.util.spec_from_file_location(
        "_import_graph_tables", HERE / "test_import_graph.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GRAPH = _import_graph()
REPO: Path = GRAPH.REPO
RUST_STAGES: tuple[str, ...] = GRAPH.RUST_STAGES
PYTHON_LAYERS: dict[str, int] = GRAPH.PYTHON_LAYERS
PACKAGE = REPO / "python" / "clawctx"
CORE_SRC = REPO / "rust" / "core" / "src"

#: Layer-0 modules (private helpers, errors), the demo data helper and the entry points are
#: not stages; the maps name the package's stages and what sits on top of them.
NOT_DRAWN = {"", "__main__", "demo"}
#: Every drawn Python part, in import order (ties keep the table's order).
PYTHON_PARTS = [
    name
    for name, layer in sorted(PYTHON_LAYERS.items(), key=lambda item: item[1])
    if layer > 0 and name not in NOT_DRAWN
]
#: The pipeline stages proper (each imports only those before it); the rest sit on top.
TOP = max(PYTHON_LAYERS.values())
PYTHON_STAGES = [name for name in PYTHON_PARTS if PYTHON_LAYERS[name] < TOP]
ON_TOP = [name for name in PYTHON_PARTS if PYTHON_LAYERS[name] == TOP]


def _text(relative: str) -> str:
    return (REPO / relative).read_text(encoding="utf-8")


def _tree_entries(tree: str, root: str) -> list[str]:
    """The names listed two spaces in below the line that starts with ``root``."""
    lines = tree.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(root))
    names = []
    for line in lines[start + 1 :]:
        if line and not line.startswith(" "):
            break
        match = re.match(r"^  (\w+)(/|\.py)\s", line)
        if match:
            names.append(match.group(1))
    return names


def _readme_tree() -> str:
    section = _text("README.md").split("\n## Layout\n", 1)[1]
    match = re.search(r"^```\n(.*?)^```$", section, re.S | re.M)
    assert match, "README.md: the Layout section has no tree"
    return match.group(1)


def _chains(text: str) -> list[list[str]]:
    """Every chain of backticked names joined by arrows: `a` → `b` → `c`."""
    found = re.findall(r"`\w+`(?:\s*→\s*`\w+`)+", text)
    return [re.findall(r"`(\w+)`", chain) for chain in found]


def _real_rust_stages() -> set[str]:
    return {path.name for path in CORE_SRC.iterdir() if (path / "mod.rs").is_file()}


def _real_python_parts() -> set[str]:
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in PACKAGE.glob("*.py") if not p.stem.startswith("_")}
    return (packages | modules) - {"errors"} - NOT_DRAWN


def test_the_tables_cover_the_folders() -> None:
    assert set(RUST_STAGES) == _real_rust_stages()
    assert set(PYTHON_PARTS) == _real_python_parts()


def test_the_readme_tree_draws_every_rust_stage_in_order() -> None:
    assert _tree_entries(_readme_tree(), "rust/core/src/") == list(RUST_STAGES)


def test_the_readme_tree_draws_every_python_part_in_import_order() -> None:
    drawn = _tree_entries(_readme_tree(), "python/clawctx/")
    assert sorted(drawn) == sorted(PYTHON_PARTS)
    layers = [PYTHON_LAYERS[name] for name in drawn]
    assert layers == sorted(layers), drawn
    for name in drawn:
        assert (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file(), name


def test_contributing_draws_both_chains() -> None:
    paragraph = _text("CONTRIBUTING.md").split("## Layout in one paragraph", 1)[1]
    paragraph = paragraph.split("\n## ", 1)[0]
    chains = _chains(paragraph)
    assert list(RUST_STAGES) in chains, chains
    assert PYTHON_STAGES in chains, chains
    for name in ON_TOP:
        assert f"`{name}`" in paragraph, name


def test_the_docs_index_draws_the_python_chain_and_every_stage_page() -> None:
    text = _text("docs/index.md")
    assert PYTHON_STAGES in _chains(text), _chains(text)
    for name in ON_TOP:
        assert f"`{name}`" in text, name
    for name in PYTHON_PARTS:
        if (REPO / "docs" / "api" / f"{name}.md").is_file():
            assert f"](api/{name}.md)" in text, name
    for name in PYTHON_STAGES:
        assert (REPO / "docs" / "api" / f"{name}.md").is_file(), name


def test_the_import_graph_docstring_draws_the_rust_order() -> None:
    order = " < ".join(f"``{stage}``" for stage in RUST_STAGES)
    assert order in re.sub(r"\s+", " ", GRAPH.__doc__ or "")


@pytest.mark.parametrize(
    "tree",
    [
        "rust/core/src/ x\n  base/ a\n  other/ b\nrust/core/tests/ c\n",
        "rust/core/src/ x\n  transcript/ a\n  base/ b\n",
    ],
)
def test_a_wrong_map_is_caught(tree: str) -> None:
    # The parser reads what a reader sees: a missing, extra or misplaced stage differs.
    assert _tree_entries(tree, "rust/core/src/") != list(RUST_STAGES)
