#!/usr/bin/env bash
# CI fuzz smoke: build every fuzz target and run each briefly from the committed seeds (plus the
# recorded regressions), failing on any crash, panic or broken invariant. Installs cargo-fuzz
# when missing. Usage: rust/fuzz/smoke.sh [seconds per target, default 15]
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-15}"
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
cargo +nightly fuzz build -O --fuzz-dir . >/dev/null
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for target in $(cargo +nightly fuzz list --fuzz-dir .); do
    mkdir -p "$work/$target"
    cp seeds/"$target"/* "$work/$target"/ 2>/dev/null || true
    cp regressions/"$target"/* "$work/$target"/ 2>/dev/null || true
    echo "== $target (${seconds}s)"
    nice -n 19 "target/x86_64-unknown-linux-gnu/release/$target" \
        -rss_limit_mb=2048 -max_len=16384 -max_total_time="$seconds" \
        -artifact_prefix="$work/" "$work/$target" 2>&1 | grep -E '^Done [0-9]+ runs|ERROR|panicked' || true
    if ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* >/dev/null 2>&1; then
        echo "fuzz smoke: $target stopped on an input:" >&2
        ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* 2>/dev/null >&2
        exit 1
    fi
done
echo "fuzz smoke: all targets ran clean"
