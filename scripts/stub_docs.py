"""Copy the binding's Rust ``///`` docs into the docstrings of the stubs ``python/clawctx/_core/``.

The native module's stub is a package: ``__init__.pyi`` (the errors and the re-exports) and one
``<stage>.pyi`` per submodule of ``clawctx._core`` (``session.pyi``, ...). The API site
(mkdocstrings) is built from the stubs, while the prose lives as ``///`` doc comments on the
PyO3 items in ``rust/python/src/*.rs`` and on the report types the core declares
as Python classes with its ``python`` feature (``rust/core/src/**/*.rs``, declared with
``crate::base::python_class! { (OPTIONS) ... struct ... }``, whose head reads as
``#[pyclass(OPTIONS, frozen, skip_from_py_object)]``). This script keeps the two equal:

    python scripts/stub_docs.py           # rewrite the stubs' docstrings from the Rust docs
    python scripts/stub_docs.py --check   # exit 1, listing every stub definition that differs

Exposed items are ``#[pyfunction]`` functions, ``#[pyclass]`` structs, the methods of their
``#[pymethods]`` blocks (``#[getter]`` methods become properties), and the ``///``-documented
fields of ``get_all`` / ``#[pyo3(get)]`` structs (also properties). Python names follow PyO3:
``name = "..."`` in ``#[pyfunction]``, ``#[pyclass]`` or ``#[pyo3]``, ``#[getter(name)]``,
a ``get_`` prefix dropped from getters, ``#[new]`` as ``__new__``.

Only docstrings are written; every other byte of the stub is kept. A stub definition without a
Rust doc keeps its docstring (or lack of one). Overloaded definitions are left alone.
Standard library only.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import inspect
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUST_DIR = REPO / "rust" / "python" / "src"
CORE_DIR = REPO / "rust" / "core" / "src"
STUB = REPO / "python" / "clawctx" / "_core"  # the stub package (a single .pyi works too)
LINE_LENGTH = 100  # ruff's line-length in pyproject.toml

_NAME_ARG = re.compile(r'\bname\s*=\s*"([^"]+)"')
_STRUCT = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?struct\s+(\w+)")
_IMPL = re.compile(r"^\s*impl(?:<[^>]*>)?\s+(\w+)")
_FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+(\w+)")
_FIELD = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(\w+)\s*:")
_GETTER = re.compile(r"#\[getter(?:\((\w+)\))?\]")
# `#[cfg_attr(feature = "python", pyo3::pyclass(...))]` in the core reads as `#[pyclass(...)]`.
_PYTHON_CFG_ATTR = re.compile(
    r'^#\[cfg_attr\(\s*feature\s*=\s*"python"\s*,\s*(?:pyo3::)?(.*?)\s*\)\]$'
)

# `python_class! {` and its head `(OPTIONS)` on the next line (rust/core/src/base/exposed.rs).
_PYTHON_CLASS_MACRO = re.compile(r"^\s*(?:crate::base::)?python_class!\s*\{\s*$")
_PYTHON_CLASS_HEAD = re.compile(r"^\s*\((.*)\)\s*$")


@dataclass
class RustDocs:
    """The docs found in the binding, keyed by Python qualified name (``Class.method``)."""

    docs: dict[str, str] = field(default_factory=dict)


def _doc_text(lines: list[str]) -> str:
    """Join ``///`` lines, dropping the one space after the slashes."""
    out = []
    for line in lines:
        body = line.strip()[3:]
        out.append(body[1:] if body.startswith(" ") else body)
    return "\n".join(out).strip("\n")


def convert_markdown(text: str) -> str:
    """Rust doc markdown to docstring markdown: intra-doc links lose their brackets."""
    # [`x`](path) and [`x`] (rustdoc intra-doc links) read as `x`; a `crate::` path is noise.
    text = re.sub(r"\[(`[^`\]]+`)\]\([^)\s]*\)", r"\1", text)
    text = re.sub(r"\[(`[^`\]]+`)\](?!\()", r"\1", text)
    return re.sub(r"`(?:crate|self|super)::([^`]+)`", r"`\1`", text)


def _attr_blocks(lines: list[str], start: int) -> tuple[list[str], int]:
    """The attribute texts from ``start`` (multi-line attributes joined) and the next line."""
    attrs: list[str] = []
    i = start
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped.startswith("#[") or stripped.startswith("#!["):
            text = stripped
            depth = text.count("[") - text.count("]")
            while depth > 0 and i + 1 < len(lines):
                i += 1
                text += " " + lines[i].strip()
                depth = text.count("[") - text.count("]")
            python_only = _PYTHON_CFG_ATTR.match(text)
            attrs.append(f"#[{python_only.group(1)}]" if python_only else text)
            i += 1
        elif stripped.startswith("//") and not stripped.startswith("///"):
            i += 1
        else:
            break
    return attrs, i


