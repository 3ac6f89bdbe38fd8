"""One convention for private modules, as httpx and pip have it: a module whose name starts with
an underscore is private (its subpackage re-exports what users need); every other module is
public and says what it exports in ``__all__``. The guides never point into a private module.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from conftest import REPO

PACKAGE = REPO / "python" / "clawctx"

#: Public-named modules without ``__all__``, each with the reason.
EXEMPT = {
    # A program, not an import API (``clawctx = clawctx.cli:main``); its commands are modules.
    "clawctx.cli": "the command line",
    # Owned by work in progress elsewhere (issue 29): they get their ``__all__`` there.
    "clawctx.history.hygiene": "being reworked (issue 29)",
    "clawctx.wire.payload": "being reworked (issue 29)",
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ["clawctx", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__main__":
            continue
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_exempt(module: str) -> bool:
    return any(module == name or module.startswith(f"{name}.") for name in EXEMPT)


def _declares_all(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        isinstance(node, ast.Assign | ast.AnnAssign)
        and any(
            isinstance(target, ast.Name) and target.id == "__all__"
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
        for node in tree.body
    )


def test_the_walk_finds_both_kinds() -> None:
    modules = _modules()
    assert "clawctx.interop._budget" in modules
    assert "clawctx.prompt.system_prompt" in modules
    assert _declares_all(modules["clawctx.prompt.system_prompt"])
    assert not _declares_all(modules["clawctx.interop._common"])


@pytest.mark.parametrize("module", sorted(_modules()))
def test_a_module_is_private_by_name_or_public_with_all(module: str) -> None:
    path = _modules()[module]
    private = any(part.startswith("_") for part in module.split(".")[1:])
    if private or _is_exempt(module):
        return
    assert _declares_all(path), (
        f"{module} is neither private (rename it _{module.rpartition('.')[2]}.py) nor public "
        "with __all__"
    )
    loaded = importlib.import_module(module)
    missing = [name for name in loaded.__all__ if not hasattr(loaded, name)]
    assert missing == [], f"{module}.__all__ names what it does not define: {missing}"


def test_exemptions_are_still_needed() -> None:
    modules = _modules()
    for module in EXEMPT:
        assert module in modules or any(m.startswith(f"{module}.") for m in modules), module
        if module in modules and module != "clawctx.cli":
            assert not _declares_all(modules[module]), f"{module} has __all__ now: drop it here"


def test_the_guides_never_point_into_a_private_module() -> None:
    texts = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").rglob("*.md"))]
    private = re.compile(r"\bclawctx(?:\.\w+)*\._(?!_|core\b)\w+")
    for path in texts:
        hits = private.findall(path.read_text(encoding="utf-8"))
        assert hits == [], f"{path.relative_to(REPO)} names private modules: {hits}"
