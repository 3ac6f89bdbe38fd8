"""clawctx and the plain-Python reference pipeline (benches/reference_pipeline.py) produce the
same messages and token estimates on generated sessions, so the benchmarks compare equal work.

Both run the per-request pipeline: context of the leaf → pairing repair (now_ms=0) → history
limit → pi token estimates → pruning (default cache-ttl settings) → serialization. The
serialized lists are compared parsed (clawctx keeps the original bytes of unmodified messages,
orjson re-serializes them).

Only undamaged files are compared as they are: on a damaged file pi (and the reference) skip
every line that does not parse, while clawctx also salvages the record behind a run of NUL
bytes. For damaged files the test checks exactly that: the reference run on the file with that
record restored gives what clawctx gives on the damaged file.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import orjson
import pytest

import clawctx
from benches import clawctx_pipeline
from benches import reference_pipeline as ref
from benches.generate import generate_session, png_of_size

SEEDS = range(6)
# (size, compact_at_tokens): pi's default trigger, an early trigger (several compactions in a
# small file) and none (one long context).
SHAPES = [(300_000, 20_000), (700_000, None), (1_000_000, 60_000)]
# (history turns, context window tokens): no limit and a 200k window, the benchmark's
# parameters, and small windows that make pruning soft-trim and hard-clear.
PARAMS = [
    (None, 200_000),
    (ref.HISTORY_TURNS, ref.CONTEXT_WINDOW_TOKENS),
    (10, 20_000),
    (None, 20_000),
    (4, 8000),
]

_files: dict[tuple[Any, ...], Path] = {}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Any:
    directory = tmp_path_factory.mktemp("reference-pipeline")

    def get(
        seed: int, size: int, compact_at: int | None, damage: bool = False, fixtures: Any = ...
    ) -> Path:
        key = (seed, size, compact_at, damage, fixtures is None)
        if key not in _files:
            path = (
                directory
                / f"s{seed}-{size}-{compact_at}-{int(damage)}-{int(fixtures is None)}.jsonl"
            )
            kwargs: dict[str, Any] = {} if fixtures is ... else {"fixtures": fixtures}
            generate_session(
                path, size, seed=seed, damage=damage, compact_at_tokens=compact_at, **kwargs
            )
            _files[key] = path
        return _files[key]

    return get


def run_both(
    path: Path, turns: int | None, window: int
) -> tuple[list[Any], list[Any], ref.PipelineResult, list[int]]:
    result = ref.run_pipeline(path, history_turns=turns, context_window_tokens=window)
    data, tokens = clawctx_pipeline.run_pipeline(
        path, history_turns=turns, context_window_tokens=window
    )
    # Reading only the end of the file gives the same request.
    data_from_end, tokens_from_end = clawctx_pipeline.run_pipeline_from_end(
        path, history_turns=turns, context_window_tokens=window
    )
    assert data_from_end == data and tokens_from_end.tolist() == tokens.tolist()
    return orjson.loads(data), orjson.loads(result.json), result, tokens.tolist()


COVERAGE: dict[str, int] = {}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("size", "compact_at"), SHAPES, ids=lambda v: str(v))
def test_same_messages_and_token_estimates(
    files: Any, seed: int, size: int, compact_at: int | None
) -> None:
    path = files(seed, size, compact_at)
    for turns, window in PARAMS:
        ours, theirs, result, tokens = run_both(path, turns, window)
        assert len(ours) == len(theirs), (turns, window)
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            assert a == b, f"message {i} differs (turns={turns}, window={window})"
        assert tokens == result.token_counts, (turns, window)
        stats = result.stats
        for key, value in (
            ("compaction", stats.compaction),
            ("synthetic results", stats.synthetic_results),
            ("orphans dropped", stats.dropped_orphans),
            ("soft trims", stats.soft_trimmed),
            ("hard clears", stats.hard_cleared),
            (
                "history cut",
                turns is not None and len(result.token_counts) < len(ref.load_context(path)),
            ),
        ):
            COVERAGE[key] = COVERAGE.get(key, 0) + int(value)


def test_the_comparison_exercised_every_rule() -> None:
    """Runs after the comparisons above (file order): each rule changed messages somewhere."""
    if len(COVERAGE) == 0:
        pytest.skip("run together with test_same_messages_and_token_estimates")
    assert {k: v for k, v in COVERAGE.items() if v == 0} == {}


def test_same_without_the_pi_fixtures(files: Any) -> None:
    """The generator's built-in corpus (used when ../shared/fixtures/pi is absent)."""
    path = files(7, 500_000, 20_000, fixtures=None)
    for turns, window in PARAMS:
        ours, theirs, result, tokens = run_both(path, turns, window)
        assert ours == theirs and tokens == result.token_counts


