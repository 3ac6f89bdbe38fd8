"""Exact token counts and the calibrated estimator against tiktoken, and the estimator's fit.

In one run, per text kind and size: ``tiktoken`` (``len(enc.encode_ordinary(text))``, with an
``Encoding`` built offline from the vocabulary clawctx ships: tiktoken cannot download its
files here), ``clawctx.count_tokens`` exact, and ``clawctx.count_tokens(...,
estimator="calibrated")``. Kinds: prose, code, JSON and CJK built from the calibration corpus
(``tests/history/test_token_count.py``), random base64 and minified JSON (long inputs without
whitespace). Smoke size by default (64 KB); ``CLAWCTX_BENCH_FULL=1`` adds 512 KB, 2 MB and
8 MB so the growth with size is visible.

``python benches/test_token_count.py fit`` fits the estimator's weights on the training split
and prints them as the Rust constants of ``rust/core/src/token_count/calibrated.rs``;
``python benches/test_token_count.py accuracy`` prints the accuracy table of benches/README.md;
``python benches/test_token_count.py callgrind KINDS SIZES IMPLS`` counts the benchmark texts
between markers for instruction counts under callgrind (see the README).
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import random
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import clawctx
from benches.offline_tiktoken import CL100K_PAT, O200K_PAT, SPECIAL_TOKENS
from clawctx import _core

REPO = Path(__file__).resolve().parent.parent
ENCODINGS = ("o200k_base", "cl100k_base")

SMOKE_SIZES = [64_000]
FULL_SIZES = [64_000, 512_000, 2_000_000, 8_000_000]
SIZES = FULL_SIZES if os.environ.get("CLAWCTX_BENCH_FULL") == "1" else SMOKE_SIZES
TEXT_KINDS = ("prose", "code", "json", "cjk", "base64", "minified-json")
IMPLS = ("tiktoken", "clawctx exact", "clawctx calibrated")


def tiktoken_encoding(name: str) -> Any:
    """A ``tiktoken.Encoding`` from the vocabulary clawctx ships (rank = token id)."""
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {token: rank for rank, token in enumerate(_core._token_vocabulary(name))}
    pattern = O200K_PAT if name == "o200k_base" else CL100K_PAT
    return tiktoken.Encoding(
        name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=SPECIAL_TOKENS[name]
    )


def corpus_module() -> ModuleType:
    """``tests/history/test_token_count.py``, which builds the calibration corpus."""
    name = "clawctx_token_corpus"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, REPO / "tests" / "history" / "test_token_count.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


# ---- the fit --------------------------------------------------------------------------------


def _features(samples: list[Any], encoding: str) -> Any:
    import numpy as np

    return np.array([_core._token_features(s.text, encoding) for s in samples], dtype=float)


def fit(encoding: str) -> Any:
    """Least squares on the training split, minimizing the relative error, each kind weighing
    the same."""
    import numpy as np

    corpus = corpus_module()
    samples = [s for s in corpus.token_samples() if not s.held_out]
    x = _features(samples, encoding)
    y = np.array([clawctx.count_tokens(s.text, encoding) for s in samples], dtype=float)
    kinds = np.array([s.kind for s in samples])
    weight = np.zeros(len(samples))
    for kind in corpus.KINDS:
        weight[kinds == kind] = 1 / np.sqrt(max(1, (kinds == kind).sum()))
    used = x.sum(axis=0) > 0
    coef = np.zeros(x.shape[1])
    a = (x / y[:, None] * weight[:, None])[:, used]
    coef[used] = np.linalg.lstsq(a, weight, rcond=None)[0]
    return coef


def print_weights() -> None:
    for encoding in ENCODINGS:
        coef = fit(encoding)
        const = "O200K_WEIGHTS" if encoding == "o200k_base" else "CL100K_WEIGHTS"
        print(f"const {const}: [f64; FEATURES] = [")
        for name, value in zip(_core._token_feature_names(), coef, strict=True):
            print(f"    {float(value)!r}, // {name}")
        print("];")


@dataclass(frozen=True)
class Accuracy:
    kind: str
    samples: int
    mean_error: float
    mean_abs_error: float
    max_abs_error: float
    within_10: float


def accuracy(encoding: str, samples: list[Any], kinds: tuple[str, ...]) -> list[Accuracy]:
    """Relative error of the calibrated estimate against the exact count, per kind."""
    out = []
    for kind in kinds:
        errors = []
        for s in samples:
            if s.kind == kind:
                exact = clawctx.count_tokens(s.text, encoding)
                estimate = clawctx.count_tokens(s.text, encoding, estimator="calibrated")
                errors.append((estimate - exact) / exact)
        if errors:
            out.append(
                Accuracy(
                    kind,
                    len(errors),
                    sum(errors) / len(errors),
                    sum(abs(e) for e in errors) / len(errors),
                    max(abs(e) for e in errors),
                    sum(abs(e) <= 0.1 for e in errors) / len(errors),
                )
            )
    return out


def accuracy_table() -> list[str]:
    corpus = corpus_module()
    held = [s for s in corpus.token_samples() if s.held_out]
    short = [s for s in corpus.token_samples(min_chars=200, max_chars=1000) if s.held_out]
    lines = [
        "| encoding | held-out texts | kind | samples | mean error | mean abs error | max abs error | within ±10% |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for encoding in ENCODINGS:
        for label, samples, kinds in (
            ("1,000-4,000 chars (CJK: paragraphs)", held, corpus.KINDS),
            ("200-1,000 chars", short, tuple(k for k in corpus.KINDS if k != "cjk")),
        ):
            for a in accuracy(encoding, samples, kinds):
                lines.append(
                    f"| {encoding} | {label} | {a.kind} | {a.samples} | {a.mean_error:+.1%} | "
                    f"{a.mean_abs_error:.1%} | {a.max_abs_error:.1%} | {a.within_10:.1%} |"
                )
    return lines


# ---- benchmark inputs -----------------------------------------------------------------------


def _repeat_to(text: str, size: int) -> str:
    """``text`` repeated and cut to about ``size`` UTF-8 bytes (at a character boundary)."""
    data = text.encode()
    data = (data * (size // max(1, len(data)) + 1))[:size]
    return data.decode("utf-8", errors="ignore")


def bench_text(kind: str, size: int) -> str:
    rng = random.Random(size)
    if kind == "base64":
        return base64.b64encode(rng.randbytes(size * 3 // 4)).decode()[:size]
    corpus = corpus_module()
    if kind == "minified-json":
        messages = []
        for name in corpus.FIXTURE_FILES:
            path = corpus.PI_FIXTURES / name
            if not path.is_file():
                pytest.skip(f"{path} not found")
            for line in path.read_text(encoding="utf-8").splitlines():
                entry = json.loads(line)
                if entry.get("type") == "message":
                    messages.append(entry["message"])
        text = json.dumps(messages, separators=(",", ":"), ensure_ascii=False)
        return _repeat_to(text, size)
    if kind == "cjk":
        paragraphs = corpus.CHINESE + corpus.JAPANESE + corpus.KOREAN
        return _repeat_to("\n\n".join(paragraphs), size)
    if not corpus.PI_FIXTURES.is_dir():
        pytest.skip(f"{corpus.PI_FIXTURES} not found")
    texts = [s.text for s in corpus.token_samples() if s.kind == kind]
    return _repeat_to("\n\n".join(texts), size)


_TEXTS: dict[tuple[str, int], str] = {}


def cached_text(kind: str, size: int) -> str:
    if (kind, size) not in _TEXTS:
        _TEXTS[(kind, size)] = bench_text(kind, size)
    return _TEXTS[(kind, size)]


@dataclass
class Result:
    kind: str
    size: int
    impl: str
    median_s: float
    tokens: int


RESULTS: list[Result] = []


def _format_size(size: int) -> str:
    return f"{size // 1_000_000} MB" if size >= 1_000_000 else f"{size // 1000} KB"


def _format_time(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} µs"


def results_table(results: list[Result]) -> list[str]:
    by_key = {(r.kind, r.size, r.impl): r for r in results}
    lines = [
        "| text | size | implementation | median | MB/s | tokens | vs tiktoken | exact ÷ calibrated time |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        tik = by_key.get((r.kind, r.size, "tiktoken"))
        exact = by_key.get((r.kind, r.size, "clawctx exact"))
        vs_tik = f"{tik.median_s / r.median_s:.1f}x" if tik and r.impl != "tiktoken" else ""
        speedup = (
            f"{exact.median_s / r.median_s:.0f}x"
            if exact and r.impl == "clawctx calibrated"
            else ""
        )
        nbytes = len(cached_text(r.kind, r.size).encode())
        lines.append(
            f"| {r.kind} | {_format_size(r.size)} | {r.impl} | {_format_time(r.median_s)} | "
            f"{nbytes / 1e6 / r.median_s:,.0f} | {r.tokens:,} | {vs_tik} | {speedup} |"
        )
    return lines


@pytest.fixture(scope="module", autouse=True)
def report(request: pytest.FixtureRequest) -> Iterator[None]:
    """Prints the comparison table after the module's benchmarks (when they were measured)."""
    yield
    reporter = request.config.pluginmanager.getplugin("terminalreporter")
    if RESULTS and reporter is not None:
        order = {k: i for i, k in enumerate(TEXT_KINDS)}
        results = sorted(RESULTS, key=lambda r: (order[r.kind], r.size, IMPLS.index(r.impl)))
        reporter.write_line("")
        reporter.write_line("clawctx token counts (o200k_base): median, MB/s and ratios")
        for line in results_table(results):
            reporter.write_line(line)


