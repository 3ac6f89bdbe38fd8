"""The package layout: the small top level, the stage subpackages and the deprecated aliases."""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

import pytest

import clawctx
from clawctx import _core
from clawctx._deprecation import MOVED, new_home

STAGES = (
    "clawctx.history",
    "clawctx.wire",
    "clawctx.interop",
    "clawctx.prompt",
    "clawctx.runtime",
    "clawctx.engine",
)
STAGE_NAMES = tuple(stage.rpartition(".")[2] for stage in STAGES)
# Top-level names added after the split (issues 16 and 19 name them as `clawctx.<name>`).
ADDED_SINCE_SPLIT = {
    "cache_diff",
    "build_request_payload",
    "transform_messages",
    "fit_to_budget",
    "detect_transcript_format",
    "import_transcript",
    "scan_table",
    "doctor",
    "compat",
    "parse_response",
    "open_store",
}


def test_top_level_is_small() -> None:
    # Issue 29: at most 90 names (the report types of repairs moved to clawctx.history).
    assert len(clawctx.__all__) <= 90
    assert len(set(clawctx.__all__)) == len(clawctx.__all__)


def test_top_level_names_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in clawctx.__all__:
            assert getattr(clawctx, name) is not None, name


def test_subpackages_are_exposed() -> None:
    for stage in STAGES:
        assert getattr(clawctx, stage.rpartition(".")[2]) is importlib.import_module(stage)


@pytest.mark.parametrize("stage", STAGES)
def test_every_stage_name_exists(stage: str) -> None:
    module = importlib.import_module(stage)
    assert module.__doc__
    assert len(set(module.__all__)) == len(module.__all__)
    for name in module.__all__:
        assert hasattr(module, name), f"{stage}.{name}"


def test_top_level_names_come_from_their_stage() -> None:
    homes = {name: stage for stage in STAGES for name in importlib.import_module(stage).__all__}
    for name in clawctx.__all__:
        if name in homes:
            stage = importlib.import_module(homes[name])
            assert getattr(clawctx, name) is getattr(stage, name), name


def test_each_name_has_one_home() -> None:
    seen: dict[str, str] = {}
    for stage in STAGES:
        for name in importlib.import_module(stage).__all__:
            assert name not in seen, f"{name} in {seen.get(name)} and {stage}"
            seen[name] = stage


def test_deprecated_names_warn_and_resolve_to_their_new_home() -> None:
    assert not set(MOVED) & set(clawctx.__all__)
    for name in sorted(MOVED):
        stage = new_home(name)
        assert stage is not None, name
        assert name in importlib.import_module(stage).__all__, name
        with pytest.warns(DeprecationWarning, match=rf"clawctx\.{name} is deprecated.*{stage}"):
            value = getattr(clawctx, name)
        assert value is getattr(importlib.import_module(stage), name), name


def test_deprecated_from_import_warns() -> None:
    with pytest.warns(DeprecationWarning, match="clawctx.history"):
        from clawctx import compact_session
    assert compact_session is clawctx.history.compact_session


def test_deprecated_names_are_listed_by_dir() -> None:
    listed = dir(clawctx)
    for name in [*MOVED, *clawctx.__all__]:
        assert name in listed, name


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        clawctx.no_such_name  # noqa: B018


def test_the_old_export_list_is_kept() -> None:
    # 346 names were exported before the split: every one still resolves, from the top level
    # or (deprecated) through its stage.
    old = set(clawctx.__all__) - set(STAGE_NAMES) - ADDED_SINCE_SPLIT
    assert len(old | set(MOVED)) == 346
    assert set(clawctx.__all__) >= ADDED_SINCE_SPLIT


def test_session_is_the_python_subclass() -> None:
    assert issubclass(clawctx.Session, _core.Session)
    assert clawctx.Session is clawctx.history.Session
    for make in (
        lambda: clawctx.Session.in_memory(cwd="/w"),
        lambda: clawctx.Session(cwd="/w"),
    ):
        session = make()
        assert type(session) is clawctx.Session
        assert session.header["cwd"] == "/w"
    assert type(_core.Session.in_memory()) is _core.Session
    assert not hasattr(_core.Session, "compact")


def test_session_subclass_open_and_create_keep_their_state(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    created = clawctx.Session.create(path, cwd="/w", session_id="sid", now_ms=5)
    assert type(created) is clawctx.Session
    entry_id = created.append_message({"role": "user", "content": "hi", "timestamp": 5})
    opened = clawctx.Session.open(path)
    assert type(opened) is clawctx.Session
    assert (opened.header["id"], opened.leaf_id) == ("sid", entry_id)

    class Mine(clawctx.Session):
        pass

    mine = Mine.open(path)
    assert type(mine) is Mine
    assert mine.leaf_id == entry_id
