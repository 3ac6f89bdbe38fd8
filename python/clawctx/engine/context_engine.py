"""The ContextEngine plugin contract, its registry and the legacy engine (OpenClaw
2026.3.13 `src/context-engine/types.ts`, `registry.ts` and `legacy.ts`; the optional ``assemble()``
params of clawctx's RFC are proposed, not upstream).

A context engine owns what the model sees: the runtime hands it every new message (``ingest`` /
``after_turn``), asks it for the context before a model call (``assemble``) and lets it compact
(``compact``). OpenClaw's default engine, ``"legacy"``, passes messages through unchanged and
compacts with pi's built-in compaction. :func:`assemble_with_engine` and
:func:`record_turn_with_engine` are the runtime's side of the contract (``runEmbeddedAttempt`` in
`src/agents/pi-embedded-runner/run/attempt.ts`): they call an
engine, validate what it returns and keep a failing engine from failing the turn.

Method parameters are keyword-only and snake_case (``session_id``, ``pre_prompt_message_count``,
…). The runtime helpers pass an engine only the keyword arguments its method declares (all of
them if it takes ``**kwargs``), so an engine written before an optional parameter existed — such
as the RFC's ``input_provenance`` (proposed, not upstream) — keeps working and simply does not see
it.
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, runtime_checkable

from clawctx._core import CompactionSettings, SummaryRequest, Transcript
from clawctx.engine.internal_events import AgentTaskCompletionEvent, runtime_context_keep_mask
from clawctx.engine.provenance import InputProvenance, normalize_input_provenance
from clawctx.errors import ContextEngineNotRegisteredError
from clawctx.history.compaction import compact_session
from clawctx.history.session import Session

__all__ = [
    "DEFAULT_CONTEXT_ENGINE_ID",
    "OPTIONAL_CONTEXT_ENGINE_METHODS",
    "AssembleResult",
    "BootstrapResult",
    "CompactResult",
    "CompactResultDetails",
    "CompactionTarget",
    "ContextEngine",
    "ContextEngineFactory",
    "ContextEngineInfo",
    "ContextEngineNotRegisteredError",
    "IngestBatchResult",
    "IngestResult",
    "LegacyContextEngine",
    "SubagentEndReason",
    "SubagentSpawnPreparation",
    "TranscriptRewriteResult",
    "assemble_with_engine",
    "bootstrap_with_engine",
    "get_context_engine_factory",
    "list_context_engine_ids",
    "prepend_system_prompt_addition",
    "record_turn_with_engine",
    "register_context_engine",
    "resolve_context_engine",
    "resolve_context_engine_async",
    "unregister_context_engine",
]

Messages = Sequence[Mapping[str, Any]] | Transcript
SubagentEndReason = Literal["deleted", "completed", "swept", "released"]
CompactionTarget = Literal["budget", "threshold"]
#: registry.ts, resolveContextEngine: the engine used when the config names none.
DEFAULT_CONTEXT_ENGINE_ID: Final = "legacy"
#: types.ts, ContextEngine: methods an engine may leave out; call sites look them up with
#: ``getattr``.
OPTIONAL_CONTEXT_ENGINE_METHODS: Final = (
    "bootstrap",
    "maintain",
    "ingest_batch",
    "after_turn",
    "prepare_subagent_spawn",
    "on_subagent_ended",
    "dispose",
)
_LOGGER: Final = logging.getLogger("clawctx.context_engine")


# ---- result types (context-engine/types.ts) ------------------------------------------------


@dataclass(frozen=True, slots=True)
class AssembleResult:
    """What ``assemble`` returns (types.ts, ``AssembleResult``). ``system_prompt_addition`` is
    prepended to the runtime system prompt (see :func:`prepend_system_prompt_addition`)."""

    messages: Messages
    estimated_tokens: int = 0
    system_prompt_addition: str | None = None


@dataclass(frozen=True, slots=True)
class CompactResultDetails:
    """The ``result`` of a compaction that happened (types.ts, ``CompactResult``)."""

    tokens_before: int
    summary: str | None = None
    first_kept_entry_id: str | None = None
    tokens_after: int | None = None
    details: Any = None


@dataclass(frozen=True, slots=True)
class CompactResult:
    """What ``compact`` returns (types.ts, ``CompactResult``)."""

    ok: bool
    compacted: bool
    reason: str | None = None
    result: CompactResultDetails | None = None


@dataclass(frozen=True, slots=True)
class IngestResult:
    """What ``ingest`` returns (types.ts, ``IngestResult``); ``False`` means a duplicate or a
    no-op."""

    ingested: bool


@dataclass(frozen=True, slots=True)
class IngestBatchResult:
    """What ``ingest_batch`` returns (types.ts, ``IngestBatchResult``)."""

    ingested_count: int


@dataclass(frozen=True, slots=True)
class BootstrapResult:
    """What ``bootstrap`` returns (types.ts, ``BootstrapResult``)."""

    bootstrapped: bool
    imported_messages: int | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class TranscriptRewriteResult:
    """What ``maintain`` returns (later OpenClaw types.ts, ``TranscriptRewriteResult``;
    not in 2026.3.13)."""

    changed: bool
    bytes_freed: int
    rewritten_entries: int
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class ContextEngineInfo:
    """Who an engine is (types.ts, ``ContextEngineInfo``). ``owns_compaction=True`` means the
    runtime must turn off pi's automatic compaction: the engine's ``compact`` is authoritative."""

    id: str
    name: str
    version: str | None = None
    owns_compaction: bool = False


class SubagentSpawnPreparation(Protocol):
    """Returned by ``prepare_subagent_spawn`` (types.ts,
    ``SubagentSpawnPreparation``): undoes the preparation when the
    spawn fails. ``rollback`` may be sync or ``async``."""

    def rollback(self) -> Awaitable[None] | None: ...


# ---- the contract (context-engine/types.ts: ContextEngine) ---------------------------------


@runtime_checkable
class ContextEngine(Protocol):
    """A context engine (types.ts, ``ContextEngine``). Required: ``info``, ``ingest``, ``assemble``,
    ``compact``.

    Optional methods (look them up with ``getattr``; see :data:`OPTIONAL_CONTEXT_ENGINE_METHODS`),
    all ``async`` with keyword-only parameters:

    * ``bootstrap(*, session_id, session_file, session_key=None) -> BootstrapResult`` —
      initialise state, optionally import existing history (``bootstrap?``);
    * ``maintain(*, session_id, session_file, session_key=None, runtime_context=None) ->
      TranscriptRewriteResult`` — [Apr+] housekeeping after bootstrap, turns or compaction;
    * ``ingest_batch(*, session_id, messages, session_key=None, is_heartbeat=False) ->
      IngestBatchResult`` (``ingestBatch?``);
    * ``after_turn(*, session_id, session_file, messages, pre_prompt_message_count,
      session_key=None, auto_compaction_summary=None, is_heartbeat=False, token_budget=None,
      runtime_context=None) -> None`` — replaces per-message ingestion when present
      (``afterTurn?``);
    * ``prepare_subagent_spawn(*, parent_session_key, child_session_key, ttl_ms=None) ->
      SubagentSpawnPreparation | None``; ``on_subagent_ended(*, child_session_key, reason:
      SubagentEndReason) -> None``; ``dispose() -> None`` (``prepareSubagentSpawn?``,
      ``onSubagentEnded?``, ``dispose?``).

    ``assemble`` also takes the RFC's proposed parameters (not upstream):
    ``pre_prompt_message_count`` (the messages before it are history, the rest is the live turn),
    and ``input_provenance`` / ``internal_events``, sequences aligned with ``messages`` by index
    (``None`` at an index = no signal, not "external user").
    """

    @property
    def info(self) -> ContextEngineInfo: ...

    async def ingest(
        self,
        *,
        session_id: str,
        message: Mapping[str, Any],
        session_key: str | None = None,
        is_heartbeat: bool = False,
    ) -> IngestResult: ...

    async def assemble(
        self,
        *,
        session_id: str,
        messages: Messages,
        session_key: str | None = None,
        token_budget: int | None = None,
        model: str | None = None,
        prompt: str | None = None,
        pre_prompt_message_count: int | None = None,
        input_provenance: Sequence[InputProvenance | None] | None = None,
        internal_events: Sequence[Sequence[AgentTaskCompletionEvent] | None] | None = None,
    ) -> AssembleResult: ...

    async def compact(
        self,
        *,
        session_id: str,
        session_file: str | os.PathLike[str],
        session_key: str | None = None,
        token_budget: int | None = None,
        force: bool = False,
        current_token_count: int | None = None,
        compaction_target: CompactionTarget | None = None,
        custom_instructions: str | None = None,
        runtime_context: Mapping[str, Any] | None = None,
    ) -> CompactResult: ...


# ---- the legacy engine (context-engine/legacy.ts: LegacyContextEngine) --------------------

_Summarizer = Callable[[SummaryRequest], str | Awaitable[str]]


class LegacyContextEngine:
    """OpenClaw's default engine, id ``"legacy"`` (legacy.ts, ``LegacyContextEngine``).

    ``ingest`` is a no-op returning ``ingested=False`` (the session file already holds the
    messages); ``assemble`` returns the very same ``messages`` object with
    ``estimated_tokens=0``; ``after_turn`` and ``dispose`` do nothing; there is no
    ``bootstrap`` and no ``owns_compaction``.

    ``compact`` runs pi's compaction on ``session_file`` through
    :func:`clawctx.history.compaction.compact_session` with the ``summarize`` callable (sync or
    async) and ``settings`` given here, and maps the outcome: compacted → ``ok=True,
    compacted=True`` with the summary, first kept entry id, tokens before and file details;
    nothing to compact → ``ok=True, compacted=False, reason="nothing to compact"``; an error →
    ``ok=False`` with the error as reason. clawctx has no model client, so without
    ``summarize`` it returns
    ``CompactResult(ok=False, compacted=False, reason="no summarizer configured")``.
    ``force`` and ``token_budget`` do not change pi's cut (it compacts whenever called).
    """

    def __init__(
        self,
        *,
        summarize: _Summarizer | None = None,
        settings: CompactionSettings | Mapping[str, Any] | None = None,
    ) -> None:
        self._summarize = summarize
        self._settings = settings
        self._info = ContextEngineInfo(
            id=DEFAULT_CONTEXT_ENGINE_ID, name="Legacy Context Engine", version="1.0.0"
        )

    @property
    def info(self) -> ContextEngineInfo:
        """``legacy`` / ``Legacy Context Engine`` / ``1.0.0``."""
        return self._info

    async def ingest(
        self,
        *,
        session_id: str,
        message: Mapping[str, Any],
        session_key: str | None = None,
        is_heartbeat: bool = False,
    ) -> IngestResult:
        """No-op: the session manager persists messages."""
        return IngestResult(ingested=False)

    async def assemble(
        self,
        *,
        session_id: str,
        messages: Messages,
        session_key: str | None = None,
        token_budget: int | None = None,
        model: str | None = None,
        prompt: str | None = None,
        pre_prompt_message_count: int | None = None,
        input_provenance: Sequence[InputProvenance | None] | None = None,
        internal_events: Sequence[Sequence[AgentTaskCompletionEvent] | None] | None = None,
    ) -> AssembleResult:
        """Pass-through: the same messages object, ``estimated_tokens=0``."""
        return AssembleResult(messages=messages, estimated_tokens=0)

    async def after_turn(
        self,
        *,
        session_id: str,
        session_file: str | os.PathLike[str],
        messages: Messages,
        pre_prompt_message_count: int,
        session_key: str | None = None,
        auto_compaction_summary: str | None = None,
        is_heartbeat: bool = False,
        token_budget: int | None = None,
        runtime_context: Mapping[str, Any] | None = None,
    ) -> None:
        """No-op: the session file already holds the turn."""

    async def compact(
        self,
        *,
        session_id: str,
        session_file: str | os.PathLike[str],
        session_key: str | None = None,
        token_budget: int | None = None,
        force: bool = False,
        current_token_count: int | None = None,
        compaction_target: CompactionTarget | None = None,
        custom_instructions: str | None = None,
        runtime_context: Mapping[str, Any] | None = None,
    ) -> CompactResult:
        """pi's compaction of ``session_file`` (see the class docstring for the mapping)."""
        if self._summarize is None:
            return CompactResult(ok=False, compacted=False, reason="no summarizer configured")
        try:
            session = Session.open(session_file)
            outcome = compact_session(session, self._summarize, self._settings, custom_instructions)
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except Exception as error:
            return CompactResult(ok=False, compacted=False, reason=_describe_error(error))
        if outcome is None:
            return CompactResult(ok=True, compacted=False, reason="nothing to compact")
        return CompactResult(
            ok=True,
            compacted=True,
            result=CompactResultDetails(
                tokens_before=outcome.tokens_before,
                summary=outcome.summary,
                first_kept_entry_id=outcome.first_kept_entry_id,
                details=outcome.details,
            ),
        )

    async def dispose(self) -> None:
        """Nothing to release."""


