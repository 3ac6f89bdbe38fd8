"""ContextEngine contract, registry, legacy engine (OpenClaw 2026.3.13 `src/context-engine/types.ts`,
`registry.ts`, `legacy.ts`) and runtime helpers (`src/agents/pi-embedded-runner/run/attempt.ts`,
``runEmbeddedAttempt``), plus the proposed assemble() params of the RFC (not upstream)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx.engine import context_engine as ce
from clawctx.engine.context_engine import (
    AssembleResult,
    BootstrapResult,
    CompactResult,
    CompactResultDetails,
    ContextEngine,
    ContextEngineInfo,
    ContextEngineNotRegisteredError,
    IngestBatchResult,
    IngestResult,
    LegacyContextEngine,
    assemble_with_engine,
    get_context_engine_factory,
    list_context_engine_ids,
    prepend_system_prompt_addition,
    record_turn_with_engine,
    register_context_engine,
    resolve_context_engine,
    resolve_context_engine_async,
    unregister_context_engine,
)
from clawctx.engine.internal_events import RUNTIME_CONTEXT_CUSTOM_TYPE, AgentTaskCompletionEvent
from clawctx.engine.provenance import InputProvenance

Message = dict[str, Any]


def user(text: str) -> Message:
    return {"role": "user", "content": text, "timestamp": 1}


def assistant(text: str) -> Message:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "stopReason": "stop",
        "timestamp": 2,
        "usage": {
            "input": 1,
            "output": 1,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 2,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
    }


@pytest.fixture
def registry() -> Iterator[dict[str, Any]]:
    """The module registry, restored after the test."""
    saved = dict(ce._REGISTRY)
    yield ce._REGISTRY
    ce._REGISTRY.clear()
    ce._REGISTRY.update(saved)


class RecordingEngine:
    """A custom engine that records every call (full RFC signature)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.info = ContextEngineInfo(id="recording", name="Recording", owns_compaction=True)

    async def ingest(self, **kwargs: Any) -> IngestResult:
        self.calls.append(("ingest", kwargs))
        return IngestResult(ingested=True)

    async def assemble(
        self,
        *,
        session_id: str,
        messages: Sequence[Mapping[str, Any]],
        session_key: str | None = None,
        token_budget: int | None = None,
        model: str | None = None,
        prompt: str | None = None,
        pre_prompt_message_count: int | None = None,
        input_provenance: Sequence[InputProvenance | None] | None = None,
        internal_events: Sequence[Sequence[AgentTaskCompletionEvent] | None] | None = None,
    ) -> AssembleResult:
        self.calls.append(
            (
                "assemble",
                {
                    "session_id": session_id,
                    "messages": messages,
                    "session_key": session_key,
                    "token_budget": token_budget,
                    "model": model,
                    "prompt": prompt,
                    "pre_prompt_message_count": pre_prompt_message_count,
                    "input_provenance": input_provenance,
                    "internal_events": internal_events,
                },
            )
        )
        return AssembleResult(
            messages=list(messages[-1:]), estimated_tokens=7, system_prompt_addition="ADD"
        )

    async def compact(self, **kwargs: Any) -> CompactResult:
        return CompactResult(ok=True, compacted=False)


# ---- result types (context-engine/types.ts) -----------------------------------------------------


def test_result_type_defaults() -> None:
    assert AssembleResult(messages=[]) == AssembleResult([], 0, None)
    assert CompactResult(ok=True, compacted=False) == CompactResult(True, False, None, None)
    assert CompactResultDetails(tokens_before=5).summary is None
    assert IngestResult(ingested=False).ingested is False
    assert IngestBatchResult(ingested_count=3).ingested_count == 3
    assert BootstrapResult(bootstrapped=True) == BootstrapResult(True, None, None)
    assert ContextEngineInfo(id="x", name="X") == ContextEngineInfo("x", "X", None, False)


def test_protocol_runtime_check() -> None:
    assert isinstance(LegacyContextEngine(), ContextEngine)
    assert isinstance(RecordingEngine(), ContextEngine)
    assert not isinstance(object(), ContextEngine)