def expand_python_class(lines: list[str]) -> list[str]:
    """The lines with each ``python_class!`` head written as the ``#[pyclass(...)]`` it expands
    to, just above its struct (after the struct's docs and attributes, as PyO3 reads it)."""
    out: list[str] = []
    pyclass: str | None = None
    for line in lines:
        head = _PYTHON_CLASS_HEAD.match(line)
        if head and out and _PYTHON_CLASS_MACRO.match(out[-1]):
            pyclass = f"#[pyclass({head.group(1)}, frozen, skip_from_py_object)]"
            continue
        if pyclass is not None and _STRUCT.match(line):
            out.append(pyclass)
            pyclass = None
        out.append(line)
    return out


def parse_rust(paths: list[Path]) -> dict[str, str]:
    """Every exposed item's doc, keyed by Python qualified name."""
    sources = {p: expand_python_class(p.read_text(encoding="utf-8").splitlines()) for p in paths}
    # Pass 1: Rust struct name -> Python class name, for the #[pymethods] blocks.
    class_names: dict[str, str] = {}
    for lines in sources.values():
        i = 0
        while i < len(lines):
            attrs, j = _attr_blocks(lines, i)
            if attrs and j < len(lines):
                pyclass = next((a for a in attrs if a.startswith("#[pyclass")), None)
                m = _STRUCT.match(lines[j]) or re.match(r"^\s*(?:pub\s+)?enum\s+(\w+)", lines[j])
                if pyclass is not None and m:
                    named = _NAME_ARG.search(pyclass)
                    class_names[m.group(1)] = named.group(1) if named else m.group(1)
            i = max(j, i + 1)

    docs: dict[str, str] = {}
    for lines in sources.values():
        i = 0
        pending: list[str] = []
        current_class: str | None = None  # inside a #[pymethods] impl
        impl_depth = 0
        depth = 0
        while i < len(lines):
            stripped = lines[i].strip()
            if stripped.startswith("///"):
                pending.append(lines[i])
                i += 1
                continue
            attrs, j = _attr_blocks(lines, i)
            if j >= len(lines):
                break
            item = lines[j]
            doc = convert_markdown(_doc_text(pending)) if pending else ""
            pending = []
            struct = _STRUCT.match(item)
            fn = _FN.match(item)
            impl = _IMPL.match(item)
            if struct and any(a.startswith("#[pyclass") for a in attrs):
                pyname = class_names[struct.group(1)]
                if doc:
                    docs[pyname] = doc
                pyclass = next(a for a in attrs if a.startswith("#[pyclass"))
                get_all = re.search(r"\bget_all\b", pyclass) is not None
                j = _struct_fields(lines, j, pyname, get_all, docs)
            elif impl and any(a.startswith("#[pymethods") for a in attrs):
                current_class = class_names.get(impl.group(1))
                impl_depth = depth
            elif fn and doc:
                pyname = _fn_python_name(fn.group(1), attrs)
                if current_class is not None and depth > impl_depth:
                    if pyname is not None:
                        docs[f"{current_class}.{pyname}"] = doc
                elif any(a.startswith("#[pyfunction") for a in attrs) and pyname is not None:
                    docs[pyname] = doc
            depth += _brace_delta(lines[j])
            if current_class is not None and depth <= impl_depth and "}" in lines[j]:
                current_class = None
            i = j + 1
    return docs