# ---- registry (context-engine/registry.ts) -------------------------------------------------

#: Builds an engine; receives the keyword arguments given to :func:`resolve_context_engine`.
ContextEngineFactory = Callable[..., ContextEngine | Awaitable[ContextEngine]]


def _legacy_factory(
    *,
    summarize: _Summarizer | None = None,
    settings: CompactionSettings | Mapping[str, Any] | None = None,
    **_ignored: Any,
) -> ContextEngine:
    # Other factory context (config, agent_dir, workspace_dir, …) means nothing to legacy.
    return LegacyContextEngine(summarize=summarize, settings=settings)


_REGISTRY: dict[str, ContextEngineFactory] = {DEFAULT_CONTEXT_ENGINE_ID: _legacy_factory}


def register_context_engine(
    id: str, factory: ContextEngineFactory, *, replace: bool = False
) -> None:
    """Registers an engine factory under ``id`` (registry.ts, ``registerContextEngine``).

    Registering an id twice raises ``ValueError`` unless ``replace=True`` (upstream's [later]
    registry refuses silent takeovers too). The default ``"legacy"`` id is pre-registered.
    """
    if not isinstance(id, str) or not id.strip():
        raise ValueError(f"a context engine id must be a non-blank string, not {id!r}")
    if not callable(factory):
        raise TypeError(f"a context engine factory must be callable, not {type(factory).__name__}")
    if id in _REGISTRY and not replace:
        raise ValueError(
            f'Context engine "{id}" is already registered; pass replace=True to replace it'
        )
    _REGISTRY[id] = factory