# ---- legacy engine (context-engine/legacy.ts: LegacyContextEngine) ------------------------------------


def test_legacy_engine_info_and_pass_through() -> None:
    engine = LegacyContextEngine()
    assert engine.info == ContextEngineInfo(
        id="legacy", name="Legacy Context Engine", version="1.0.0", owns_compaction=False
    )
    assert not hasattr(engine, "bootstrap")
    messages = [user("a")]
    result = asyncio.run(engine.assemble(session_id="s", messages=messages, token_budget=10))
    assert result.messages is messages
    assert result.estimated_tokens == 0
    assert result.system_prompt_addition is None
    assert asyncio.run(engine.ingest(session_id="s", message=user("a"))) == IngestResult(False)
    assert (
        asyncio.run(
            engine.after_turn(
                session_id="s", session_file="f", messages=messages, pre_prompt_message_count=0
            )
        )
        is None
    )
    assert asyncio.run(engine.dispose()) is None


def test_legacy_compact_without_summarizer() -> None:
    result = asyncio.run(LegacyContextEngine().compact(session_id="s", session_file="none.jsonl"))
    assert result == CompactResult(ok=False, compacted=False, reason="no summarizer configured")


def make_session_file(path: Path) -> Path:
    session = clawctx.Session.create(path, cwd="/repo")
    for message in (user("1"), assistant("a"), user("2" * 400), assistant("b" * 400)):
        session.append_message(message)
    return path


def test_legacy_compact_with_sync_summarizer(tmp_path: Path) -> None:
    path = make_session_file(tmp_path / "s.jsonl")
    requests: list[clawctx.SummaryRequest] = []

    def summarize(request: clawctx.SummaryRequest) -> str:
        requests.append(request)
        return "The summary."

    engine = LegacyContextEngine(summarize=summarize, settings={"keepRecentTokens": 150})
    result = asyncio.run(
        engine.compact(session_id="s", session_file=path, custom_instructions="keep paths")
    )
    assert result.ok and result.compacted and result.reason is None
    assert result.result is not None
    assert result.result.summary == "The summary."
    assert result.result.tokens_before > 0
    assert result.result.first_kept_entry_id is not None
    assert result.result.details == {"readFiles": [], "modifiedFiles": []}
    assert requests[0].custom_instructions == "keep paths"
    roles = clawctx.Session.open(path).context().messages.roles()
    assert roles == ["compactionSummary", "user", "assistant"]
    # Compacting again: the leaf already is a compaction → nothing to do.
    again = asyncio.run(engine.compact(session_id="s", session_file=path))
    assert again == CompactResult(ok=True, compacted=False, reason="nothing to compact")


def test_legacy_compact_with_async_summarizer(tmp_path: Path) -> None:
    path = make_session_file(tmp_path / "s.jsonl")

    async def summarize(request: clawctx.SummaryRequest) -> str:
        await asyncio.sleep(0)
        return "Async summary."

    engine = LegacyContextEngine(summarize=summarize, settings={"keepRecentTokens": 150})
    result = asyncio.run(engine.compact(session_id="s", session_file=path))
    assert result.compacted
    assert result.result is not None and result.result.summary == "Async summary."


def test_legacy_compact_error_is_a_result(tmp_path: Path) -> None:
    engine = LegacyContextEngine(summarize=lambda request: "S")
    result = asyncio.run(engine.compact(session_id="s", session_file=tmp_path / "missing.jsonl"))
    assert result.ok is False and result.compacted is False
    assert result.reason


# ---- registry (context-engine/registry.ts: registerContextEngine, resolveContextEngine) --------------


def test_default_registry_and_resolution(registry: dict[str, Any]) -> None:
    assert list_context_engine_ids() == ["legacy"]
    assert get_context_engine_factory("legacy") is not None
    assert get_context_engine_factory("nope") is None
    assert isinstance(resolve_context_engine(), LegacyContextEngine)
    assert isinstance(resolve_context_engine({"plugins": {"slots": {}}}), LegacyContextEngine)
    blank = {"plugins": {"slots": {"contextEngine": "   "}}}
    assert isinstance(resolve_context_engine(blank), LegacyContextEngine)


