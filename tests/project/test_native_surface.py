"""The Python surface of the native objects: the base classes the stubs `_core/*.pyi` declare
hold at run time (stubtest does not check them), `Transcript` is a real sequence, reprs read as Python (not
Rust `Debug`), and every public native callable and class has a docstring."""

from __future__ import annotations

import ast
import collections.abc
import inspect
import re
import typing
from pathlib import Path
from typing import Any

import pytest

from clawctx import _core
from clawctx.history import (
    HeartbeatMark,
    Session,
    Transcript,
    estimate_context_tokens,
    find_image_blocks,
    mark_heartbeat_transcript,
    prepare_compaction,
    repair_session_file,
    repair_tool_call_inputs,
    repair_tool_pairing,
    scan_sessions,
    strip_heartbeat_token,
    validate_for_provider,
)

#: The stub package of the native module (`__init__.pyi` and one `<stage>.pyi` per submodule).
STUB = Path(_core.__file__).with_name("_core")
MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "hi", "timestamp": 1},
    {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "t1", "name": "read", "arguments": {}}],
        "stopReason": "toolUse",
        "timestamp": 2,
    },
    {"role": "user", "content": "hi", "timestamp": 1},
]


def _stub_bases() -> dict[str, list[str]]:
    bases: dict[str, list[str]] = {}
    for path in sorted(STUB.glob("*.pyi")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                bases[node.name] = [ast.unparse(b) for b in node.bases]
    return bases


def _resolve(base: str) -> type:
    name = re.sub(r"\[.*\]$", "", base)  # Sequence[_JsonDict] -> Sequence
    for namespace in (_core, collections.abc, typing, __builtins__):
        found = (
            namespace.get(name) if isinstance(namespace, dict) else getattr(namespace, name, None)
        )
        if isinstance(found, type):
            return found
    raise AssertionError(f"cannot resolve the stub base class {base!r}")


def test_every_stub_base_class_holds_at_run_time() -> None:
    bases = _stub_bases()
    assert {"Transcript", "Session", "NotASessionFileError"} <= bases.keys()  # parts and init
    checked = 0
    for name, declared in bases.items():
        runtime = getattr(_core, name, None)
        if not isinstance(runtime, type):
            continue  # a stub-only helper (protocols, aliases)
        for base in declared:
            assert issubclass(runtime, _resolve(base)), f"{name} is not a {base} at run time"
            checked += 1
    assert checked > 0


def test_transcript_is_a_sequence_with_the_whole_protocol() -> None:
    t = Transcript.from_list(MESSAGES)
    assert isinstance(t, collections.abc.Sequence)
    assert MESSAGES[1] in t
    assert {"role": "user", "content": "other"} not in t
    assert t.count(MESSAGES[0]) == 2
    assert t.count({"role": "x"}) == 0
    assert t.index(MESSAGES[1]) == 1
    assert t.index(MESSAGES[0], 1) == 2
    assert t.index(MESSAGES[0], -1) == 2
    with pytest.raises(ValueError):
        t.index(MESSAGES[1], 2)
    with pytest.raises(ValueError):
        t.index(MESSAGES[0], 1, 2)
    assert list(reversed(t)) == MESSAGES[::-1]
    assert list(t) == MESSAGES


def test_transcript_compares_equal_to_a_list_of_the_same_messages() -> None:
    t = Transcript.from_list(MESSAGES)
    assert t == MESSAGES
    assert MESSAGES == t  # noqa: SIM300 - list.__eq__ defers to Transcript.__eq__
    assert t != MESSAGES[:2]
    assert t != [*MESSAGES[:2], {"role": "user"}]
    assert t == Transcript.from_list(MESSAGES)
    assert t != Transcript.from_list(MESSAGES[:1])
    assert t != 3
    assert t != tuple(MESSAGES)  # like list == tuple


def _native_objects(tmp_path: Path) -> list[object]:
    path = tmp_path / "s.jsonl"
    session = Session.create(path, cwd="/tmp", session_id="s1")
    for m in MESSAGES * 3:
        session.append_message(m)
    with path.open("a") as f:
        f.write('{"type":"message","id":"bad","parentId":null,"message":{"role"\n')
    damaged = Session.open(path, read_only=True)
    settings = _core.CompactionSettings(True, 1, 1)
    prep = prepare_compaction(session, settings)
    assert prep is not None
    mark = mark_heartbeat_transcript(path)
    assert isinstance(mark, HeartbeatMark)
    report = repair_session_file(path)
    objects: list[object] = [
        session,
        Session.in_memory(),
        session.context(),
        session.refresh(),
        *damaged.skipped_lines,
        Transcript.from_list(MESSAGES),
        settings,
        prep,
        *prep.summary_requests(),
        _core.find_cut_point([], 0, 0, 1),
        _core.TranscriptPolicy(),
        _core.PruningSettings.from_dict({}),
        _core.read_leaf_context(path),
        report,
        *report.changes,
        mark,
        _core.prune_heartbeat_transcript(mark),
        *scan_sessions([path]),
        _core.scan_stream([path]),
        _core.read_transcript_file(path),
        *validate_for_provider([MESSAGES[1]], provider="anthropic"),
        repair_tool_call_inputs(MESSAGES),
        repair_tool_pairing(MESSAGES),
        estimate_context_tokens(MESSAGES),
        strip_heartbeat_token("HEARTBEAT_OK"),
        _core._ResponseReader(
            '{"api": "anthropic-messages", "provider": "anthropic", "id": "claude-x"}', 0.0
        ),
        _core._CacheDiffChain(),
        _core._build_request_payload(
            '{"model": {"id": "m", "api": "anthropic-messages", "provider": "anthropic",'
            ' "maxTokens": 1024}}',
            Transcript.from_list(MESSAGES),
        ),
        *find_image_blocks(
            [
                {
                    "role": "user",
                    "content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}],
                }
            ]
        ),
    ]
    return objects


# Rust `Debug` output: `Some(..)`, struct syntax `Name { field: .. }`, `field: value`, and
# double-quoted strings (checked after Python's single-quoted strings are blanked out).
RUST_DEBUG = re.compile(r"\bSome\(|\w \{ |\b[a-z_]+: |=\"")
PY_STRING = re.compile(r"'(?:[^'\\]|\\.)*'")


def test_reprs_read_as_python_not_rust_debug(tmp_path: Path) -> None:
    objects = _native_objects(tmp_path)
    classes = {
        obj.__name__
        for obj in vars(_core).values()
        if isinstance(obj, type) and not issubclass(obj, BaseException)
    }
    seen = {type(o).__name__ for o in objects}
    # Every native class is represented (a new class must be added above).
    assert classes <= seen | {"Session"}, classes - seen
    for obj in objects:
        text = repr(obj)
        bare = PY_STRING.sub("''", text)
        assert not RUST_DEBUG.search(bare), text
        # Python's own reprs of the values inside: None, True/False, not JSON's.
        assert not re.search(r"\b(true|false|null)\b", bare), text


def test_the_session_repr(tmp_path: Path) -> None:
    session = Session.create(tmp_path / "s.jsonl", cwd="/tmp", id_factory=lambda: "79246fc1")
    session.append_message(MESSAGES[0])
    path = str(tmp_path / "s.jsonl")
    assert repr(session) == f"Session(path={path!r}, entries=1, leaf='79246fc1')"
    assert repr(Session.in_memory()) == "Session(path=None, entries=0, leaf=None)"


def _public_callables() -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    for name in sorted(_core.__all__):
        if name.startswith("_"):
            continue
        obj = getattr(_core, name)
        if isinstance(obj, type):
            found.append((name, obj))
            for attr, raw in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if callable(raw) or isinstance(raw, (staticmethod, classmethod)):
                    found.append((f"{name}.{attr}", getattr(obj, attr)))
        elif callable(obj):
            found.append((name, obj))
    return found


def test_every_public_native_callable_and_class_has_a_docstring() -> None:
    callables = _public_callables()
    names = {name for name, _ in callables}
    assert {"Session.append_compaction", "estimate_tokens", "Transcript.count"} <= names
    missing = [name for name, obj in callables if not (inspect.getdoc(obj) or "").strip()]
    assert missing == []
    # A property the issue named.
    assert (Session.__mro__[1].session_id.__doc__ or "").strip()