def unregister_context_engine(id: str) -> ContextEngineFactory | None:
    """Removes and returns the factory registered under ``id`` (``None`` if there is none)."""
    return _REGISTRY.pop(id, None)


def get_context_engine_factory(id: str) -> ContextEngineFactory | None:
    """The factory registered under ``id``, or ``None`` (registry.ts,
    ``getContextEngineFactory``)."""
    return _REGISTRY.get(id)


def list_context_engine_ids() -> list[str]:
    """Registered ids in registration order (registry.ts, ``listContextEngineIds``)."""
    return list(_REGISTRY)


def _configured_engine_id(config: Mapping[str, Any] | None) -> str:
    """``resolveContextEngine``: trimmed ``config["plugins"]["slots"]["contextEngine"]``, else
    ``"legacy"``."""
    value: Any = config
    for key in ("plugins", "slots", "contextEngine"):
        value = value.get(key) if isinstance(value, Mapping) else None
    if isinstance(value, str) and value.strip():
        return value.strip()
    return DEFAULT_CONTEXT_ENGINE_ID


def _factory_for(config: Mapping[str, Any] | None) -> ContextEngineFactory:
    engine_id = _configured_engine_id(config)
    factory = _REGISTRY.get(engine_id)
    if factory is None:
        available = ", ".join(_REGISTRY) or "(none)"
        raise ContextEngineNotRegisteredError(
            f'Context engine "{engine_id}" is not registered. Available engines: {available}'
        )
    return factory