def test_unknown_engine_error_lists_ids(registry: dict[str, Any]) -> None:
    register_context_engine("lossless-claw", lambda **kwargs: RecordingEngine())
    config = {"plugins": {"slots": {"contextEngine": " missing "}}}
    with pytest.raises(ContextEngineNotRegisteredError) as info:
        resolve_context_engine(config)
    assert str(info.value) == (
        'Context engine "missing" is not registered. Available engines: legacy, lossless-claw'
    )
    assert isinstance(info.value, LookupError)


def test_unknown_engine_error_with_empty_registry(registry: dict[str, Any]) -> None:
    assert unregister_context_engine("legacy") is not None
    assert list_context_engine_ids() == []
    with pytest.raises(ContextEngineNotRegisteredError) as info:
        resolve_context_engine()
    assert str(info.value) == (
        'Context engine "legacy" is not registered. Available engines: (none)'
    )


def test_register_duplicate_and_replace(registry: dict[str, Any]) -> None:
    register_context_engine("custom", lambda **kwargs: RecordingEngine())
    with pytest.raises(ValueError, match='"custom" is already registered'):
        register_context_engine("custom", lambda **kwargs: RecordingEngine())
    replacement = RecordingEngine()
    register_context_engine("custom", lambda **kwargs: replacement, replace=True)
    config = {"plugins": {"slots": {"contextEngine": "custom"}}}
    assert resolve_context_engine(config) is replacement
    with pytest.raises(ValueError, match="non-blank"):
        register_context_engine(" ", lambda **kwargs: replacement)
    with pytest.raises(TypeError):
        register_context_engine("x", "factory")  # type: ignore[arg-type]


def test_factory_kwargs_are_passed(registry: dict[str, Any]) -> None:
    seen: dict[str, Any] = {}

    def factory(**kwargs: Any) -> ContextEngine:
        seen.update(kwargs)
        return RecordingEngine()

    register_context_engine("custom", factory)
    config = {"plugins": {"slots": {"contextEngine": "custom"}}}
    resolve_context_engine(config, workspace_dir="/w", agent_dir="/a")
    assert seen == {"workspace_dir": "/w", "agent_dir": "/a"}
    legacy = resolve_context_engine(None, summarize=lambda r: "S", workspace_dir="/w")
    assert isinstance(legacy, LegacyContextEngine)


def test_async_factory(registry: dict[str, Any]) -> None:
    engine = RecordingEngine()

    async def factory(**kwargs: Any) -> ContextEngine:
        return engine

    register_context_engine("async", factory)
    config = {"plugins": {"slots": {"contextEngine": "async"}}}
    with pytest.raises(TypeError, match="resolve_context_engine_async"):
        resolve_context_engine(config)
    assert asyncio.run(resolve_context_engine_async(config)) is engine
    assert isinstance(asyncio.run(resolve_context_engine_async()), LegacyContextEngine)


# ---- assemble (attempt.ts: runEmbeddedAttempt) + the proposed RFC params --------------------------


def test_custom_engine_receives_aligned_rfc_params() -> None:
    engine = RecordingEngine()
    announce = AgentTaskCompletionEvent(
        source="subagent",
        child_session_key="agent:main:subagent:abc",
        announce_type="subagent task",
        task_label="t",
        status="ok",
        status_label="done",
        result="r",
        reply_instruction="Reply.",
    )
    messages = [user("old"), assistant("a"), user("[Inter-session message] …"), user("announce")]
    out, result, warning = asyncio.run(
        assemble_with_engine(
            engine,
            messages=messages,
            session_id="s1",
            session_key="agent:main:main",
            token_budget=1000,
            model="m",
            prompt="announce",
            pre_prompt_message_count=2,
            input_provenance=[
                None,
                None,
                {"kind": "inter_session", "sourceTool": "sessions_send"},
                InputProvenance("inter_session", source_tool="subagent_announce"),
            ],
            internal_events=[None, None, None, [announce]],
        )
    )
    assert warning is None
    assert out == [user("announce")]
    assert result == AssembleResult([user("announce")], 7, "ADD")
    ((name, kwargs),) = engine.calls
    assert name == "assemble"
    assert kwargs["messages"] is messages
    assert kwargs["session_id"] == "s1"
    assert kwargs["session_key"] == "agent:main:main"
    assert kwargs["token_budget"] == 1000
    assert kwargs["model"] == "m"
    assert kwargs["prompt"] == "announce"
    assert kwargs["pre_prompt_message_count"] == 2
    assert kwargs["input_provenance"] == (
        None,
        None,
        InputProvenance("inter_session", source_tool="sessions_send"),
        InputProvenance("inter_session", source_tool="subagent_announce"),
    )
    assert len(kwargs["input_provenance"]) == len(messages)
    assert kwargs["internal_events"] == (None, None, None, [announce])
    assert len(kwargs["internal_events"]) == len(messages)