def _restore_salvaged_record(damaged: Path, out: Path) -> Path:
    """The damaged file with the record behind the NUL run restored (what clawctx salvages)."""
    lines = [line.lstrip(b"\x00") for line in damaged.read_bytes().split(b"\n")]
    out.write_bytes(b"\n".join(lines))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_damaged_files_differ_only_by_what_clawctx_salvages(
    files: Any, tmp_path: Path, seed: int
) -> None:
    damaged = files(seed, 600_000, 30_000, damage=True)
    session = clawctx.Session.open(damaged, read_only=True)
    actions = sorted(s.action for s in session.skipped_lines)
    assert actions.count("skipped") == 4  # torn record, invalid UTF-8, stray text, torn last line
    assert any("NUL" in s.reason and s.records == 1 for s in session.skipped_lines)
    restored = _restore_salvaged_record(damaged, tmp_path / "restored.jsonl")
    for turns, window in PARAMS[:3]:
        data, tokens = clawctx_pipeline.run_pipeline(
            damaged, history_turns=turns, context_window_tokens=window
        )
        result = ref.run_pipeline(restored, history_turns=turns, context_window_tokens=window)
        assert result.stats.skipped_lines == 4
        assert orjson.loads(data) == orjson.loads(result.json)
        assert tokens.tolist() == result.token_counts
        # On the damaged file itself pi loses the record, and with it the path above it.
        assert (
            ref.run_pipeline(
                damaged, history_turns=turns, context_window_tokens=window
            ).stats.skipped_lines
            == 5
        )


def test_generator_is_deterministic_and_sized(tmp_path: Path) -> None:
    a = generate_session(tmp_path / "a.jsonl", "400KB", seed=3)
    b = generate_session(tmp_path / "b.jsonl", "400KB", seed=3)
    c = generate_session(tmp_path / "c.jsonl", "400KB", seed=4)
    assert a.path.read_bytes() == b.path.read_bytes()
    assert a.path.read_bytes() != c.path.read_bytes()
    assert a.size >= 400_000 and a.leaf_id == b.leaf_id
    for line in a.path.read_bytes().splitlines():
        assert isinstance(orjson.loads(line), dict)


def test_generator_writes_every_feature(files: Any) -> None:
    paths = [files(seed, 1_000_000, 60_000) for seed in SEEDS]
    types: dict[str, int] = {}
    roles: dict[str, int] = {}
    images = cjk = astral = 0
    for line in b"".join(p.read_bytes() for p in paths).splitlines():
        entry = orjson.loads(line)
        types[entry["type"]] = types.get(entry["type"], 0) + 1
        message = entry.get("message")
        if isinstance(message, dict):
            roles[message["role"]] = roles.get(message["role"], 0) + 1
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                images += block.get("type") == "image"
        text = line.decode()
        cjk += any("\u4e00" <= ch <= "\u9fff" for ch in text)
        astral += any(ord(ch) > 0xFFFF for ch in text)
    assert {
        "session",
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
    } <= types.keys()
    assert {"user", "assistant", "toolResult"} <= roles.keys()
    assert images > 0 and cjk > 0 and astral > 0
    # More entries than the leaf's path: abandoned side branches.
    off_path = 0
    for path in paths:
        session = clawctx.Session.open(path, read_only=True)
        off_path += len(session) - len(session.branch_path())
    assert off_path > 0


def test_generated_images_are_valid_png() -> None:
    import random

    from PIL import Image

    for size in (100_000, 2_000_000):
        data = png_of_size(random.Random(0), size)
        encoded = base64.b64encode(data)
        assert abs(len(encoded) - size) < size * 0.01
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            assert image.format == "PNG"