def resolve_context_engine(
    config: Mapping[str, Any] | None = None, **factory_kwargs: Any
) -> ContextEngine:
    """Builds the configured engine (registry.ts, ``resolveContextEngine``).

    The id is the trimmed ``config["plugins"]["slots"]["contextEngine"]`` or ``"legacy"``; its
    factory is called with ``**factory_kwargs`` (e.g. ``summarize=`` for the legacy engine).
    Raises :class:`ContextEngineNotRegisteredError` for an unknown id, and ``TypeError`` when
    the factory is asynchronous (use :func:`resolve_context_engine_async`).
    """
    engine = _factory_for(config)(**factory_kwargs)
    if inspect.isawaitable(engine):
        if inspect.iscoroutine(engine):
            engine.close()  # never awaited: close it so no warning is emitted
        raise TypeError(
            "this context engine factory is asynchronous; use resolve_context_engine_async"
        )
    return engine


async def resolve_context_engine_async(
    config: Mapping[str, Any] | None = None, **factory_kwargs: Any
) -> ContextEngine:
    """:func:`resolve_context_engine` for factories that may be ``async``
    (``resolveContextEngine``)."""
    engine = _factory_for(config)(**factory_kwargs)
    if inspect.isawaitable(engine):
        engine = await engine
    return engine