def test_rfc_params_are_optional() -> None:
    engine = RecordingEngine()
    asyncio.run(assemble_with_engine(engine, messages=[user("a")], session_id="s"))
    kwargs = engine.calls[0][1]
    assert kwargs["input_provenance"] is None
    assert kwargs["internal_events"] is None
    assert kwargs["pre_prompt_message_count"] is None


def test_misaligned_rfc_arrays_raise() -> None:
    engine = RecordingEngine()
    messages = [user("a"), user("b")]
    with pytest.raises(ValueError, match="input_provenance must be aligned"):
        asyncio.run(
            assemble_with_engine(engine, messages=messages, session_id="s", input_provenance=[None])
        )
    with pytest.raises(ValueError, match="internal_events must be aligned"):
        asyncio.run(
            assemble_with_engine(
                engine, messages=messages, session_id="s", internal_events=[None, None, None]
            )
        )
    with pytest.raises(ValueError, match="pre_prompt_message_count"):
        asyncio.run(
            assemble_with_engine(
                engine, messages=messages, session_id="s", pre_prompt_message_count=3
            )
        )
    assert engine.calls == []


def test_engine_without_rfc_params_still_works() -> None:
    seen: dict[str, Any] = {}

    class OldEngine:
        info = ContextEngineInfo(id="old", name="Old")

        async def assemble(
            self,
            *,
            session_id: str,
            messages: Sequence[Mapping[str, Any]],
            token_budget: int | None = None,
        ) -> AssembleResult:
            seen.update(session_id=session_id, token_budget=token_budget)
            return AssembleResult(messages=messages)

    messages = [user("a")]
    out, _result, warning = asyncio.run(
        assemble_with_engine(
            OldEngine(),  # type: ignore[arg-type]
            messages=messages,
            session_id="s",
            token_budget=5,
            prompt="a",
            input_provenance=[{"kind": "external_user"}],
            pre_prompt_message_count=0,
        )
    )
    assert warning is None and out is messages
    assert seen == {"session_id": "s", "token_budget": 5}


def test_legacy_assemble_returns_the_pipeline_object() -> None:
    transcript = clawctx.Transcript([user("a")])
    out, result, warning = asyncio.run(
        assemble_with_engine(LegacyContextEngine(), messages=transcript, session_id="s")
    )
    assert out is transcript and warning is None
    assert result is not None and result.estimated_tokens == 0


class ResultEngine:
    def __init__(self, result: Any = None, error: Exception | None = None) -> None:
        self.result = result
        self.error = error
        self.info = ContextEngineInfo(id="weird", name="Weird")

    async def assemble(self, **kwargs: Any) -> Any:
        if self.error is not None:
            raise self.error
        return self.result


