"""The layout stays one-way: no import cycle and no upward import, in Python or in Rust.

Python: ``python/clawctx`` is layered ``_core``/``_js``/``_deprecation``/``_compat``/``errors``
< ``history`` < ``wire`` < ``interop`` < ``prompt`` < ``runtime`` < ``engine`` <
``demo``/``cli``/``report``/``dask``/the package ``__init__``; a module imports only from its
own layer or below (imports under ``if TYPE_CHECKING:`` are exempt).
Rust: the stages of ``rust/core/src`` are ordered ``base`` < ``transcript`` < ``foreign`` <
``hygiene`` < ``token_count`` < ``session`` < ``compaction`` < ``payload`` < ``response``; a stage
uses only earlier stages, and only through their ``mod.rs`` surface. The binding crate never imports the Python package.

Run alone: ``python -m pytest tests/project/test_import_graph.py -v``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import REPO

PACKAGE = REPO / "python" / "clawctx"
CORE_SRC = REPO / "rust" / "core" / "src"
BINDING_SRC = REPO / "rust" / "python" / "src"

PYTHON_LAYERS = {
    "_core": 0,
    "_js": 0,
    "_deprecation": 0,
    "_compat": 0,
    "errors": 0,
    "history": 1,
    "wire": 2,
    "interop": 3,
    "prompt": 4,
    "runtime": 5,
    "engine": 6,
    "demo": 7,
    "cli": 7,
    "report": 7,
    "dask": 7,
    "__main__": 7,
    "": 7,  # the package's own __init__
}
RUST_STAGES = (
    "base",
    "transcript",
    "foreign",
    "hygiene",
    "token_count",
    "session",
    "compaction",
    "payload",
    "response",
)


def _module_name(path: Path) -> str:
    parts = ["clawctx", *path.relative_to(PACKAGE).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _python_layer(module: str) -> float:
    first = module.split(".")[1] if "." in module else ""
    return PYTHON_LAYERS[first]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(nodes: list[ast.stmt], *, lazy: bool = False) -> Iterator[tuple[str, bool]]:
    """(imported module, inside a function) for every clawctx import outside TYPE_CHECKING."""
    for node in nodes:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _imports(node.orelse, lazy=lazy)
            continue
        if isinstance(node, ast.Import):
            yield from ((alias.name, lazy) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                yield f"{node.module}.{alias.name}", lazy
        inner = lazy or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for field in ("body", "orelse", "finalbody", "handlers"):
            children = getattr(node, field, None)
            if isinstance(children, list):
                yield from _imports(children, lazy=inner)


def _python_graph() -> tuple[dict[str, set[str]], list[str]]:
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    # The native module and its stage submodules, known by their stubs (`_core/*.pyi`).
    modules.update({_module_name(path): path for path in (PACKAGE / "_core").glob("*.pyi")})
    assert "clawctx._core" in modules and "clawctx._core.session" in modules

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    upward: list[str] = []
    for module, path in modules.items():
        if path.suffix == ".pyi":
            continue
        graph[module] = set()
        for imported, lazy in _imports(ast.parse(path.read_text(encoding="utf-8")).body):
            target = resolve(imported) if imported.startswith("clawctx") else None
            if target is None or target == module:
                continue
            if _python_layer(target) > _python_layer(module):
                upward.append(f"{module} -> {target}")
            if not lazy:
                graph[module].add(target)
    return graph, upward


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return components


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_python_imports_go_down_the_pipeline() -> None:
    graph, upward = _python_graph()
    assert len(graph) > 30, "the package was not found"
    assert upward == []
    assert _cycles(graph) == []


def _rust_code(path: Path) -> str:
    """The file without comments and without its trailing unit-test module."""
    code = re.sub(r"//[^\n]*", "", path.read_text(encoding="utf-8"))
    return re.split(r"#\[cfg\(test\)\]\s*mod \w+", code)[0]


def _rust_stage_uses() -> dict[str, set[str]]:
    uses: dict[str, set[str]] = {stage: set() for stage in RUST_STAGES}
    for stage in RUST_STAGES:
        files = sorted((CORE_SRC / stage).rglob("*.rs"))
        assert files, f"rust/core/src/{stage}/ is missing"
        for path in files:
            for match in re.finditer(r"\bcrate::(\w+)(?:::(\w+))?", _rust_code(path)):
                used, item = match.group(1), match.group(2)
                if used == stage or used not in RUST_STAGES:
                    continue
                uses[stage].add(used)
                # Another stage is reached only through its mod.rs surface.
                past = (CORE_SRC / used / f"{item}.rs").is_file() or (
                    CORE_SRC / used / str(item) / "mod.rs"
                ).is_file()
                assert not past, (
                    f"{path.relative_to(REPO)} reaches past the surface: crate::{used}::{item}"
                )
    return uses


def _rust_file_uses(stage: str) -> dict[str, set[str]]:
    """Which files of a stage use which (``super::x`` from a file, ``super::super::x`` from a
    folder's file; a folder such as ``session/manager/`` counts as one file)."""
    root = CORE_SRC / stage
    names = {p.stem for p in root.glob("*.rs") if p.stem != "mod"}
    names |= {p.name for p in root.iterdir() if p.is_dir()}
    graph: dict[str, set[str]] = {name: set() for name in names}
    for path in root.rglob("*.rs"):
        rel = path.relative_to(root)
        if rel.parts == ("mod.rs",):
            continue
        module = rel.parts[0].removesuffix(".rs")
        depth = len(rel.parts) - (1 if rel.name == "mod.rs" else 0)
        code = _rust_code(path)
        pattern = r"\bsuper::" * depth + r"(\w+)|\bcrate::" + stage + r"::(\w+)"
        for match in re.finditer(pattern, code):
            used = match.group(1) or match.group(2)
            if used in names and used != module:
                graph[module].add(used)
    return graph


def test_rust_files_of_a_stage_use_each_other_one_way() -> None:
    # Issue 29: session/manager and session/leaf_context used each other; the backward
    # reader they share is session/tail, below both.
    graph = _rust_file_uses("session")
    assert {"tail", "header"} <= graph["manager"] and "manager" in graph["leaf_context"]
    for stage in RUST_STAGES:
        assert _cycles(_rust_file_uses(stage)) == [], stage


def test_rust_stages_use_only_earlier_stages() -> None:
    order = {stage: position for position, stage in enumerate(RUST_STAGES)}
    for stage, used in _rust_stage_uses().items():
        later = sorted(u for u in used if order[u] >= order[stage])
        assert later == [], f"{stage} uses later stages {later}"


def test_lib_rs_lists_each_stage_once() -> None:
    lib = (CORE_SRC / "lib.rs").read_text(encoding="utf-8")
    declared = re.findall(r"^pub mod (\w+);", lib, flags=re.MULTILINE)
    # `python` is no stage: the Python glue behind the core's `python` feature.
    assert re.search(r'#\[cfg\(feature = "python"\)\]\npub mod python;', lib)
    assert [m for m in declared if m != "python"] == list(RUST_STAGES)


@pytest.mark.parametrize("path", sorted(BINDING_SRC.glob("*.rs")), ids=lambda p: p.name)
def test_the_binding_never_imports_the_python_package(path: Path) -> None:
    assert not re.search(r"""\.import\(\s*"clawctx""", _rust_code(path))
