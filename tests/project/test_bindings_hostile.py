"""The whole native API under hostile arguments: no call may end in a ``PanicException`` (a
``BaseException`` that ``except Exception`` misses) or kill the process.

Every public callable of ``clawctx._core`` (module functions, and the methods, classmethods and
staticmethods of its classes) is found by introspection, so a newly added one is covered
without editing this file. Hypothesis builds the arguments from hostile values: None, wrong
types, huge/negative/NaN/fractional numbers, deep and cyclic containers, huge strings, lone
surrogates, bytes, objects whose ``__eq__``/``__len__``/``__iter__`` raise, callables that
raise or call back into the object, and the same values inside message-shaped dicts so they
reach the core passes. The walk runs in a subprocess: a crash is a return code, not a dead run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import clawctx
from conftest import REPO

_CHILD = r'''
import inspect, json, math, os, sys, tempfile
import clawctx._core as core
from hypothesis import HealthCheck, given, settings, strategies as st

os.chdir(tempfile.mkdtemp())
EXAMPLES = int(sys.argv[1])


class Boom(Exception):
    pass


def boom(*args, **kwargs):
    raise Boom("hostile")


class RaisingEq:
    __eq__ = boom
    __hash__ = object.__hash__
    __len__ = boom
    __iter__ = boom
    __index__ = boom
    __int__ = boom
    __float__ = boom
    __str__ = boom
    __fspath__ = boom


class RaisingMapping(dict):
    __getitem__ = boom
    keys = boom
    items = boom
    values = boom
    __iter__ = boom
    __len__ = boom


class RaisingList(list):
    __iter__ = boom
    __len__ = boom
    __getitem__ = boom


class LyingLen(list):
    def __len__(self):
        return 10**6


def deep_list(n):
    v = []
    for _ in range(n):
        v = [v]
    return v


def deep_dict(n):
    v = {}
    for _ in range(n):
        v = {"a": v}
    return v


def cyclic_list():
    v = []
    v.append(v)
    return v


def cyclic_dict():
    d = {"role": "user", "content": "x"}
    d["content"] = [d]
    return d


SESSIONS = []


def reentrant():
    # A clock / id source that calls back into the object being called.
    for s in SESSIONS:
        s.leaf_id
        s.entries()
    return 1


IDS = iter(range(10**9))


def reentrant_id():
    reentrant()
    return f"id{next(IDS)}"


# Built once: read-only inputs, and building them per example dominates the run time.
DEEP_LIST = deep_list(100_000)
DEEP_DICT = deep_dict(100_000)

SCALARS = [
    None, True, False, 0, -1, 1, 2**31, 2**63, 2**64, -(2**63) - 1, 10**100, -(10**100),
    0.5, -0.5, 1e308, -1e308, math.nan, math.inf, -math.inf, 1j,
    "", "x", "\ud800", "a\x00b", "x" * 1_000_000, "strict", "safe", "keys", "history",
    "images-only", "full", "o200k_base", "cl100k_base", "anthropic", "openai-responses",
    b"", b"\xff\xfe", bytearray(b"abc"), object(), RaisingEq(), boom, reentrant,
    lambda: "id", lambda: 1767225600000, lambda: None,
]
CONTAINERS = [
    lambda: [], lambda: {}, lambda: (), lambda: set(), lambda: DEEP_LIST,
    lambda: DEEP_DICT, lambda: deep_list(101), cyclic_list, cyclic_dict,
    lambda: RaisingMapping(a=1), lambda: RaisingList([1]), lambda: LyingLen([1]),
    lambda: {1: "x"}, lambda: {RaisingEq(): 1}, lambda: iter([1, 2]), lambda: range(3),
    lambda: [None, 1, "x"], lambda: ["a", "b"],
]

scalar = st.sampled_from(SCALARS)
container = st.sampled_from(CONTAINERS).map(lambda make: make())
leaf = st.one_of(scalar, container)
block = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image", "toolCall", "thinking", "toolUse", "x"])},
    optional={
        "text": leaf, "id": leaf, "name": leaf, "arguments": leaf, "input": leaf,
        "data": leaf, "mimeType": leaf, "thinking": leaf, "thinkingSignature": leaf,
    },
)
message = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "toolResult", "custom", "x"])},
    optional={
        "content": st.one_of(leaf, st.lists(st.one_of(block, leaf), max_size=3)),
        "timestamp": leaf, "toolCallId": leaf, "toolName": leaf, "usage": leaf,
        "stopReason": leaf, "provider": leaf, "api": leaf, "model": leaf,
    },
)
messages = st.lists(st.one_of(message, leaf), max_size=4)
hostile = st.one_of(scalar, container, message, messages)

GOOD_MESSAGES = [
    {"role": "user", "content": "hi", "timestamp": 1},
    {"role": "assistant", "content": [{"type": "toolCall", "id": "t1", "name": "read",
     "arguments": {}}], "stopReason": "toolUse", "timestamp": 2},
    {"role": "toolResult", "toolCallId": "t1", "toolName": "read",
     "content": [{"type": "text", "text": "ok"}], "timestamp": 3},
]


def new_session(reentrant_callbacks=False):
    path = tempfile.mktemp(suffix=".jsonl", dir=".")
    if not reentrant_callbacks:
        return core.Session.create(path, cwd="/tmp", fsync=False)
    s = core.Session.create(
        path, cwd="/tmp", fsync=False, now_ms=reentrant, id_factory=reentrant_id
    )
    SESSIONS[:] = [s]
    return s


def instances(cls):
    """Live instances of a native class, made through the API itself."""
    name = cls.__name__
    transcript = core.Transcript.from_list(GOOD_MESSAGES)
    if name == "Session":
        s = core.Session.in_memory(cwd="/tmp")
        s.append_message(GOOD_MESSAGES[0])
        return [s, new_session(), new_session(reentrant_callbacks=True)]
    if name == "Transcript":
        return [transcript]
    made = {
        "CompactionSettings": lambda: core.CompactionSettings(),
        "TranscriptPolicy": lambda: core.TranscriptPolicy(),
        "PruningSettings": lambda: core.PruningSettings.from_dict({}),
        "CompactionPreparation": lambda: prep(),
        "SummaryRequest": lambda: prep().summary_requests()[0],
        "LeafContext": lambda: core.read_leaf_context(session_file()),
        "RepairReport": lambda: core.repair_session_file(session_file()),
        "RefreshReport": lambda: new_session().refresh(),
        "SessionContext": lambda: core.Session.in_memory().context(),
        "HeartbeatMark": lambda: core.mark_heartbeat_transcript(session_file()),
        "SessionSummary": lambda: core.scan_sessions([session_file()])[0],
        "ScanStream": lambda: core.scan_stream([session_file()]),
        "ImportedTranscript": lambda: core.read_transcript_bytes(
            b'{"type":"summary","summary":"x"}\n', format="claude-code"
        ),
        "Violation": lambda: core.validate_for_provider([GOOD_MESSAGES[1]], provider="anthropic"),
        "ToolCallInputsReport": lambda: core.repair_tool_call_inputs(transcript),
        "PairingReport": lambda: core.repair_tool_pairing(transcript),
        "ContextTokens": lambda: core.estimate_context_tokens(transcript),
        "StripResult": lambda: core.strip_heartbeat_token("HEARTBEAT_OK"),
        "_CacheDiffChain": lambda: core._CacheDiffChain(),
        "_ResponseReader": lambda: core._ResponseReader(
            '{"api": "anthropic-messages", "provider": "anthropic", "id": "claude-x"}', 0.0
        ),
        "ImageBlockRef": lambda: core.find_image_blocks([{"role": "user", "content": [
            {"type": "image", "data": "aGk=", "mimeType": "image/png"}]}]),
        "CutPoint": lambda: core.find_cut_point([], 0, 0, 1),
        "HeartbeatPruneReport": lambda: core.prune_heartbeat_transcript(
            core.mark_heartbeat_transcript(session_file())),
        "LineChange": lambda: core.repair_session_file(damaged_file()).changes,
        "SkippedLine": lambda: core.Session.open(damaged_file(), read_only=True).skipped_lines,
        "RequestPayload": lambda: core._build_request_payload(
            '{"model": {"id": "m", "api": "anthropic-messages", "provider": "anthropic",'
            ' "maxTokens": 1024}}',
            transcript,
        ),
    }
    make = made.get(name)
    if make is None:
        return None
    try:
        made_value = make()
    except Exception as e:
        failures.append(f"could not make a {name} to call its methods on: {e!r}")
        return []
    values = made_value if isinstance(made_value, list) else [made_value]
    found = [v for v in values if isinstance(v, cls)]
    if not found:
        failures.append(f"the factory of {name} made no {name}")
    return found


def session_file():
    s = new_session()
    s.append_message(GOOD_MESSAGES[0])
    return str(s.path)


def damaged_file():
    path = session_file()
    with open(path, "a") as f:
        f.write('{"type":"message","id":"zz","parentId":null,"message":{"role"\n')
        f.write('{"type":"message","id":"zy","parentId":null,"message":"x"}\n')
    return path


def prep():
    s = core.Session.in_memory(cwd="/tmp")
    for m in GOOD_MESSAGES * 3:
        s.append_message(m)
    return core.prepare_compaction(s, core.CompactionSettings(True, 1, 1))


def callables():
    for name in sorted(dir(core)):
        if name.startswith("__"):
            continue
        obj = getattr(core, name)
        if isinstance(obj, type):
            if issubclass(obj, BaseException):
                continue
            yield name, obj, None
            for attr in sorted(vars(obj)):
                if attr.startswith("__") and attr not in (
                    "__getitem__", "__contains__", "__eq__", "__add__", "__radd__",
                    "__reversed__", "__len__", "__repr__", "__iter__",
                ):
                    continue
                raw = vars(obj)[attr]
                if isinstance(raw, (staticmethod, classmethod)) or type(raw).__name__ in (
                    "classmethod_descriptor", "builtin_function_or_method"):
                    yield f"{name}.{attr}", getattr(obj, attr), None
                elif callable(raw):
                    yield f"{name}.{attr}", raw, obj
                elif type(raw).__name__ in ("getset_descriptor", "member_descriptor"):
                    yield f"{name}.{attr}", raw, "getter"
        elif callable(obj):
            yield name, obj, None


def params(fn):
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None


failures = []
covered = []


def check(label, call):
    try:
        call()
    except Exception:
        pass
    except BaseException as e:  # PanicException and friends
        failures.append(f"{label}: {type(e).__module__}.{type(e).__name__}: {e}"[:500])


for label, fn, owner in callables():
    covered.append(label)
    if owner == "getter":
        cls = getattr(core, label.split(".")[0])
        for obj in instances(cls) or []:
            check(label, lambda: getattr(obj, label.split(".")[1]))
        continue
    sig = params(fn)
    positional = [p for p in sig or [] if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keywords = [p for p in sig or [] if p.kind == p.KEYWORD_ONLY]
    if owner is not None:
        targets = instances(owner)
        if targets is None:
            failures.append(f"{label}: no way to make a {owner.__name__}; add it to instances()")
            continue
        positional = positional[1:] if positional and positional[0].name == "self" else positional
    else:
        targets = [None]
    if sig is None:
        positional = [None, None]

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(
        args=st.tuples(*[hostile for _ in positional]),
        extra=st.lists(hostile, max_size=1),
        kwargs=st.fixed_dictionaries({}, optional={p.name: hostile for p in keywords}),
        drop=st.integers(0, len(positional)),
    )
    def run(args, extra, kwargs, drop):
        args = list(args)[: len(args) - drop] if drop else list(args)
        for target in targets:
            call_args = ([target] if target is not None else []) + args
            check(label, lambda: fn(*call_args, **kwargs))
            if drop == 0:
                check(label, lambda: fn(*call_args, *extra, **kwargs))
        for target in targets:
            if target is not None:
                check(label + " repr", lambda: repr(target))

    run()

print(json.dumps({"failures": failures, "covered": covered}))
'''


def _walk(examples: int) -> dict[str, list[str]]:
    package_root = Path(clawctx.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(package_root), "RUST_BACKTRACE": "0"}
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_CHILD), str(examples)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert result.returncode == 0, (result.returncode, result.stderr[-3000:])
    out: dict[str, list[str]] = json.loads(result.stdout.strip().splitlines()[-1])
    return out


def test_no_native_call_raises_a_base_exception_or_crashes() -> None:
    report = _walk(examples=int(os.environ.get("CLAWCTX_HOSTILE_EXAMPLES", "10")))
    assert report["failures"] == []
    # The walk found the API by introspection: spot-check that it reached every kind of callable.
    for label in (
        "estimate_tokens",
        "Session.open",
        "Session.append_custom_entry",
        "Session.leaf_id",
        "Transcript.from_list",
        "Transcript.__getitem__",
        "PruningSettings.from_dict",
        "CompactionPreparation.summary_requests",
    ):
        assert label in report["covered"]


def test_a_panic_reaches_python_as_internal_error() -> None:
    # Nothing in the API is meant to panic; `_panic_for_tests` is the one way to check the
    # last-resort conversion every binding body runs under.
    from clawctx._core import ClawctxError, InternalError, _panic_for_tests

    assert issubclass(InternalError, ClawctxError)
    with pytest.raises(InternalError, match=r"a bug.*: the panic text"):
        _panic_for_tests("the panic text")


def test_the_release_profile_unwinds() -> None:
    # `panic = "abort"` would turn every caught panic back into a dead process.
    cargo = (REPO / "Cargo.toml").read_text()
    assert "panic" not in cargo.replace('panic = "unwind"', "")


@pytest.mark.parametrize(
    "extra",
    ["", ',"n":1e400', ',"s":"\\ud800"'],
    ids=["plain", "1e400", "lone-surrogate"],
)
def test_a_json_text_field_is_parsed_as_every_reader_parses(extra: str) -> None:
    # OpenClaw's parseOpenAIReasoningSignature runs JSON.parse on a string signature, which
    # takes 1e400 (Infinity) and lone surrogates; the core read them with bare serde_json and
    # kept a block upstream drops.
    from clawctx.history import downgrade_openai_reasoning

    signature = '{"id":"rs_1","type":"reasoning"' + extra + "}"
    message = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": "t", "thinkingSignature": signature}],
        "stopReason": "stop",
        "timestamp": 1,
    }
    assert list(downgrade_openai_reasoning([message])) == []