@pytest.mark.parametrize(
    ("returned", "detail"),
    [
        (None, "(got null)"),
        ("text", "(got string)"),
        ([user("a")], "(got array)"),
        ({}, "(got messages of type null)"),
        ({"messages": "abc"}, "(got messages of type string)"),
        ({"messages": {"role": "user"}}, "(got messages of type object)"),
        (AssembleResult(messages=5), "(got messages of type number)"),  # type: ignore[arg-type]
    ],
)
def test_invalid_assemble_result_falls_back(
    returned: Any, detail: str, caplog: pytest.LogCaptureFixture
) -> None:
    messages = [user("a")]
    with caplog.at_level(logging.WARNING, logger="clawctx.context_engine"):
        out, result, warning = asyncio.run(
            assemble_with_engine(ResultEngine(returned), messages=messages, session_id="s")  # type: ignore[arg-type]
        )
    assert out is messages and result is None
    assert warning == (
        "context engine assemble failed, using pipeline messages: TypeError: "
        'context engine "weird" assemble() returned an invalid result: expected an object '
        f'with a "messages" array {detail}'
    )
    assert caplog.messages == [warning]


def test_assemble_exception_falls_back() -> None:
    messages = [user("a")]
    engine = ResultEngine(error=RuntimeError("db down"))
    out, result, warning = asyncio.run(
        assemble_with_engine(engine, messages=messages, session_id="s")  # type: ignore[arg-type]
    )
    assert out is messages and result is None
    assert (
        warning == "context engine assemble failed, using pipeline messages: RuntimeError: db down"
    )


def test_mapping_assemble_result_is_accepted() -> None:
    engine = ResultEngine(
        {"messages": (user("x"),), "estimatedTokens": 12, "systemPromptAddition": "A"}
    )
    out, result, warning = asyncio.run(
        assemble_with_engine(engine, messages=[user("a")], session_id="s")  # type: ignore[arg-type]
    )
    assert warning is None
    assert out == (user("x"),)
    assert result == AssembleResult((user("x"),), 12, "A")


def test_filter_runtime_context_flag_filters_aligned_arrays() -> None:
    engine = RecordingEngine()

    def rc(n: int) -> Message:
        return {"role": "custom", "customType": RUNTIME_CONTEXT_CUSTOM_TYPE, "content": f"rc{n}"}

    messages = [rc(1), user("a"), assistant("b"), rc(2)]
    provenance = [None, {"kind": "external_user"}, None, None]
    asyncio.run(
        assemble_with_engine(
            engine,
            messages=messages,
            session_id="s",
            pre_prompt_message_count=3,
            input_provenance=provenance,
            internal_events=[None, None, None, None],
            filter_runtime_context=True,
        )
    )
    kwargs = engine.calls[0][1]
    assert kwargs["messages"] == [user("a"), assistant("b"), rc(2)]
    assert kwargs["input_provenance"] == (InputProvenance("external_user"), None, None)
    assert kwargs["internal_events"] == (None, None, None)
    assert kwargs["pre_prompt_message_count"] == 2
    # Off by default (baseline): the engine sees everything.
    asyncio.run(assemble_with_engine(engine, messages=messages, session_id="s"))
    assert engine.calls[1][1]["messages"] is messages


def test_prepend_system_prompt_addition() -> None:
    assert prepend_system_prompt_addition("SYS", "ADD") == "ADD\n\nSYS"
    assert prepend_system_prompt_addition("SYS", "") == "SYS"
    assert prepend_system_prompt_addition("SYS", None) == "SYS"


# ---- after the turn (attempt.ts: afterTurn, else ingestBatch, else ingest) --------------------------


SNAPSHOT = [user("old"), assistant("old reply"), user("new"), assistant("new reply")]


class AfterTurnEngine(RecordingEngine):
    async def after_turn(self, **kwargs: Any) -> None:
        self.calls.append(("after_turn", kwargs))

    async def ingest_batch(self, **kwargs: Any) -> IngestBatchResult:
        self.calls.append(("ingest_batch", kwargs))
        return IngestBatchResult(len(kwargs["messages"]))


class BatchEngine(RecordingEngine):
    async def ingest_batch(self, **kwargs: Any) -> IngestBatchResult:
        self.calls.append(("ingest_batch", kwargs))
        return IngestBatchResult(len(kwargs["messages"]))


def record(engine: Any, **overrides: Any) -> None:
    kwargs: dict[str, Any] = {
        "session_id": "s",
        "session_key": "k",
        "session_file": "/tmp/s.jsonl",
        "messages": SNAPSHOT,
        "pre_prompt_message_count": 2,
    }
    kwargs.update(overrides)
    asyncio.run(record_turn_with_engine(engine, **kwargs))