def _brace_delta(line: str) -> int:
    """Net ``{`` minus ``}`` on a line, ignoring string literals and line comments."""
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(?:\\.|[^'\\])'", "''", line)
    line = line.split("//", 1)[0]
    return line.count("{") - line.count("}")


def _fn_python_name(rust_name: str, attrs: list[str]) -> str | None:
    """The Python name PyO3 gives a function or method."""
    for attr in attrs:
        if attr.startswith(("#[pyfunction", "#[pyo3")):
            named = _NAME_ARG.search(attr)
            if named:
                return named.group(1)
        if attr.startswith("#[new"):
            return "__new__"
        getter = _GETTER.search(attr)
        if getter:
            if getter.group(1):
                return getter.group(1)
            return rust_name.removeprefix("get_")
        if attr.startswith("#[setter"):
            return None
    return rust_name


def _struct_fields(
    lines: list[str], start: int, cls: str, get_all: bool, docs: dict[str, str]
) -> int:
    """Record the documented readable fields of a struct; returns its last line."""
    if ";" in lines[start] and "{" not in lines[start]:
        return start  # unit or tuple struct
    depth = _brace_delta(lines[start])
    i = start + 1
    pending: list[str] = []
    while i < len(lines) and depth > 0:
        stripped = lines[i].strip()
        if stripped.startswith("///"):
            pending.append(lines[i])
            i += 1
            continue
        attrs, j = _attr_blocks(lines, i)
        line = lines[j]
        m = _FIELD.match(line)
        if m and depth == 1 and pending:
            readable = get_all or any(re.search(r"\bget\b", a) for a in attrs if "pyo3" in a)
            if readable:
                name = m.group(1)
                for attr in attrs:
                    named = _NAME_ARG.search(attr) if attr.startswith("#[pyo3") else None
                    if named:
                        name = named.group(1)
                docs[f"{cls}.{name}"] = convert_markdown(_doc_text(pending))
        pending = []
        depth += _brace_delta(line)
        i = j + 1
    return i - 1


def _wrap_item(text: str, width: int) -> list[str]:
    """Wrap one paragraph or list item, keeping a list marker's hanging indent."""
    m = re.match(r"^(\s*(?:[-*+]|\d+[.)])\s+)", text)
    hang = " " * len(m.group(1)) if m else re.match(r"^\s*", text).group(0)  # type: ignore[union-attr]
    return textwrap.wrap(
        text,
        width=max(width, 20),
        subsequent_indent=hang,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [""]


def render(doc: str, indent: int) -> list[str]:
    """The docstring's lines (unindented), rewrapped to fit the line length at ``indent``."""
    # Room for the quotes: a one-line docstring carries both on its line.
    width = LINE_LENGTH - indent - 6
    out: list[str] = []
    in_fence = False
    item: list[str] = []

    def flush() -> None:
        if item:
            joined = item[0] + "".join(" " + x.strip() for x in item[1:])
            out.extend(_wrap_item(joined, width))
            item.clear()

    for line in doc.splitlines():
        if line.strip().startswith("```"):
            flush()
            in_fence = not in_fence
            out.append(line.rstrip())
        elif in_fence or line.startswith("    "):
            flush()
            out.append(line.rstrip())
        elif not line.strip():
            flush()
            out.append("")
        elif re.match(r"^\s*(?:[-*+]|\d+[.)])\s+", line) or line.lstrip().startswith("#"):
            flush()
            item.append(line.rstrip())
        else:
            item.append(line.rstrip())
    flush()
    return out


def docstring_source(doc: str, indent: int) -> str:
    """The docstring literal as ruff format would write it, at ``indent`` columns."""
    lines = render(doc, indent)
    body = "\n".join(lines).replace("\\", "\\\\").replace('"""', '\\"""')
    if body.endswith('"'):
        body += " "
    pad = " " * indent
    if len(lines) == 1:
        return f'{pad}"""{body}"""'
    text = "\n".join((pad + line) if line else "" for line in body.split("\n"))
    return f'{pad}"""{text.lstrip()}\n{pad}"""'


@dataclass
class StubDef:
    """One definition in the stub: its qualified name and AST node."""

    qualname: str
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    overloaded: bool


def stub_definitions(tree: ast.Module) -> list[StubDef]:
    """Module-level and class-level functions and classes of the stub."""
    found: list[StubDef] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        names = [n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = prefix + node.name
                over = isinstance(node, ast.ClassDef) is False and names.count(node.name) > 1
                found.append(StubDef(qual, node, over))
                if isinstance(node, ast.ClassDef):
                    visit(node.body, qual + ".")

    visit(tree.body, "")
    return found


def is_public(qualname: str) -> bool:
    """A public definition: no part of its name starts with ``_``."""
    return not any(part.startswith("_") for part in qualname.split("."))


def coverage(tree: ast.Module) -> tuple[list[str], list[str]]:
    """The public stub definitions with and without a docstring."""
    documented, missing = [], []
    seen: set[str] = set()
    for d in stub_definitions(tree):
        if not is_public(d.qualname) or d.qualname in seen:
            continue
        seen.add(d.qualname)
        (documented if ast.get_docstring(d.node) else missing).append(d.qualname)
    return documented, missing


def apply(stub_text: str, docs: dict[str, str]) -> tuple[str, list[str]]:
    """The stub with its docstrings set from ``docs``, and the names that changed."""
    tree = ast.parse(stub_text)
    lines = stub_text.splitlines(keepends=True)
    edits: list[tuple[int, int, int, int, str]] = []  # (line0, col0, line1, col1, text)
    changed: list[str] = []
    for d in stub_definitions(tree):
        doc = docs.get(d.qualname)
        if doc is None or d.overloaded:
            continue
        node = d.node
        first = node.body[0]
        has_doc = (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        )
        same_line = _on_header_line(lines, first)
        indent = node.col_offset + 4
        literal = docstring_source(doc, indent)
        if has_doc:
            if ast.get_docstring(node) == expected_value(doc, indent):
                continue
            assert first.end_lineno is not None and first.end_col_offset is not None
            edits.append((first.lineno - 1, 0, first.end_lineno - 1, first.end_col_offset, literal))
        elif same_line and isinstance(first, ast.Expr) and len(node.body) == 1:
            # `def f() -> T: ...` becomes `def f() -> T:` + docstring (the `...` goes).
            line0 = first.lineno - 1
            text = lines[line0]
            colon = text.encode().rindex(b":", 0, first.col_offset)
            assert first.end_col_offset is not None
            edits.append((line0, colon + 1, line0, first.end_col_offset, "\n" + literal))
        else:
            # Insert before the first statement of the body (before its decorators, if any).
            decorators = getattr(first, "decorator_list", [])
            line0 = min([first.lineno, *(dec.lineno for dec in decorators)]) - 1
            if same_line:
                continue  # `class X: pass`-style one-liners with code: leave alone
            edits.append((line0, 0, line0, 0, literal + "\n"))
        changed.append(d.qualname)
    for line0, col0, line1, col1, text in sorted(edits, reverse=True):
        # ast's column offsets count UTF-8 bytes.
        head = lines[line0].encode()[:col0].decode()
        tail = lines[line1].encode()[col1:].decode()
        lines[line0 : line1 + 1] = [head + text + tail]
    return "".join(lines), changed


def expected_value(doc: str, indent: int) -> str:
    """What ``ast.get_docstring`` returns for the docstring written for ``doc``."""
    value = ast.literal_eval(docstring_source(doc, indent).strip())
    assert isinstance(value, str)
    return inspect.cleandoc(value)


def _on_header_line(lines: list[str], first: ast.stmt) -> bool:
    """Whether a body starts on its definition's header line (``def f(): ...``)."""
    return bool(lines[first.lineno - 1].encode()[: first.col_offset].decode().strip())


def stub_files(stub: Path) -> list[Path]:
    """The stub files: ``stub`` itself, or every ``.pyi`` of the stub package ``stub``."""
    return sorted(stub.glob("*.pyi")) if stub.is_dir() else [stub]


def package_coverage(stub: Path) -> tuple[list[str], list[str]]:
    """`coverage` over every file of the stub (package)."""
    documented: list[str] = []
    missing: list[str] = []
    for path in stub_files(stub):
        done, todo = coverage(ast.parse(path.read_text(encoding="utf-8")))
        documented += done
        missing += todo
    return documented, missing


def _ruff_format(path: Path) -> None:
    """Let ruff lay out what changed (a def that lost its ``...`` may now fit on one line).

    Only the layout ruff itself enforces in CI changes; without ruff the text stays as written.
    """
    with contextlib.suppress(OSError):
        subprocess.run(
            [sys.executable, "-m", "ruff", "format", "--quiet", str(path)],
            check=False,
            cwd=REPO,
        )


def main(argv: list[str] | None = None) -> int:
    """Rewrite the stub's docstrings, or with ``--check`` report where they differ."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="report differences, exit 1")
    parser.add_argument("--stub", type=Path, default=STUB)
    parser.add_argument("--rust", type=Path, default=RUST_DIR)
    parser.add_argument("--core", type=Path, default=CORE_DIR)
    args = parser.parse_args(argv)
    docs = parse_rust(sorted(args.rust.glob("*.rs")) + sorted(args.core.rglob("*.rs")))
    paths = stub_files(args.stub)
    if not paths:
        parser.error(f"{args.stub}: no stub file")
    results = []
    for path in paths:
        stub_text = path.read_text(encoding="utf-8")
        new_text, changed = apply(stub_text, docs)
        results.append((path, stub_text, new_text, changed))
    if args.check:
        differ = [(path, changed) for path, _, _, changed in results if changed]
        for path, changed in differ:
            print(
                f"{path}: {len(changed)} docstring(s) differ from the Rust /// docs "
                "(run python scripts/stub_docs.py):"
            )
            for name in changed:
                print(f"  {name}")
        return 1 if differ else 0
    for path, stub_text, new_text, changed in results:
        if new_text != stub_text:
            path.write_text(new_text, encoding="utf-8")
            _ruff_format(path)
        print(f"{path}: {len(changed)} docstring(s) written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
