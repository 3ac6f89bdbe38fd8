"""The stub's docstrings come from the binding's Rust `///` docs (scripts/stub_docs.py).

The API site is built from the stub package `python/clawctx/_core/` (`__init__.pyi` and one
`<stage>.pyi` per submodule); these tests keep its docstrings equal to the `///` docs in
`rust/python/src` and keep at least 90% of its public definitions documented.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from conftest import REPO

SCRIPT = REPO / "scripts" / "stub_docs.py"
MIN_COVERAGE = 0.90


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("stub_docs", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["stub_docs"] = module
    spec.loader.exec_module(module)
    return module


def test_stub_docstrings_equal_the_rust_docs() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=REPO
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_public_stub_definitions_are_documented() -> None:
    stub_docs = _load()
    assert stub_docs.STUB.is_dir()
    documented, missing = stub_docs.package_coverage(stub_docs.STUB)
    assert len(documented) > 250  # every part is counted, not only `__init__.pyi`
    share = len(documented) / (len(documented) + len(missing))
    print(f"documented {len(documented)} of {len(documented) + len(missing)} ({share:.1%})")
    print("undocumented:", ", ".join(missing))
    assert share >= MIN_COVERAGE, f"{share:.1%} documented; undocumented: {', '.join(missing)}"


def _write_case(tmp_path: Path, rust: str, stub: str) -> tuple[Path, Path]:
    rust_dir = tmp_path / "src"
    rust_dir.mkdir()
    (rust_dir / "lib.rs").write_text(rust, encoding="utf-8")
    stub_path = tmp_path / "_core.pyi"
    stub_path.write_text(stub, encoding="utf-8")
    return rust_dir, stub_path


RUST = """
/// A thing (pi-mono 0.58.3 `packages/x.ts`); see [`other_thing`].
#[pyclass(name = "Thing", module = "m", frozen, get_all)]
pub struct PyThing {
    /// How many.
    pub count: usize,
    pub undocumented: usize,
}

#[pymethods]
impl PyThing {
    /// Makes a thing.
    #[new]
    fn new() -> Self { PyThing { count: 0, undocumented: 0 } }

    /// The size, in bytes.
    #[getter]
    fn get_size(&self) -> usize { 1 }

    /// Renamed in Python.
    #[pyo3(name = "to_dict")]
    fn as_dict(&self) -> usize { 2 }
}

/// Counts things.
#[pyfunction]
#[pyo3(signature = (x, *, y = 1))]
pub fn count_things(x: usize, y: usize) -> usize { x + y }