def test_after_turn_is_preferred() -> None:
    engine = AfterTurnEngine()
    record(engine, is_heartbeat=True, token_budget=99)
    assert engine.calls == [
        (
            "after_turn",
            {
                "session_id": "s",
                "session_key": "k",
                "session_file": "/tmp/s.jsonl",
                "messages": SNAPSHOT,
                "pre_prompt_message_count": 2,
                "is_heartbeat": True,
                "token_budget": 99,
            },
        )
    ]


def test_ingest_batch_gets_the_tail() -> None:
    engine = BatchEngine()
    record(engine)
    assert engine.calls == [
        (
            "ingest_batch",
            {
                "session_id": "s",
                "session_key": "k",
                "messages": SNAPSHOT[2:],
                "is_heartbeat": False,
            },
        )
    ]


def test_ingest_one_by_one_fallback() -> None:
    engine = RecordingEngine()
    record(engine)
    assert [(name, kwargs["message"]) for name, kwargs in engine.calls] == [
        ("ingest", SNAPSHOT[2]),
        ("ingest", SNAPSHOT[3]),
    ]


def test_nothing_new_means_no_ingest() -> None:
    engine = BatchEngine()
    record(engine, pre_prompt_message_count=4)
    assert engine.calls == []


def test_transcript_snapshot() -> None:
    engine = RecordingEngine()
    record(engine, messages=clawctx.Transcript(SNAPSHOT), pre_prompt_message_count=3)
    assert [kwargs["message"] for _, kwargs in engine.calls] == [SNAPSHOT[3]]


def test_failures_are_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    class Failing(RecordingEngine):
        async def after_turn(self, **kwargs: Any) -> None:
            raise RuntimeError("after")

    class FailingBatch(RecordingEngine):
        async def ingest_batch(self, **kwargs: Any) -> IngestBatchResult:
            raise ValueError("batch")

    class FlakyIngest(RecordingEngine):
        async def ingest(self, **kwargs: Any) -> IngestResult:
            if kwargs["message"] is SNAPSHOT[2]:
                raise OSError("disk")
            return await super().ingest(**kwargs)

    flaky = FlakyIngest()
    with caplog.at_level(logging.WARNING, logger="clawctx.context_engine"):
        record(Failing())
        record(FailingBatch())
        record(flaky)
    assert caplog.messages == [
        "context engine afterTurn failed: RuntimeError: after",
        "context engine ingest failed: ValueError: batch",
        "context engine ingest failed: OSError: disk",
    ]
    # The message after the failing one was still ingested.
    assert [kwargs["message"] for _, kwargs in flaky.calls] == [SNAPSHOT[3]]


def test_legacy_engine_after_turn_is_a_no_op() -> None:
    record(LegacyContextEngine())


def test_bootstrap_with_engine_calls_optional_bootstrap_and_isolates_failures(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from clawctx.engine.context_engine import BootstrapResult, bootstrap_with_engine

    class Bootstrapping(LegacyContextEngine):
        async def bootstrap(self, *, session_id: str, session_file: str) -> BootstrapResult:
            return BootstrapResult(bootstrapped=True, reason=f"{session_id}@{session_file}")

    class Failing(LegacyContextEngine):
        def bootstrap(self, **params: object) -> BootstrapResult:
            raise OSError("disk gone")

    result = asyncio.run(
        bootstrap_with_engine(Bootstrapping(), session_id="s", session_key="k", session_file="f")
    )
    assert result == BootstrapResult(bootstrapped=True, reason="s@f")
    assert (
        asyncio.run(
            bootstrap_with_engine(
                LegacyContextEngine(), session_id="s", session_key=None, session_file="f"
            )
        )
        is None
    )
    with caplog.at_level("WARNING"):
        assert (
            asyncio.run(
                bootstrap_with_engine(Failing(), session_id="s", session_key=None, session_file="f")
            )
            is None
        )
    assert "context engine bootstrap failed: OSError: disk gone" in caplog.text