# ---- runtime call sequence (pi-embedded-runner/run/attempt.ts: runEmbeddedAttempt) --------


def _describe_error(error: BaseException) -> str:
    """An error as JavaScript's ``String(err)`` prints one: ``Name: message``."""
    message = str(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def _accepted_kwargs(method: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments ``method`` declares (all of them if it takes ``**kwargs``)."""
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):  # no introspectable signature: pass everything
        return kwargs
    if any(parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters):
        return kwargs
    names = {
        parameter.name
        for parameter in parameters
        if parameter.kind
        in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    }
    return {key: value for key, value in kwargs.items() if key in names}


async def _call_engine(method: Callable[..., Any], **kwargs: Any) -> Any:
    result = method(**_accepted_kwargs(method, kwargs))
    if inspect.isawaitable(result):
        result = await result
    return result


async def _call_engine_or_warn(
    log: logging.Logger, what: str, method: Callable[..., Any], /, **kwargs: Any
) -> Any:
    """:func:`_call_engine` where a failure must not stop the run (``runEmbeddedAttempt``
    catches it): logged as a warning ``context engine <what> failed: <err>``, then ``None``."""
    try:
        return await _call_engine(method, **kwargs)
    except Exception as error:
        log.warning(f"context engine {what} failed: {_describe_error(error)}")
        return None


def _js_type_name(value: object) -> str:
    """The type word of upstream's assemble-result error (JavaScript ``typeof`` spelling)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple, Transcript)):
        return "array"
    if isinstance(value, Mapping) or hasattr(value, "__dict__") or hasattr(value, "__slots__"):
        return "object"
    return type(value).__name__


def _is_messages(value: object) -> bool:
    return isinstance(value, Transcript) or (
        isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray))
    )


def _validated_assemble_result(value: object, engine_id: str) -> AssembleResult:
    """``runEmbeddedAttempt``: the result must carry a ``messages`` array. Accepts
    :class:`AssembleResult` or a mapping with ``messages`` / ``estimatedTokens`` /
    ``systemPromptAddition`` (snake_case accepted)."""
    prefix = (
        f'context engine "{engine_id}" assemble() returned an invalid result: '
        'expected an object with a "messages" array'
    )
    if isinstance(value, AssembleResult):
        if not _is_messages(value.messages):
            raise TypeError(f"{prefix} (got messages of type {_js_type_name(value.messages)})")
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"{prefix} (got {_js_type_name(value)})")
    messages = value.get("messages")
    if not _is_messages(messages):
        raise TypeError(f"{prefix} (got messages of type {_js_type_name(messages)})")
    tokens = value.get("estimatedTokens", value.get("estimated_tokens", 0))
    addition = value.get("systemPromptAddition", value.get("system_prompt_addition"))
    return AssembleResult(
        messages=messages,  # type: ignore[arg-type]  # checked by _is_messages
        estimated_tokens=tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else 0,
        system_prompt_addition=addition if isinstance(addition, str) else None,
    )


