"""Each Rust-Python crossing is declared once (issue 29, item 1).

A report type the core defines is exposed by the core itself (its `python` feature:
`#[cfg_attr(feature = "python", pyo3::pyclass(..., get_all))]`), not re-declared in the
binding as a `#[pyclass(get_all)]` struct whose fields copy the core's. At most
`MAX_MIRRORS` such hand-written mirrors remain in `rust/python/src`, each with a
`// Kept as a mirror: <reason>` comment above its `#[pyclass]`.
"""

from __future__ import annotations

import re

from conftest import REPO

BINDING = REPO / "rust" / "python" / "src"
MAX_MIRRORS = 3
REASON = "// Kept as a mirror:"

_PYCLASS = re.compile(r"#\[pyclass\((?P<args>[^\]]*)\)\]\s*pub struct (?P<name>\w+)", re.S)


def mirrors(text: str) -> list[tuple[str, str]]:
    """The `(struct, text before its #[pyclass])` of every `get_all` pyclass in `text`."""
    found = []
    for match in _PYCLASS.finditer(text):
        if re.search(r"\bget_all\b", match["args"]):
            found.append((match["name"], text[: match.start()]))
    return found


def _reason(before: str) -> str | None:
    """The `// Kept as a mirror:` comment in the comment block right above a `#[pyclass]`."""
    lines = before.rstrip("\n").splitlines()
    block: list[str] = []
    for line in reversed(lines):
        stripped = line.strip()
        if not stripped.startswith("//"):
            break
        block.append(stripped)
    text = " ".join(reversed(block))
    start = text.find(REASON)
    return text[start + len(REASON) :].strip() if start >= 0 else None


def _binding_mirrors() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for path in sorted(BINDING.glob("*.rs")):
        for name, before in mirrors(path.read_text(encoding="utf-8")):
            out[f"{path.name}:{name}"] = _reason(before)
    return out


def test_the_counter_finds_a_get_all_mirror_and_its_reason() -> None:
    text = (
        "/// Doc.\n// Kept as a mirror: it points at a binding class.\n"
        '#[pyclass(\n    name = "A",\n    frozen,\n    get_all\n)]\npub struct PyA {}\n'
        '/// Doc.\n#[pyclass(name = "B", frozen)]\npub struct PyB {}\n'
        '#[pyclass(name = "C", get_all)]\npub struct PyC {}\n'
    )
    found = mirrors(text)
    assert [name for name, _ in found] == ["PyA", "PyC"]
    assert _reason(found[0][1]) == "it points at a binding class."
    assert _reason(found[1][1]) is None


def test_at_most_three_hand_written_mirrors_remain() -> None:
    found = _binding_mirrors()
    assert len(found) <= MAX_MIRRORS, (
        f"{len(found)} hand-written get_all mirrors in rust/python/src (at most {MAX_MIRRORS}): "
        f"{sorted(found)}; declare the type in the core behind its `python` feature instead "
        "(CONTRIBUTING.md, 'Exposing a core type to Python')"
    )


def test_each_remaining_mirror_says_why() -> None:
    missing = [name for name, reason in _binding_mirrors().items() if not reason]
    assert not missing, f"mirrors without a '{REASON} <reason>' comment: {missing}"


def test_core_declared_reports_are_the_core_classes() -> None:
    """The classes moved to the core keep their names and stage modules."""
    from clawctx._core import foreign, transcript

    for module, name in [
        (transcript, "ToolCallInputsReport"),
        (transcript, "PairingReport"),
        (foreign, "ImportedTranscript"),
    ]:
        cls = getattr(module, name)
        assert cls.__name__ == name
        assert cls.__module__ == module.__name__