# ---- benchmarks -----------------------------------------------------------------------------


def _counter(impl: str) -> Callable[[str], int]:
    if impl == "tiktoken":
        encoding = tiktoken_encoding("o200k_base")
        return lambda text: len(encoding.encode_ordinary(text))
    if impl == "clawctx exact":
        return lambda text: clawctx.count_tokens(text, "o200k_base")
    return lambda text: clawctx.count_tokens(text, "o200k_base", estimator="calibrated")


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("size", SIZES, ids=_format_size)
@pytest.mark.parametrize("kind", TEXT_KINDS)
def test_token_count(benchmark: Any, kind: str, size: int, impl: str) -> None:
    text = cached_text(kind, size)
    count = _counter(impl)
    benchmark.group = f"token count {kind} {_format_size(size)}"
    benchmark.extra_info.update(kind=kind, size=size, impl=impl)
    tokens = count(text)  # warm-up: vocabularies load on first use
    if impl != "clawctx calibrated":
        assert tokens == clawctx.count_tokens(text, "o200k_base")
    result = benchmark(count, text)
    assert result == tokens
    stats = getattr(benchmark, "stats", None)
    if stats is not None:
        median = stats.stats.median
        benchmark.extra_info["MB_per_s"] = round(len(text.encode()) / 1e6 / median, 1)
        RESULTS.append(Result(kind, size, impl, median, tokens))