def _engine_id(engine: object) -> str:
    info = getattr(engine, "info", None)
    engine_id = getattr(info, "id", None)
    if engine_id is None and isinstance(info, Mapping):
        engine_id = info.get("id")
    return engine_id if isinstance(engine_id, str) else "unknown"


def _aligned(name: str, values: Sequence[Any] | None, count: int) -> tuple[Any, ...] | None:
    """RFC (proposed, not upstream): an aligned array must have one entry per message."""
    if values is None:
        return None
    if isinstance(values, (str, bytes)) or len(values) != count:
        length = len(values)
        raise ValueError(
            f"{name} must be aligned with messages: got {length} entries for {count} messages"
        )
    return tuple(values)


async def assemble_with_engine(
    engine: ContextEngine,
    *,
    messages: Messages,
    session_id: str,
    session_key: str | None = None,
    token_budget: int | None = None,
    model: str | None = None,
    prompt: str | None = None,
    pre_prompt_message_count: int | None = None,
    input_provenance: Sequence[InputProvenance | Mapping[str, Any] | None] | None = None,
    internal_events: Sequence[Sequence[AgentTaskCompletionEvent] | None] | None = None,
    filter_runtime_context: bool = False,
    logger: logging.Logger | None = None,
) -> tuple[Messages, AssembleResult | None, str | None]:
    """Calls ``engine.assemble`` the way the embedded runner does (run/attempt.ts,
    ``runEmbeddedAttempt``; plus the RFC's proposed parameters).

    Returns ``(messages, result, warning)``. On success ``messages`` is the engine's list
    (``result.messages``; the caller replaces its in-memory messages when it is not the object
    it passed) and ``warning`` is ``None``. When the engine raises or returns something without
    a ``messages`` sequence — ``context engine "<id>" assemble() returned an invalid result:
    expected an object with a "messages" array (got …)`` — the warning ``context engine
    assemble failed, using pipeline messages: <error>`` is logged and returned together with
    the unchanged pipeline ``messages`` and ``result=None``.

    RFC (proposed, not upstream): ``input_provenance`` (normalized per entry) and
    ``internal_events`` must have exactly ``len(messages)`` entries and ``pre_prompt_message_count``
    must lie in ``[0, len(messages)]``, else ``ValueError`` (a caller bug, raised, never swallowed).
    ``filter_runtime_context=True`` applies the [later] upstream rule of openclaw#76251
    (not in 2026.3.13) to the engine's
    input (historical ``openclaw.runtime-context`` messages dropped, the run right before the
    upcoming prompt kept; the aligned arrays are filtered the same way and
    ``pre_prompt_message_count`` is shifted to match).
    """
    log = logger if logger is not None else _LOGGER
    count = len(messages)
    provenance = _aligned("input_provenance", input_provenance, count)
    events = _aligned("internal_events", internal_events, count)
    if pre_prompt_message_count is not None and not 0 <= pre_prompt_message_count <= count:
        raise ValueError(
            f"pre_prompt_message_count must be between 0 and {count}, "
            f"not {pre_prompt_message_count}"
        )
    if provenance is not None:
        # Most history messages carry none: skip the call for them (one per message per request).
        provenance = tuple(
            None if entry is None else normalize_input_provenance(entry) for entry in provenance
        )
    engine_messages: Messages = messages
    if filter_runtime_context:
        keep = runtime_context_keep_mask(list(messages), pending_user_prompt=True)
        if not all(keep):
            engine_messages = [m for m, kept in zip(messages, keep, strict=True) if kept]
            if provenance is not None:
                provenance = tuple(p for p, kept in zip(provenance, keep, strict=True) if kept)
            if events is not None:
                events = tuple(e for e, kept in zip(events, keep, strict=True) if kept)
            if pre_prompt_message_count is not None:
                pre_prompt_message_count = sum(keep[:pre_prompt_message_count])
    engine_id = _engine_id(engine)
    try:
        raw = await _call_engine(
            engine.assemble,
            session_id=session_id,
            session_key=session_key,
            messages=engine_messages,
            token_budget=token_budget,
            model=model,
            prompt=prompt,
            pre_prompt_message_count=pre_prompt_message_count,
            input_provenance=provenance,
            internal_events=events,
        )
        result = _validated_assemble_result(raw, engine_id)
    except Exception as error:
        warning = (
            f"context engine assemble failed, using pipeline messages: {_describe_error(error)}"
        )
        log.warning(warning)
        return messages, None, warning
    return result.messages, result, None


