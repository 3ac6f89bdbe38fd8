#!/usr/bin/env bash
# Builds the release wheel and the sdist into dist/ (or $1), then checks the wheel: its tag
# (`auditwheel show`: abi3 and manylinux_2_28), its size (at most 10 MB), and that it installs
# into a fresh virtual environment whose `clawctx` runs (`--help` and the README's demo).
#
#   python -m pip install --group wheels     # maturin, ziglang, auditwheel
#   scripts/build-wheels.sh [OUT_DIR]
#
# The wheel is built with the `dist` profile (fat LTO, one codegen unit: the benchmarked
# build, a few minutes). CLAWCTX_WHEEL_PROFILE=release builds with the quicker default profile
# (thin LTO) instead, for checks that do not measure speed. zig links against glibc 2.28, so the
# wheel runs on manylinux_2_28 systems whatever glibc this machine has.
set -euo pipefail
cd "$(dirname "$0")/.."

out="${1:-dist}"
profile="${CLAWCTX_WHEEL_PROFILE:-dist}"
max_bytes=$((10 * 1024 * 1024))

for tool in maturin auditwheel; do
    if ! command -v "$tool" >/dev/null; then
        echo "error: $tool not found; run: python -m pip install --group wheels" >&2
        exit 1
    fi
done
if ! python -m ziglang version >/dev/null 2>&1; then
    echo "error: ziglang not found; run: python -m pip install --group wheels" >&2
    exit 1
fi
if ! command -v cargo >/dev/null; then
    echo "error: cargo not found; install a Rust toolchain (https://rustup.rs)" >&2
    exit 1
fi

mkdir -p "$out"
rm -f "$out"/clawctx-*.whl "$out"/clawctx-*.tar.gz
echo "== build: wheel (profile $profile) and sdist"
maturin build --locked --profile "$profile" --compatibility manylinux_2_28 --zig --out "$out"
maturin sdist --out "$out"

wheel=$(find "$out" -name 'clawctx-*.whl')
if [ "$(echo "$wheel" | wc -l)" -ne 1 ]; then
    echo "error: expected one wheel in $out, found: $wheel" >&2
    exit 1
fi

echo "== check: tag"
show=$(auditwheel show "$wheel")
echo "$show"
case "$wheel" in
    *-cp310-abi3-manylinux_2_28_x86_64.whl | *-cp310-abi3-manylinux_2_28_aarch64.whl) ;;
    *)
        echo "error: $wheel is not tagged cp310-abi3-manylinux_2_28" >&2
        exit 1
        ;;
esac
if ! echo "$show" | tr '\n' ' ' | grep -q '"manylinux_2_28_[a-z0-9_]*"'; then
    echo "error: auditwheel does not find the wheel consistent with manylinux_2_28" >&2
    exit 1
fi

echo "== check: size"
size=$(stat -c %s "$wheel")
echo "$wheel: $size bytes"
if [ "$size" -gt "$max_bytes" ]; then
    echo "error: the wheel is larger than 10 MB" >&2
    exit 1
fi

echo "== check: metadata and files"
python - "$wheel" "$out"/clawctx-*.tar.gz <<'PY'
import sys
import tarfile
import zipfile

wheel, sdist = sys.argv[1], sys.argv[2]
names = zipfile.ZipFile(wheel).namelist()
assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), "no LICENSE in the wheel"
assert "clawctx/_core.abi3.so" in names, "no clawctx/_core.abi3.so in the wheel"
assert "clawctx/py.typed" in names, "no py.typed in the wheel"
# The stub package of the native module: __init__.pyi and one <stage>.pyi per submodule.
stubs = {n for n in names if n.startswith("clawctx/_core/") and n.endswith(".pyi")}
for stage in ("__init__", "transcript", "session", "hygiene", "compaction", "payload"):
    assert f"clawctx/_core/{stage}.pyi" in stubs, f"no clawctx/_core/{stage}.pyi in the wheel"
assert not any(n.startswith("clawctx/_core/") and not n.endswith(".pyi") for n in names)
metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
text = zipfile.ZipFile(wheel).read(metadata).decode()
assert "License-Expression: MIT" in text, "no License-Expression in METADATA"
assert "example.invalid" not in text, "placeholder URL in METADATA"
members = tarfile.open(sdist).getnames()
for required in ("LICENSE", "rust/core/data/o200k_base.tiktoken.gz", "Cargo.lock"):
    assert any(m.endswith("/" + required) for m in members), f"no {required} in the sdist"
print("wheel and sdist: LICENSE, py.typed, abi3 module, stubs, vocabularies: ok")
PY

echo "== check: install into a fresh virtual environment and run"
venv="$(mktemp -d)/venv"
python -m venv "$venv"
"$venv/bin/python" -m pip install --quiet "$wheel"
"$venv/bin/clawctx" --help >/dev/null
(cd "$(mktemp -d)" && "$venv/bin/clawctx" assemble --provider anthropic \
    --model-api anthropic-messages --model claude-sonnet-4-5 \
    --prompt "What changed since the last release?" | tail -n 3)
"$venv/bin/python" -c 'import clawctx; print(clawctx.count_tokens("tiktoken is great!"))'
# The stage submodules import on their own; the stub directory does not shadow the extension.
"$venv/bin/python" -c 'import clawctx._core.session as s, clawctx._core as c
assert c.__file__.endswith(".abi3.so"), c.__file__
assert c.Session is s.Session and s.Session.__module__ == "clawctx._core.session"'
rm -rf "$(dirname "$venv")"
echo "== wheel ok: $wheel"