/// Private helper.
#[pyfunction(name = "_helper")]
fn helper() {}
"""

STUB = '''import os

class Thing:
    def __new__(cls) -> Thing: ...
    @property
    def count(self) -> int: ...
    @property
    def undocumented(self) -> int:
        """Kept: no Rust doc."""
    @property
    def size(self) -> int:
        """Outdated."""
    def to_dict(self) -> int: ...

def count_things(x: int, *, y: int = 1) -> int: ...  # trailing comment stays
def _helper() -> None: ...
X: int
'''


def test_generator_inserts_replaces_and_keeps_the_rest(tmp_path: Path) -> None:
    rust_dir, stub_path = _write_case(tmp_path, RUST, STUB)
    args = ["--stub", str(stub_path), "--rust", str(rust_dir)]
    check = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", *args], capture_output=True, text=True
    )
    assert check.returncode == 1
    for name in (
        "Thing",
        "Thing.__new__",
        "Thing.count",
        "Thing.size",
        "Thing.to_dict",
        "count_things",
        "_helper",
    ):
        assert f"  {name}\n" in check.stdout
    assert "Thing.undocumented" not in check.stdout

    subprocess.run([sys.executable, str(SCRIPT), *args], check=True, capture_output=True)
    text = stub_path.read_text("utf-8")
    tree = ast.parse(text)
    stub_docs = _load()
    got = {d.qualname: ast.get_docstring(d.node) for d in stub_docs.stub_definitions(tree)}
    assert got["Thing"] == "A thing (pi-mono 0.58.3 `packages/x.ts`); see `other_thing`."
    assert got["Thing.__new__"] == "Makes a thing."
    assert got["Thing.count"] == "How many."
    assert got["Thing.size"] == "The size, in bytes."
    assert got["Thing.to_dict"] == "Renamed in Python."
    assert got["Thing.undocumented"] == "Kept: no Rust doc."
    assert got["count_things"] == "Counts things."
    assert got["_helper"] == "Private helper."
    assert text.startswith("import os\n\nclass Thing:\n")
    assert text.endswith("X: int\n")
    assert "  # trailing comment stays" in text

    again = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", *args], capture_output=True, text=True
    )
    assert again.returncode == 0, again.stdout


def test_long_docs_are_wrapped_to_the_line_length(tmp_path: Path) -> None:
    words = " ".join(["word"] * 60)
    rust = f"/// {words}\n///\n/// - a list item {words}\n#[pyfunction]\npub fn f() {{}}\n"
    rust_dir, stub_path = _write_case(
        tmp_path, rust, "class C:\n    pass\n\ndef f() -> None: ...\n"
    )
    subprocess.run(
        [sys.executable, str(SCRIPT), "--stub", str(stub_path), "--rust", str(rust_dir)],
        check=True,
        capture_output=True,
    )
    text = stub_path.read_text("utf-8")
    assert all(len(line) <= 100 for line in text.splitlines()), text
    doc = ast.get_docstring(ast.parse(text).body[1])  # type: ignore[arg-type]
    assert doc is not None
    assert " ".join(doc.split()) == f"{words} - a list item {words}"
    assert "\n  word" in doc  # the list item's continuation lines hang under its text


def test_every_file_of_a_stub_package_is_checked_and_written(tmp_path: Path) -> None:
    rust_dir, _ = _write_case(tmp_path, RUST, "")
    package = tmp_path / "_core"
    package.mkdir()
    (package / "__init__.pyi").write_text(
        "from .things import Thing as Thing, count_things as count_things\n", encoding="utf-8"
    )
    (package / "things.pyi").write_text(STUB, encoding="utf-8")
    args = ["--stub", str(package), "--rust", str(rust_dir)]
    check = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", *args], capture_output=True, text=True
    )
    assert check.returncode == 1
    assert f"{package / 'things.pyi'}: 7 docstring(s) differ" in check.stdout
    assert "__init__.pyi" not in check.stdout

    subprocess.run([sys.executable, str(SCRIPT), *args], check=True, capture_output=True)
    stub_docs = _load()
    documented, missing = stub_docs.package_coverage(package)
    assert "count_things" in documented and "Thing.count" in documented
    assert missing == []
    again = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", *args], capture_output=True, text=True
    )
    assert again.returncode == 0, again.stdout


def test_a_python_class_macro_head_reads_as_its_pyclass(tmp_path: Path) -> None:
    # The core declares its report classes with `crate::base::python_class!`
    # (rust/core/src/base/exposed.rs): the head names the class, get_all exposes the fields.
    rust = (
        "crate::base::python_class! {\n"
        '    (name = "Report", module = "clawctx._core.session", get_all)\n'
        "    /// What a pass did.\n"
        "    #[derive(Debug, Clone)]\n"
        "    pub struct PassReport {\n"
        "        /// Lines dropped.\n"
        "        pub dropped: usize,\n"
        "    }\n"
        "}\n"
    )
    stub = 'class Report:\n    @property\n    def dropped(self) -> int:\n        """Old."""\n'
    rust_dir, stub_path = _write_case(tmp_path, rust, stub)
    subprocess.run(
        [sys.executable, str(SCRIPT), "--stub", str(stub_path), "--rust", str(rust_dir)],
        check=True,
        capture_output=True,
    )
    stub_docs = _load()
    tree = ast.parse(stub_path.read_text("utf-8"))
    got = {d.qualname: ast.get_docstring(d.node) for d in stub_docs.stub_definitions(tree)}
    assert got == {"Report": "What a pass did.", "Report.dropped": "Lines dropped."}