def prepend_system_prompt_addition(system_prompt: str, addition: str | None) -> str:
    """``prependSystemPromptAddition`` (run/attempt.ts): a non-empty ``system_prompt_addition`` goes
    before the system prompt, separated by a blank line (separator not pinned by the spec;
    upstream's baseline ``prependSystemPromptAddition`` joins with ``\\n\\n``)."""
    return f"{addition}\n\n{system_prompt}" if addition else system_prompt


async def bootstrap_with_engine(
    engine: ContextEngine,
    *,
    session_id: str,
    session_key: str | None,
    session_file: str | os.PathLike[str],
    logger: logging.Logger | None = None,
) -> BootstrapResult | None:
    """``runEmbeddedAttempt`` (run/attempt.ts): lets an engine with ``bootstrap`` initialise its
    state for an existing session file (optionally importing its history). Engines without it, and
    failures (logged as ``context engine bootstrap failed: <err>``), give ``None``: the run
    continues."""
    bootstrap = getattr(engine, "bootstrap", None)
    if not callable(bootstrap):
        return None
    result = await _call_engine_or_warn(
        logger if logger is not None else _LOGGER,
        "bootstrap",
        bootstrap,
        session_id=session_id,
        session_key=session_key,
        session_file=session_file,
    )
    return result if isinstance(result, BootstrapResult) else None


async def record_turn_with_engine(
    engine: ContextEngine,
    *,
    session_id: str,
    session_key: str | None,
    session_file: str | os.PathLike[str],
    messages: Messages,
    pre_prompt_message_count: int,
    is_heartbeat: bool = False,
    token_budget: int | None = None,
    logger: logging.Logger | None = None,
) -> None:
    """Tells the engine about a finished turn (``runEmbeddedAttempt``: ``afterTurn``, else
    ``ingestBatch``, else ``ingest``).

    If the engine has ``after_turn`` it gets the whole message snapshot and
    ``pre_prompt_message_count``. Otherwise the new messages ``messages[pre_prompt_message_count:]``
    go to ``ingest_batch`` when present, else to ``ingest`` one by one. Failures are logged as
    warnings (``context engine afterTurn failed: <err>`` / ``context engine ingest failed:
    <err>``) and never raised: the turn already succeeded.
    """
    log = logger if logger is not None else _LOGGER
    after_turn = getattr(engine, "after_turn", None)
    if callable(after_turn):
        await _call_engine_or_warn(
            log,
            "afterTurn",
            after_turn,
            session_id=session_id,
            session_key=session_key,
            session_file=session_file,
            messages=messages,
            pre_prompt_message_count=pre_prompt_message_count,
            is_heartbeat=is_heartbeat,
            token_budget=token_budget,
        )
        return
    new_messages = list(messages[pre_prompt_message_count:])
    if not new_messages:
        return
    ingest_batch = getattr(engine, "ingest_batch", None)
    if callable(ingest_batch):
        await _call_engine_or_warn(
            log,
            "ingest",
            ingest_batch,
            session_id=session_id,
            session_key=session_key,
            messages=new_messages,
            is_heartbeat=is_heartbeat,
        )
        return
    for message in new_messages:
        await _call_engine_or_warn(
            log,
            "ingest",
            engine.ingest,
            session_id=session_id,
            session_key=session_key,
            message=message,
            is_heartbeat=is_heartbeat,
        )
