"""Packaging: optional dependencies fail clearly, the extension is not shadowed, and the
metadata that PyPI shows is complete.

The release wheel itself (abi3, manylinux_2_28, at most 10 MB, installs and runs in a fresh
virtual environment) is built and checked by ``scripts/build-wheels.sh``, which ``.ci/run``
runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import clawctx
from conftest import REPO

ROOT = REPO
# A 3000x2 PNG: wider than the limits the tests pass, so it must be decoded and shrunk.
_WIDE_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAC7gAAAACCAIAAABHIQbHAAAAMElEQVR42u3QMQEAAAQAMJz6hxJLD7YIy+kOAAAAAAAAAAC4"
    "rhQAAAAAAAAAAPDBAkQHAOBQTMK+AAAAAElFTkSuQmCC"
)


def _run(body: str) -> subprocess.CompletedProcess[str]:
    # The child imports the clawctx this test run imports (an installed wheel in CI).
    package_root = Path(clawctx.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(body)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_missing_pillow_raises_an_import_error_naming_the_extra() -> None:
    result = _run(
        f"""
        import sys
        sys.modules["PIL"] = None  # as if Pillow were not installed
        from clawctx.history import sanitize_image_block
        try:
            sanitize_image_block({_WIDE_PNG!r}, "image/png", max_dimension_px=100)
        except ImportError as exc:
            print("ImportError:", exc)
        else:
            print("no error")
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "ImportError: clawctx needs Pillow to check and shrink images: "
        'pip install "clawctx[images]"'
    )


def test_sanitize_without_pillow_is_never_a_silent_placeholder() -> None:
    # The failing import is outside the handlers that turn a bad image into a placeholder.
    result = _run(
        f"""
        import sys
        sys.modules["PIL"] = None
        from clawctx.history import sanitize_images
        message = {{"role": "user", "content": [
            {{"type": "image", "data": {_WIDE_PNG!r}, "mimeType": "image/png"}}
        ], "timestamp": 0}}
        try:
            sanitize_images([message], max_dimension_px=100)
        except ImportError as exc:
            print("ImportError" if "clawctx[images]" in str(exc) else exc)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ImportError"


def test_with_pillow_the_image_is_shrunk() -> None:
    pytest.importorskip("PIL")
    from clawctx.history import sanitize_image_block

    block = sanitize_image_block(_WIDE_PNG, "image/png", max_dimension_px=100)
    assert block["type"] == "image"
    assert block["mimeType"] == "image/jpeg"


def test_core_api_works_without_pillow_or_numpy() -> None:
    result = _run(
        """
        import sys
        sys.modules["PIL"] = None
        sys.modules["numpy"] = None
        import clawctx
        from clawctx.history import Transcript
        t = Transcript.from_list([{"role": "user", "content": "hello world", "timestamp": 0}])
        print(clawctx.count_tokens("hello world"), len(t.to_list()))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2", "1"]


def test_no_stale_extension_shadows_the_abi3_one() -> None:
    package = Path(clawctx.__file__).resolve().parent
    abi3 = sorted(p.name for p in package.glob("_core.abi3.so"))
    versioned = sorted(p.name for p in package.glob("_core.cpython-*.so"))
    assert not (abi3 and versioned), (
        f"{versioned} would be imported instead of {abi3}: delete the stale file "
        "(CONTRIBUTING.md, Setting up)"
    )


def test_project_metadata() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    license_text = (ROOT / "LICENSE").read_text()
    assert license_text.startswith("MIT License\n")
    assert "Copyright (c) 2026 clawctx contributors" in license_text
    classifiers = project["classifiers"]
    for prefix in (
        "Development Status ::",
        "Operating System ::",
        "Programming Language :: Python :: 3.10",
        "Topic ::",
        "Typing :: Typed",
    ):
        assert any(c.startswith(prefix) for c in classifiers), prefix
    # PEP 639: the SPDX expression replaces license classifiers (PyPI refuses both).
    assert not any(c.startswith("License ::") for c in classifiers)
    assert project["keywords"]
    assert not any(d.startswith("pillow") for d in project["dependencies"])
    assert project["optional-dependencies"]["images"] == ["pillow>=10"]
    assert "pillow>=10" in project["optional-dependencies"]["test"]
    for name in ("pyproject.toml", "Cargo.toml", "rust/core/Cargo.toml", "rust/python/Cargo.toml"):
        assert "example.invalid" not in (ROOT / name).read_text(), name


def test_extension_is_built_for_the_stable_abi() -> None:
    tomllib = pytest.importorskip("tomllib")
    manifest = tomllib.loads((ROOT / "rust/python/Cargo.toml").read_text())
    assert "abi3-py310" in manifest["dependencies"]["pyo3"]["features"]