def test_calibrated_accuracy() -> None:
    """The held-out accuracy (o200k_base), reported; the bound itself is asserted in
    tests/history/test_token_count.py."""
    corpus = corpus_module()
    if not corpus.PI_FIXTURES.is_dir():
        pytest.skip(f"{corpus.PI_FIXTURES} not found")
    held = [s for s in corpus.token_samples() if s.held_out]
    for a in accuracy("o200k_base", held, corpus.KINDS):
        assert a.max_abs_error <= 0.10 or a.kind == "shell", a


def main(argv: list[str]) -> None:
    command = argv[1] if len(argv) > 1 else ""
    if command == "fit":
        print_weights()
    elif command == "accuracy":
        print("\n".join(accuracy_table()))
    elif command == "callgrind":
        # Instruction counts (benches/README.md): run under `valgrind --tool=callgrind
        # --dump-before=getppid`; each count is warmed up, then measured between two calls of
        # os.getppid, so every second dump holds exactly one count. Prints the order.
        kinds, sizes = argv[2].split(","), [int(size) for size in argv[3].split(",")]
        impls = {"exact": "clawctx exact", "calibrated": "clawctx calibrated"}
        texts = {(kind, size): bench_text(kind, size) for kind in kinds for size in sizes}
        for impl in argv[4].split(","):
            count = _counter(impls.get(impl, impl))
            for (kind, size), text in texts.items():
                count(text)
                os.getppid()
                count(text)
                os.getppid()
                print(kind, size, impl)
    elif command == "linear":
        # Quick linearity check without pytest: time per MB at growing sizes.
        for kind in ("base64", "minified-json"):
            for size in (250_000, 1_000_000, 2_000_000, 4_000_000):
                text = bench_text(kind, size)
                start = time.perf_counter()
                clawctx.count_tokens(text)
                elapsed = time.perf_counter() - start
                print(f"{kind} {_format_size(size)}: {elapsed * 1e3:.1f} ms")
    else:
        print(__doc__)


if __name__ == "__main__":
    main(sys.argv)
