"""One error tree: every exception class clawctx defines is a ``ClawctxError`` and is drawn, with
its real bases, in the docstring of ``clawctx.errors``.

The classes are found twice: by reading every module's source (a class whose bases name an
exception) and by importing every module and the native module (any ``BaseException`` subclass
defined there), so neither a class behind an optional import nor one made in Rust is missed.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import re
from pathlib import Path

import pytest

import clawctx
from clawctx import _core, errors

PACKAGE = Path(clawctx.__file__).resolve().parent
#: Modules that import an optional extra at import time.
_OPTIONAL = {"clawctx.dask": "dask"}


def _module_name(path: Path) -> str:
    parts = ["clawctx", *path.relative_to(PACKAGE).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _source_exception_classes() -> dict[str, str]:
    """Class name -> defining module, for classes whose bases name an exception."""
    found: dict[str, str] = {}
    exceptionish = re.compile(r"(Error|Exception)$")
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [ast.unparse(base).rpartition(".")[2] for base in node.bases]
            if any(exceptionish.search(base) for base in bases) or exceptionish.search(node.name):
                found[node.name] = _module_name(path)
    return found


def _imported_exception_classes() -> dict[str, type[BaseException]]:
    classes: dict[str, type[BaseException]] = {}
    # ``clawctx.__main__`` runs the CLI when imported; it defines nothing.
    modules = {_module_name(path) for path in PACKAGE.rglob("*.py")} - {"clawctx.__main__"}
    modules.add("clawctx._core")
    for name in sorted(modules):
        if name in _OPTIONAL:
            pytest.importorskip(_OPTIONAL[name])
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__ == name
            ):
                classes[value.__name__] = value
    return classes


def _tree() -> list[tuple[int, str, list[str]]]:
    """(depth, class name, built-in bases in parentheses) per line of the docstring's tree."""
    doc = errors.__doc__ or ""
    block = doc.split("::", 1)[1].split("\n\n", 2)[1]
    rows = []
    for line in block.splitlines():
        match = re.match(r"( *)(\w+)(?:\(([\w, ]+)\))?", line)
        assert match, f"not a tree line: {line!r}"
        indent, name, bases = match.groups()
        rows.append(
            ((len(indent) - 4) // 4, name, [b.strip() for b in bases.split(",")] if bases else [])
        )
    return rows


def _class(name: str) -> type[BaseException]:
    classes = _imported_exception_classes()
    assert name in classes, f"{name} is in the tree but clawctx defines no such exception"
    return classes[name]


def test_the_tree_draws_the_real_inheritance() -> None:
    rows = _tree()
    assert rows[0][:2] == (0, "ClawctxError")
    parents: list[str] = []
    for depth, name, builtin_bases in rows:
        cls = _class(name)
        del parents[depth:]
        named = [_class(parents[-1])] if parents else []
        named += [getattr(builtins, base) for base in builtin_bases]
        assert list(cls.__bases__) == named, f"{name}: bases {cls.__bases__}, tree says {named}"
        parents.append(name)


def test_every_exception_class_is_a_clawctx_error_in_the_tree() -> None:
    in_tree = {name for _, name, _ in _tree()}
    imported = _imported_exception_classes()
    from_source = _source_exception_classes()
    assert from_source.keys() <= imported.keys(), "a class the source defines was not imported"
    assert len(imported) >= 11
    for name, cls in imported.items():
        assert issubclass(cls, _core.ClawctxError), f"{cls.__module__}.{name} is no ClawctxError"
        assert name in in_tree, f"{cls.__module__}.{name} is missing from clawctx.errors' tree"
    assert in_tree == imported.keys()


def test_public_errors_live_in_clawctx_errors_and_old_paths_still_work() -> None:
    from clawctx import engine, history, report, wire
    from clawctx.engine import context_engine, hooks

    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, _core.ClawctxError)
        assert cls.__doc__
    assert engine.HookError is hooks.HookError is errors.HookError
    assert (
        engine.ContextEngineNotRegisteredError
        is context_engine.ContextEngineNotRegisteredError
        is errors.ContextEngineNotRegisteredError
    )
    assert report.ReportDependencyError is errors.ReportDependencyError
    assert wire.PayloadError is errors.PayloadError
    assert history.SessionFormatError is errors.SessionFormatError is clawctx.SessionFormatError
    # Each keeps the built-in base callers may already catch.
    assert issubclass(errors.HookError, RuntimeError)
    assert issubclass(errors.ContextEngineNotRegisteredError, LookupError)
    assert issubclass(errors.ReportDependencyError, ImportError)
    assert issubclass(errors.PayloadError, ValueError)
    # Private classes are listed in the tree but exported from nowhere public.
    assert {n for n in _imported_exception_classes() if n.startswith("_")} == {"_ImageError"}


def test_a_raised_facade_error_is_caught_as_clawctx_error() -> None:
    from clawctx.engine import HookContext, HookRunner, PromptBuildEvent, resolve_context_engine

    with pytest.raises(_core.ClawctxError, match="is not registered"):
        resolve_context_engine({"plugins": {"slots": {"contextEngine": "nope"}}})
    runner = HookRunner(catch_errors=False)

    def broken(event: object, ctx: object) -> None:
        raise ValueError("boom")

    runner.register("before_prompt_build", broken, plugin_id="p")
    with pytest.raises(_core.ClawctxError, match="boom"):
        runner.run_before_prompt_build_sync(
            PromptBuildEvent(prompt="hi", messages=[]), HookContext(agent_id="main")
        )
