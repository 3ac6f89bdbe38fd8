"""One request, end to end: the context an agent sends to a model (OpenClaw
2026.3.13 `src/agents/pi-embedded-runner/run/attempt.ts`, ``runEmbeddedAttempt``).

:class:`ContextPipeline` runs, for one inbound message, every stage OpenClaw's embedded runner
runs before a model call, in its order:

1. prompt body (`src/auto-reply/reply/get-reply-run.ts`, ``runPreparedReply``): reset prompt,
   untrusted inbound blocks, abort hint, think-level directive, system events, untrusted
   context, thread note, media note;
2. repair the session file if it is damaged (`src/agents/session-file-repair.ts`), open it
   (pi-mono 0.58.3 `packages/coding-agent/src/core/session-manager.ts`) lazily, from the end of
   the file (``Session.open(path, lazy=True)``: only as far back as the leaf's messages reach)
   — or refresh an open :class:`~clawctx.Session` (only the appended bytes are read);
3. build the context of the leaf (pi's ``buildSessionContext``);
4. sanitize it for the provider's transcript policy (`src/agents/pi-embedded-runner/google.ts`,
   ``sanitizeSessionHistory``), validate turns (`src/agents/pi-embedded-helpers/turns.ts`), limit
   history turns (`src/agents/pi-embedded-runner/history.ts`), repair tool-use/result pairing again
   (`src/agents/session-transcript-repair.ts`);
5. the context engine's ``assemble`` (run/attempt.ts), with the RFC signals of design note 02;
6. the system prompt (`src/agents/system-prompt.ts`) with the trusted inbound metadata and the
   workspace bootstrap files, with the bootstrap truncation warning for files cut to their
   budget (`src/agents/bootstrap-budget.ts`, see :class:`ContextPipeline`), then the engine's
   ``systemPromptAddition`` (``prependSystemPromptAddition``);
7. ``before_prompt_build`` / ``before_agent_start`` hooks (``resolvePromptBuildHookResult``);
8. orphaned trailing user message (run/attempt.ts);
9. prompt images (`src/agents/pi-embedded-runner/run/images.ts`) and history image re-injection;
10. the final prompt message, a token estimate and a report of every change.

After the model call, :meth:`ContextPipeline.record_turn` persists the prompt and the new
messages and lets the engine ``after_turn`` / ``ingest`` them (run/attempt.ts: ``afterTurn``, else
``ingestBatch``, else ``ingest``).

Heavy stages run in Rust with the GIL released; messages stay in a Rust-owned
:class:`~clawctx.Transcript` and only the few messages a stage must look at become dicts. The
async entry points run those stages in a worker thread, so an event loop stays responsive.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import difflib
import math
import os
import platform
import socket
import time
import uuid
from collections.abc import Callable, Coroutine, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from clawctx import _compat, _core
from clawctx.engine._sync_loop import run_on_thread_loop
from clawctx.engine.cache_prefix import CachePrefixTracker
from clawctx.engine.context_engine import (
    ContextEngine,
    LegacyContextEngine,
    assemble_with_engine,
    bootstrap_with_engine,
    record_turn_with_engine,
)
from clawctx.engine.hooks import (
    HookContext,
    HookRunner,
    PromptBuildEvent,
    PromptBuildHookResult,
    apply_prompt_build_hook_result,
    resolve_prompt_build_hook_result,
)
from clawctx.engine.internal_events import (
    AgentTaskCompletionEvent,
    format_agent_internal_events_for_prompt,
    should_suppress_prompt_persistence,
)
from clawctx.engine.provenance import (
    InputProvenance,
    annotate_inter_session_prompt_text,
    apply_input_provenance_to_user_message,
    normalize_input_provenance,
)
from clawctx.engine.turn import check_turn_messages, read_turn_replies
from clawctx.history.hygiene import detach_orphaned_trailing_user, sanitize_session_history
from clawctx.history.session import Session
from clawctx.prompt.bootstrap_budget import (
    BootstrapPromptWarning,
    BootstrapPromptWarningMode,
    analyze_bootstrap_budget,
    build_bootstrap_injection_stats,
    build_bootstrap_prompt_warning,
    resolve_bootstrap_prompt_truncation_warning_mode,
)
from clawctx.prompt.prompt_body import InboundContext, PromptBody, build_prompt_body
from clawctx.prompt.prompt_images import (
    ImageContent,
    detect_and_load_prompt_images,
    inject_history_images_into_messages,
    model_supports_images,
)
from clawctx.prompt.skills import load_workspace_skills
from clawctx.prompt.system_events import SystemEventQueue
from clawctx.prompt.system_prompt import (
    OPENCLAW_LAYOUT,
    ContextFile,
    PromptMode,
    RuntimeInfo,
    SystemPromptLayout,
    SystemPromptParams,
    apply_system_prompt_modifiers,
    build_extra_system_prompt,
    build_system_prompt,
    format_skills_for_prompt,
    resolve_prompt_mode,
)
from clawctx.prompt.workspace import (
    DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS,
    build_bootstrap_context_files,
    load_workspace_bootstrap_files,
)
from clawctx.wire import RequestPayload, build_request_payload, normalize_tools
from clawctx.wire.payload import KNOWN_APIS

__all__ = [
    "ContextPipeline",
    "ModelSpec",
    "PipelineChange",
    "PreparedRequest",
    "PromptRequest",
]

_T = TypeVar("_T")

#: Providers OpenClaw and pi-ai name (pi-ai ``KnownProvider``, OpenClaw's transcript policy):
#: a provider outside this list is accepted (an OpenAI-compatible endpoint of your own), unless
#: it looks like a misspelling of one of them.
KNOWN_PROVIDERS = (
    "amazon-bedrock",
    "anthropic",
    "azure-openai-responses",
    "cerebras",
    "deepseek",
    "github-copilot",
    "google",
    "google-antigravity",
    "google-gemini-cli",
    "google-vertex",
    "groq",
    "huggingface",
    "kimi-coding",
    "minimax",
    "minimax-cn",
    "mistral",
    "moonshot",
    "ollama",
    "openai",
    "openai-codex",
    "opencode",
    "openrouter",
    "together",
    "vercel-ai-gateway",
    "xai",
    "zai",
)


@dataclass(frozen=True)
class ModelSpec:
    """The model a request goes to: provider (``anthropic``, ``openai``, ``google``, …), model
    API (``anthropic-messages``, ``openai-responses``, ``google-generative-ai``, …), model id,
    the input kinds it accepts (``"image"`` enables prompt images, run/images.ts) and its context
    window in tokens (the context engine's token budget)."""

    provider: str
    api: str
    id: str
    input: tuple[str, ...] = ("text",)
    context_window: int | None = None
    supports_xhigh: bool = False

    def __post_init__(self) -> None:
        """Refuses an unknown model API (listing the known ones) and a provider that looks
        like a misspelt known one (``"antropic"``): a silent typo would drop the provider's
        rules."""
        if self.api not in KNOWN_APIS:
            known = ", ".join(KNOWN_APIS)
            raise ValueError(f"unknown model API {self.api!r}; known APIs: {known}")
        provider = self.provider.strip().lower()
        if provider not in KNOWN_PROVIDERS:
            close = difflib.get_close_matches(provider, KNOWN_PROVIDERS, n=1, cutoff=0.8)
            if close:
                raise ValueError(
                    f"unknown provider {self.provider!r}: did you mean {close[0]!r}? "
                    f"known providers: {', '.join(KNOWN_PROVIDERS)} (another name is taken "
                    "as an OpenAI-compatible endpoint of your own)"
                )

    @property
    def ref(self) -> str:
        """``provider/id``, as the runtime line and hooks show it."""
        return f"{self.provider}/{self.id}"


@dataclass(frozen=True)
class PromptRequest:
    """One inbound message. Give either ``text`` (a plain user message) or ``inbound`` (the
    channel's full context: an :class:`~clawctx.InboundContext` or a mapping with OpenClaw's
    ``Body`` / ``MessageSid`` / … keys)."""

    text: str | None = None
    inbound: InboundContext | Mapping[str, Any] | None = None
    session_key: str | None = None
    is_new_session: bool = False
    is_main_session: bool = False
    aborted_last_run: bool = False
    #: Where the message came from (`src/sessions/input-provenance.ts`); ``inter_session`` marks the
    #: prompt text.
    input_provenance: InputProvenance | Mapping[str, Any] | None = None
    #: Runtime events synthesized into this prompt (`src/agents/internal-events.ts`), e.g. a
    #: sub-agent completion.
    internal_events: Sequence[AgentTaskCompletionEvent] = ()
    #: Images the caller already has (kept only for vision models, as run/images.ts does).
    images: Sequence[ImageContent] = ()
    #: A think level resolved from an explicit directive or the session (get-reply-run.ts).
    resolved_think_level: str | None = None
    is_heartbeat: bool = False
    run_id: str | None = None
    #: The bootstrap truncation signatures this session has already seen (upstream's
    #: ``bootstrapPromptWarningSignaturesSeen``, e.g. read back with
    #: :func:`~clawctx.prompt.resolve_bootstrap_warning_signatures_seen`). ``None`` uses what
    #: the pipeline remembers for the session; given, it replaces that.
    bootstrap_warning_signatures_seen: Sequence[str] | None = None
    #: Tool definitions for this request, replacing the pipeline's ``tools``: pi's
    #: ``{name, description, parameters}`` or an SDK's own shape (see
    #: :func:`~clawctx.wire.normalize_tools`).
    tools: Sequence[Any] | None = None

    def inbound_context(self) -> InboundContext:
        """The request as an :class:`~clawctx.InboundContext`."""
        if isinstance(self.inbound, InboundContext):
            return self.inbound
        if self.inbound is not None:
            return InboundContext.from_mapping(self.inbound)
        return InboundContext(body=self.text or "")


@dataclass(frozen=True)
class PipelineChange:
    """One thing a stage changed (or found), for the request's report."""

    stage: str
    detail: str


@dataclass(frozen=True)
class PreparedRequest:
    """Everything a runtime needs for the model call, and what the pipeline did to get it.

    ``messages`` is the history before the prompt; ``prompt_message`` is the new user message
    (prompt text plus images) to send after it and to persist with :meth:`ContextPipeline.
    record_turn`. ``should_run`` is false when the message needs no model call (get-reply-run.ts);
    ``reply_text`` is then what to answer instead.
    """

    should_run: bool
    reply_text: str | None
    system_prompt: str
    messages: _core.Transcript
    prompt: str
    prompt_message: dict[str, Any]
    images: tuple[ImageContent, ...]
    think_level: str | None
    estimated_tokens: int
    pre_prompt_message_count: int
    #: The RFC signals given to ``assemble``, aligned with ``messages`` + the prompt message.
    input_provenance: tuple[InputProvenance | None, ...]
    internal_events: tuple[tuple[AgentTaskCompletionEvent, ...] | None, ...]
    #: False when the prompt must not be written to the transcript (later OpenClaw
    #: ``shouldSuppressAgentPromptPersistence``, not in 2026.3.13).
    persist_prompt: bool
    prompt_body: PromptBody
    changes: tuple[PipelineChange, ...]
    session_id: str | None
    session_file: str | None
    session_key: str | None
    is_heartbeat: bool = False
    model_override: str | None = None
    provider_override: str | None = None
    #: The bootstrap truncation warning of this request (bootstrap-budget.ts): signature, whether
    #: it was shown, its lines and the signatures the session has now seen (what a runtime
    #: persisting its own session state stores). ``None`` when the pipeline did not load the
    #: workspace files itself.
    bootstrap_prompt_warning: BootstrapPromptWarning | None = None
    #: The pipeline's model (what :meth:`request_payload` builds the body for).
    model: ModelSpec | None = None
    #: The upstream release reproduced exactly (:func:`clawctx.compat`), ``None`` for the safe
    #: default under which :meth:`request_payload` and :meth:`llm_messages` are valid for the
    #: provider.
    compat: str | None = None

    def _safe(self) -> bool:
        return False if self.compat is not None else _compat.resolve_safe(None)

    #: This turn's key (random, one per prepared request): :meth:`ContextPipeline.record_turn`
    #: stores it on the turn's first entry, so recording the same request again writes nothing.
    turn_key: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: The session's leaf when the request was prepared: the turn is appended after it, so the
    #: search for an already recorded turn stops there.
    session_leaf_id: str | None = None
    #: The request's tool definitions in pi's shape (``None``: none given), sent by
    #: :meth:`request_payload`.
    tools: tuple[dict[str, Any], ...] | None = None

    def request_payload(
        self,
        options: Mapping[str, Any] | None = None,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        model: Any = None,
    ) -> dict[str, Any]:
        """The provider request body for the model call, as pi-ai builds it (pi's agent loop
        calls ``streamSimple``): system prompt, :meth:`llm_messages` and the tools for the
        pipeline's model (or ``model``, a pi-ai ``Model`` mapping with ``baseUrl``,
        ``maxTokens``, ... when the ``ModelSpec`` lacks them). ``options`` are pi-ai's
        ``SimpleStreamOptions``; ``reasoning`` defaults to the request's think level. ``tools``
        (any shape :func:`~clawctx.wire.normalize_tools` reads) replaces the request's
        :attr:`tools`; they are converted per API as pi-ai does. Without tools the body has
        none, except ``tools: []`` on openai-completions when the history holds tool calls
        (pi-ai's ``hasToolHistory``; see :mod:`clawctx.wire.tools` for what each API accepts).
        Ready for the SDK: ``client.messages.create(**prepared.request_payload())``.

        Provider-side context management (``contextManagement``, ``promptCacheKey``) is taken
        as :func:`~clawctx.wire.build_request_payload` takes it; ``promptCacheKey=True`` uses
        the session id. When ``contextManagement`` adds edits, the body needs the
        ``anthropic-beta`` header: use :meth:`build_payload` for the body and its
        ``headers``."""
        return self.build_payload(options, tools=tools, model=model).to_dict()

    def build_payload(
        self,
        options: Mapping[str, Any] | None = None,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        model: Any = None,
    ) -> RequestPayload:
        """:meth:`request_payload` as the :class:`~clawctx.wire.RequestPayload` object: the
        body (``to_dict()``, ``to_json()``) and the HTTP ``headers`` it needs, e.g.
        ``client.beta.messages.create(**p.to_dict(), extra_headers=p.headers)``.
        ``options["promptCacheKey"] = True`` sends the session id as ``prompt_cache_key``
        (OpenAI Responses); raises ``ValueError`` when the request has no session id."""
        target = model if model is not None else self.model
        if target is None:
            raise ValueError("this PreparedRequest has no model: pass model=")
        simple = dict(options or {})
        if self.think_level not in (None, "off"):
            simple.setdefault("reasoning", self.think_level)
        if simple.get("promptCacheKey") is True:
            if not self.session_id:
                raise ValueError("promptCacheKey=True needs a session id; this request has none")
            simple["promptCacheKey"] = self.session_id
        context = {
            "system_prompt": self.system_prompt,
            "messages": self.llm_messages(),
            "tools": normalize_tools(tools)
            if tools is not None
            else (None if self.tools is None else list(self.tools)),
        }
        return build_request_payload(target, context, simple, simple=True, safe=self._safe())

    def llm_messages(self) -> _core.Transcript:
        """History plus the prompt message, converted for the model (pi's ``convertToLlm``,
        `packages/coding-agent/src/core/messages.ts`); by default (no :attr:`compat`) passed
        through the request guard, so they are valid for the pipeline's model."""
        converted = _core.convert_to_llm(self.messages + [self.prompt_message])
        if not self._safe() or self.model is None:
            return converted
        guarded, _changes = _core.guard_request(
            converted,
            provider=self.model.provider,
            model_api=self.model.api,
            model_id=self.model.id,
            now_ms=self.prompt_message.get("timestamp"),
        )
        return guarded

    def report(self) -> list[dict[str, str]]:
        """The changes as plain dicts (``stage``, ``detail``)."""
        return [{"stage": c.stage, "detail": c.detail} for c in self.changes]

    def to_dict(self, *, include_messages: bool = True) -> dict[str, Any]:
        """A JSON-ready summary: system prompt, prompt, think level, estimate, report and
        (unless ``include_messages`` is false) the final messages."""
        out: dict[str, Any] = {
            "should_run": self.should_run,
            "reply_text": self.reply_text,
            "system_prompt": self.system_prompt,
            "prompt": self.prompt,
            "think_level": self.think_level,
            "estimated_tokens": self.estimated_tokens,
            "pre_prompt_message_count": self.pre_prompt_message_count,
            "images": [
                {"mimeType": i.mime_type, "bytes": len(i.data) * 3 // 4} for i in self.images
            ],
            "persist_prompt": self.persist_prompt,
            "session_id": self.session_id,
            "report": self.report(),
        }
        if include_messages:
            out["messages"] = self.messages.to_list() + [self.prompt_message]
        return out


@dataclass
class _Run:
    """Mutable state of one :meth:`ContextPipeline.aprepare` call."""

    request: PromptRequest
    #: The request's inbound context, converted once.
    inbound: InboundContext
    changes: list[PipelineChange] = field(default_factory=list)
    bootstrap_warning: BootstrapPromptWarning | None = None

    def note(self, stage: str, detail: str) -> None:
        self.changes.append(PipelineChange(stage, detail))


class ContextPipeline:
    """Assembles the exact context of each model request for one agent (see module doc).

    One pipeline serves many requests and sessions. Sessions are passed per call, as a path
    (repaired if needed, then opened) or as an open :class:`~clawctx.Session` (refreshed: only
    bytes appended since its last load are read — the cheap choice for a long-lived runtime).
    ``layout`` orders the system prompt's sections; ``None`` (the default) is
    :data:`~clawctx.prompt.OPENCLAW_LAYOUT`.

    **Bootstrap truncation warning.** When the pipeline loads the workspace bootstrap files
    (``load_workspace_files`` and no ``context_files`` in ``system_prompt``) and some were cut to
    ``bootstrap_max_chars`` / ``bootstrap_total_max_chars``, the system prompt lists them under
    ``⚠ Bootstrap truncation warning:`` as OpenClaw 2026.3.13's embedded runner does
    (`src/agents/bootstrap-budget.ts`, ``buildBootstrapPromptWarning``, called from
    `src/agents/pi-embedded-runner/run/attempt.ts`), unless ``system_prompt`` already holds
    warning lines. ``bootstrap_prompt_truncation_warning`` is the mode: ``"off"``, ``"once"``
    (show a given truncation situation once per session) or ``"always"``; ``None`` reads
    ``agents.defaults.bootstrapPromptTruncationWarning`` from ``config`` (default ``"once"``).

    Upstream remembers the seen signatures per session in the session store entry (the
    ``systemPromptReport`` saved after each run), not in the transcript. clawctx likewise keeps
    them out of the session file: the pipeline object remembers them per session (keyed by the
    request's ``session_key``, else the session id, else the session file; the last 32), updated
    when a request's system prompt is built. They last as long as the pipeline; a runtime that
    persists session state across restarts stores ``PreparedRequest.bootstrap_prompt_warning.
    warning_signatures_seen`` and passes them back as ``PromptRequest.
    bootstrap_warning_signatures_seen``, as upstream's runners do.
    """

    def __init__(
        self,
        *,
        model: ModelSpec,
        workspace_dir: str | os.PathLike[str],
        system_prompt: SystemPromptParams | None = None,
        layout: SystemPromptLayout | None = None,
        prompt_mode: PromptMode | None = None,
        load_workspace_files: bool = True,
        bootstrap_max_chars: int = 20_000,
        bootstrap_total_max_chars: int | None = None,
        hooks: HookRunner | None = None,
        context_engine: ContextEngine | None = None,
        system_events: SystemEventQueue | None = None,
        config: Mapping[str, Any] | None = None,
        history_limit: int | None = None,
        sandbox_root: str | os.PathLike[str] | None = None,
        envelope_timezone: str | None = None,
        user_timezone: str | None = None,
        repair: bool = True,
        read_only: bool = False,
        errored_assistant_result_policy: str | None = None,
        image_max_dimension_px: int = 1200,
        agent_id: str | None = None,
        now_ms: Callable[[], int] | None = None,
        bootstrap_prompt_truncation_warning: BootstrapPromptWarningMode | None = None,
        compat: str | None = None,
        tools: Sequence[Any] | None = None,
    ) -> None:
        #: The upstream release this pipeline reproduces exactly (:func:`clawctx.compat`);
        #: ``None`` follows the caller's context (the safe default unless a compat block is in
        #: force).
        self.compat = _compat.check_release(compat)
        self.model = model
        #: Tool definitions sent with every request (pi's shape; any shape
        #: :func:`~clawctx.wire.normalize_tools` reads is accepted), unless a
        #: :class:`PromptRequest` brings its own.
        self.tools: tuple[dict[str, Any], ...] | None = _tools_tuple(tools)
        self.workspace_dir = os.fspath(workspace_dir)
        self.system_prompt_params = system_prompt or SystemPromptParams(
            workspace_dir=self.workspace_dir
        )
        # None stands for OPENCLAW_LAYOUT so that help() shows a short signature, not the
        # repr of 26 section renderers.
        self.layout = OPENCLAW_LAYOUT if layout is None else layout
        self.prompt_mode = prompt_mode
        self.load_workspace_files = load_workspace_files
        self.bootstrap_max_chars = bootstrap_max_chars
        self.bootstrap_total_max_chars = bootstrap_total_max_chars
        self.hooks = hooks or HookRunner()
        self.context_engine: ContextEngine = context_engine or LegacyContextEngine()
        self.system_events = system_events
        self.config = config
        self.history_limit = history_limit
        self.sandbox_root = None if sandbox_root is None else os.fspath(sandbox_root)
        self.envelope_timezone = envelope_timezone
        self.user_timezone = user_timezone
        self.repair = repair
        self.read_only = read_only
        self.errored_assistant_result_policy = errored_assistant_result_policy
        self.image_max_dimension_px = image_max_dimension_px
        self.agent_id = agent_id
        self._now_ms = now_ms or (lambda: int(time.time() * 1000))
        # Sessions whose engine state was bootstrapped by this pipeline (run/attempt.ts).
        self._bootstrapped: set[str] = set()
        if bootstrap_prompt_truncation_warning is None:
            bootstrap_prompt_truncation_warning = resolve_bootstrap_prompt_truncation_warning_mode(
                config
            )
        elif bootstrap_prompt_truncation_warning not in ("off", "once", "always"):
            raise ValueError(
                "bootstrap_prompt_truncation_warning must be 'off', 'once' or 'always', got "
                f"{bootstrap_prompt_truncation_warning!r}"
            )
        self.bootstrap_prompt_truncation_warning: BootstrapPromptWarningMode = (
            bootstrap_prompt_truncation_warning
        )
        # Bootstrap truncation signatures seen per session (see the class docstring).
        self._bootstrap_warning_seen: dict[str, tuple[str, ...]] = {}
        # What each session's last request sent, to name what breaks the prompt cache.
        self._cache_prefix = CachePrefixTracker()

    # ---- entry points -----------------------------------------------------------------

    def prepare(
        self, session: _core.Session | str | os.PathLike[str], request: PromptRequest
    ) -> PreparedRequest:
        """Synchronous :meth:`aprepare` (hooks and the context engine may still be async).
        Call it from code without a running event loop; inside one, await :meth:`aprepare`."""
        return _run_sync(self.aprepare(session, request), "aprepare")

    def record_turn(
        self,
        session: _core.Session,
        prepared: PreparedRequest,
        new_messages: Sequence[Any],
        *,
        turn_key: str | None = None,
    ) -> list[str]:
        """Synchronous :meth:`arecord_turn`."""
        return _run_sync(
            self.arecord_turn(session, prepared, new_messages, turn_key=turn_key), "arecord_turn"
        )

    async def aprepare(
        self, session: _core.Session | str | os.PathLike[str], request: PromptRequest
    ) -> PreparedRequest:
        """Runs the pipeline for one request (module doc, steps 1-10) and returns the model
        call's inputs with a report. A path is repaired (backup kept) and opened; an open
        session is refreshed. The session file is written only by the orphaned-user repair
        (a leaf move) and the model snapshot (google.ts, ``appendModelSnapshot``).

        Safe by default: unless the pipeline (``compat=``) or the caller
        (:func:`clawctx.compat`) asks for the recorded release, the history is checked by the
        request guard after every stage that can change it and repaired where the provider
        would reject it (``changes`` names each repair: stage ``request_guard``); a context
        estimated over the model's window is flagged there too (stage ``budget``)."""
        scope = _compat.compat(self.compat) if self.compat is not None else contextlib.nullcontext()
        with scope:
            return await self._aprepare(session, request)

    async def _aprepare(
        self, session: _core.Session | str | os.PathLike[str], request: PromptRequest
    ) -> PreparedRequest:
        run = _Run(request, request.inbound_context())
        safe = _compat.resolve_safe(None)
        body = self._build_prompt_body(run)
        if body.drained_events:
            run.note("system_events", f"{len(body.drained_events)} event(s) drained")
        if not body.should_run:
            run.note("prompt_body", "nothing to send; replying without a model call")
            return self._not_run(run, body, request)

        opened = await _off_loop(self._load_session, session, run)
        await self._bootstrap_engine(opened, request, run)
        session_writes: list[Callable[[], None]] = []
        history = await _off_loop(self._prepare_history, opened, run, session_writes)

        prompt_text, prompt_message, provenance = self._live_prompt(body, request)
        live_events = tuple(request.internal_events) or None
        history_provenance = self._history_provenance(history)
        pre_assemble = history
        history, addition = await self._assemble(
            opened,
            request,
            history,
            prompt_text,
            prompt_message,
            provenance,
            history_provenance,
            live_events,
            run,
        )
        if history is not pre_assemble:  # the engine chose other messages
            history_provenance = self._history_provenance(history)

        system_prompt = self._build_system_prompt(opened, request, body, run)
        system_prompt = apply_system_prompt_modifiers(
            system_prompt, context_engine_addition=addition
        )

        hook_result = await self._run_hooks(opened, request, prompt_text, history, run)
        prompt_text, system_prompt = apply_prompt_build_hook_result(
            prompt_text, system_prompt, hook_result
        )

        history = self._detach_orphaned_user(opened, history, request, run)
        # The model snapshot / Google bootstrap entries of ``sanitizeSessionHistory`` are written
        # after the orphan check: written before it, they would become the leaf and hide the orphan
        # (upstream then sends two consecutive user turns).
        for write in session_writes:
            write()

        images, history = await _off_loop(self._prompt_images, prompt_text, history, request, run)
        prompt_message = self._final_prompt_message(prompt_message, prompt_text, images)
        if safe:
            # The engine, the orphan check and the images may have changed the history.
            history = self._guard(history, run)

        persist = not should_suppress_prompt_persistence(
            input_provenance=provenance, internal_events=list(request.internal_events)
        )
        if not persist:
            run.note(
                "persistence",
                "prompt not written to the transcript (a sub-agent completion announcement)",
            )
        estimate = _core.estimate_messages_tokens(history + [prompt_message])
        estimate += math.ceil(len(system_prompt) / 4)
        window = self.model.context_window
        if window is not None and estimate > window:
            run.note(
                "budget",
                f"estimated {estimate:,} tokens exceed the model's {window:,}-token context "
                "window: the provider will reject the request; compact or prune the session",
            )
        tools = self.tools if request.tools is None else _tools_tuple(request.tools)
        for detail in self._cache_prefix.check(
            request.session_key
            or opened.session_id
            or (None if opened.path is None else str(opened.path)),
            opened,
            system_prompt=system_prompt,
            tools=tools,
            history=history,
            prompt_message=prompt_message,
            stages=[change.stage for change in run.changes],
        ):
            run.note("cache", detail)
        return PreparedRequest(
            should_run=True,
            reply_text=None,
            system_prompt=system_prompt,
            messages=history,
            prompt=prompt_text,
            prompt_message=prompt_message,
            images=images,
            think_level=body.think_level,
            estimated_tokens=estimate,
            pre_prompt_message_count=len(history),
            # The orphan check can only drop the last message; images keep the count.
            input_provenance=(*history_provenance[: len(history)], provenance),
            internal_events=(*([None] * len(history)), live_events),
            persist_prompt=persist,
            prompt_body=body,
            changes=tuple(run.changes),
            session_id=opened.session_id,
            session_file=None if opened.path is None else str(opened.path),
            session_key=request.session_key,
            is_heartbeat=request.is_heartbeat,
            model_override=None if hook_result is None else hook_result.model_override,
            provider_override=None if hook_result is None else hook_result.provider_override,
            bootstrap_prompt_warning=run.bootstrap_warning,
            model=self.model,
            compat=_compat.current_compat(),
            session_leaf_id=opened.leaf_id,
            tools=tools,
        )

    async def arecord_turn(
        self,
        session: _core.Session,
        prepared: PreparedRequest,
        new_messages: Sequence[Any],
        *,
        turn_key: str | None = None,
    ) -> list[str]:
        """Persists the turn after the model call, whole and once: the prompt message (unless
        ``prepared.persist_prompt`` is false) and ``new_messages`` (assistant replies, tool
        results, as pi messages), then calls the engine's ``after_turn`` — or ``ingest_batch``
        / ``ingest`` of the new tail — with ``prePromptMessageCount`` (as ``runEmbeddedAttempt``
        does). Engine failures are logged, never raised. Returns the ids of the turn's entries.

        *Replies*: a provider reply among ``new_messages`` (an SDK ``Message`` /
        ``ChatCompletion`` / ``Response`` / google-genai response, an SDK stream or async
        stream, SSE text or bytes, a reply body) is read into pi's assistant message with
        ``clawctx.parse_response`` and the pipeline's model, as pi-ai 0.58.3 builds it.

        *Whole*: every message is checked as a pi message (:class:`~clawctx.engine.turn.
        TurnMessageError` otherwise) and converted (``nan``, ``inf`` and objects JSON
        cannot hold raise) before anything is written; then all of them go out in one locked
        write (``Session.append_messages``): a failed write leaves the file as it was, and a
        write cut short by a crash is dropped by the next open.

        *Once*: the turn is keyed — ``turn_key``, else ``prepared.turn_key`` (random per
        prepared request) — and the key is stored on its first entry. Recording a turn whose
        key is already on the session's branch writes nothing, skips the engine (it saw the
        turn) and returns the ids written the first time, as later OpenClaw's ``commitTurn``
        answers ``duplicate``. A key of the prepared request is searched back to the leaf the
        request was prepared on; an explicit ``turn_key`` (one that must survive a restart, with
        a new :class:`PreparedRequest`) is searched back through the whole branch (a lazy
        session is then read in full when the branch reaches past the part it holds)."""
        # Checked with the prompt in front, so that "message i of the turn" in an error counts
        # the messages as they are written.
        prompt = [prepared.prompt_message] if prepared.persist_prompt else []
        model = prepared.model if prepared.model is not None else self.model
        new_messages = await read_turn_replies(new_messages, model)
        to_append = check_turn_messages([*prompt, *new_messages])
        key = prepared.turn_key if turn_key is None else turn_key
        since = prepared.session_leaf_id if turn_key is None else None

        def write() -> tuple[list[str], bool]:
            found = session.find_turn(key, since=since)
            if found is not None:
                return found, True
            return session.append_messages(to_append, turn_key=key, since=since), False

        ids, duplicate = await _off_loop(write)
        if duplicate:
            return ids
        snapshot = prepared.messages + [prepared.prompt_message, *new_messages]
        await record_turn_with_engine(
            self.context_engine,
            session_id=session.session_id or "",
            session_key=prepared.session_key,
            session_file=prepared.session_file or "",
            messages=snapshot,
            pre_prompt_message_count=prepared.pre_prompt_message_count,
            is_heartbeat=prepared.is_heartbeat,
            token_budget=self.model.context_window,
        )
        return ids

    async def llm_context(
        self,
        messages: _core.Transcript | Sequence[Mapping[str, Any]],
        *,
        session_key: str | None = None,
    ) -> _core.Transcript:
        """The per-LLM-call step (pi-mono ``agentLoop``, `packages/agent/src/agent-loop.ts`): runs
        the ``context`` hooks (context pruning and other extensions, before every model call of a
        tool loop) and converts the result for the model. Call it before each model call with the
        current messages."""
        current: _core.Transcript | Sequence[Mapping[str, Any]] = messages
        if self.hooks.has("context"):
            current = await self.hooks.run_context(
                messages, HookContext(agent_id=self.agent_id, session_key=session_key)
            )
        return _core.convert_to_llm(current)

    # ---- stages -----------------------------------------------------------------------

    def _build_prompt_body(self, run: _Run) -> PromptBody:
        request = run.request
        return build_prompt_body(
            run.inbound,
            is_new_session=request.is_new_session,
            aborted_last_run=request.aborted_last_run,
            session_key=request.session_key,
            is_main_session=request.is_main_session,
            system_events=self.system_events if request.session_key else None,
            envelope_timezone=self.envelope_timezone,
            user_timezone=self.user_timezone,
            resolved_think_level=request.resolved_think_level,
            supports_xhigh=self.model.supports_xhigh,
        )

    def _load_session(
        self, session: _core.Session | str | os.PathLike[str], run: _Run
    ) -> _core.Session:
        if isinstance(session, _core.Session):
            if session.path is not None:
                report = session.refresh()
                run.note("refresh", f"{report.mode}: {report.appended_entries} new entries")
            if session.needs_migration and not self.read_only:
                session.save_migrated()
                run.note("open", f"session file rewritten as version {session.version}")
            return session
        path = Path(session)
        if self.repair and not self.read_only and path.exists():
            repaired = _core.repair_session_file(path)
            if repaired.repaired:
                run.note("repair", repaired.summary())
        # Like pi's SessionManager.open (session-manager.ts), a writable pipeline rewrites an
        # old-version file in the current format (atomically, with a backup): appends need it.
        # Opened lazily: a request needs the leaf's messages, not the whole history, so the
        # file is read from its end (a file that needs migration is opened in full).
        opened = Session.open(
            path,
            read_only=self.read_only,
            rewrite_migrated=not self.read_only,
            now_ms=self._now_ms,
            lazy=True,
        )
        if opened.file_version != opened.version:
            run.note("open", f"session migrated from version {opened.file_version}")
        if opened.is_lazy:
            # Damaged lines before the part read are not looked at (they cannot be on the
            # leaf's path); reading skipped_lines would load the whole file.
            run.note("open", f"read {opened.lazy_bytes_read} bytes from the end of the file")
            return opened
        for skipped in opened.skipped_lines:
            run.note("open", f"line {skipped.line}: {skipped.action} ({skipped.reason})")
        return opened

    async def _bootstrap_engine(
        self, session: _core.Session, request: PromptRequest, run: _Run
    ) -> None:
        """As ``runEmbeddedAttempt`` does: once per session file and pipeline, an engine with
        ``bootstrap`` may import the existing history before its first ``assemble``."""
        if session.path is None or not session.has_entries():
            return
        key = str(session.path)
        if key in self._bootstrapped:
            return
        self._bootstrapped.add(key)
        result = await bootstrap_with_engine(
            self.context_engine,
            session_id=session.session_id or "",
            session_key=request.session_key,
            session_file=key,
        )
        if result is not None:
            imported = (
                ""
                if result.imported_messages is None
                else f", {result.imported_messages} messages imported"
            )
            run.note("context_engine", f"bootstrap: {result.bootstrapped}{imported}")

    def _prepare_history(
        self, session: _core.Session, run: _Run, session_writes: list[Callable[[], None]]
    ) -> _core.Transcript:
        # The messages only: on a lazy session the thinking level could mean reading all of it.
        context = session.context_messages()
        run.note("context", f"{len(context)} messages on the branch of leaf {session.leaf_id}")
        history = self._history_passes(context, session, run, session_writes, provider_safe=False)
        if not _compat.resolve_safe(None) or not self._issues(history):
            return history
        # The recorded release leaves this history invalid: the passes again with clawctx's
        # safety passes (per-occurrence pairing, as later OpenClaw releases), then the guard.
        redo = _Run(run.request, run.inbound)
        history = self._history_passes(context, session, redo, [], provider_safe=True)
        run.note("request_guard", "history passes run again with provider_safe")
        return self._guard(history, run)

    def _issues(self, history: _core.Transcript) -> list[_core.Violation]:
        model = self.model
        return _core.request_issues(
            history,
            provider=model.provider,
            model_api=model.api,
            model_id=model.id,
            followed_by_user=True,
        )

    def _guard(self, history: _core.Transcript, run: _Run) -> _core.Transcript:
        """The request guard over the history (the prompt follows it), each repair noted."""
        model = self.model
        guarded, changes = _core.guard_request(
            history,
            provider=model.provider,
            model_api=model.api,
            model_id=model.id,
            followed_by_user=True,
            now_ms=self._now_ms,
        )
        for kind, count in changes:
            run.note("request_guard", f"{kind.replace('_', ' ')}: {count}")
        return guarded

    def _history_passes(
        self,
        context: _core.Transcript,
        session: _core.Session,
        run: _Run,
        session_writes: list[Callable[[], None]],
        *,
        provider_safe: bool,
    ) -> _core.Transcript:
        """Steps 4 of the module doc, as the recorded release runs them (``provider_safe``
        adds clawctx's safety passes)."""
        model = self.model
        policy = _core.resolve_transcript_policy(
            provider=model.provider, model_api=model.api, model_id=model.id
        )
        history = sanitize_session_history(
            context,
            policy=policy,
            provider=model.provider,
            model_api=model.api,
            model_id=model.id,
            session=None if session.path is None or self.read_only or provider_safe else session,
            now_ms=self._now_ms,
            image_max_dimension_px=self.image_max_dimension_px,
            errored_assistant_result_policy=self.errored_assistant_result_policy,
            validate_turns=False,
            pending_writes=session_writes,
            provider_safe=provider_safe,
            safe=False,
        )
        _note_transcript_change(run, "sanitize", context, history)
        validated = history
        if policy.validate_gemini_turns:
            validated = _core.validate_gemini_turns(validated)
        if policy.validate_anthropic_turns:
            validated = _core.validate_anthropic_turns(validated)
        _note_transcript_change(run, "validate_turns", history, validated)
        limit = self.history_limit
        if limit is None:
            limit = _core.history_limit_for_session_key(run.request.session_key, self.config)
        limited = _core.limit_history_turns(validated, limit)
        _note_transcript_change(run, "limit_history", validated, limited)
        if not policy.repair_tool_use_result_pairing:
            return limited
        pairing = _core.repair_tool_pairing(limited, now_ms=self._now_ms)
        if len(pairing.added) or pairing.dropped_orphan_count or pairing.dropped_duplicate_count:
            run.note(
                "repair_pairing",
                f"{len(pairing.added)} synthetic result(s) added, "
                f"{pairing.dropped_orphan_count} orphan(s) and "
                f"{pairing.dropped_duplicate_count} duplicate(s) dropped",
            )
        return pairing.messages

    def _live_prompt(
        self, body: PromptBody, request: PromptRequest
    ) -> tuple[str, dict[str, Any], InputProvenance | None]:
        """The prompt text and user message of this turn: internal events rendered in front
        of the body (internal-events.ts, ``formatAgentInternalEventsForPrompt``), the inter-session
        marker (later OpenClaw ``annotateInterSessionPromptText``, not in 2026.3.13) and the
        message's ``provenance`` field (input-provenance.ts,
        ``applyInputProvenanceToUserMessage``)."""
        provenance = normalize_input_provenance(request.input_provenance)
        text = body.prefixed_command_body
        events_block = format_agent_internal_events_for_prompt(list(request.internal_events))
        if events_block:
            text = f"{events_block}\n\n{text}" if text else events_block
        if provenance is not None:
            text = annotate_inter_session_prompt_text(text, provenance)
        message: dict[str, Any] = {"role": "user", "content": text, "timestamp": self._now_ms()}
        if provenance is not None:
            message = apply_input_provenance_to_user_message(message, provenance)
        return text, message, provenance

    def _history_provenance(self, history: _core.Transcript) -> list[InputProvenance | None]:
        """Stored ``provenance`` of each history message (RFC, proposed, not upstream), read from
        the messages themselves — never guessed from their text; ``None`` means no signal."""
        stored = history.top_level_values("provenance")
        aligned: list[InputProvenance | None] = [None] * len(history)
        for index, value in stored.items():
            if isinstance(value, Mapping):
                aligned[index] = normalize_input_provenance(value)
        return aligned

    async def _assemble(
        self,
        session: _core.Session,
        request: PromptRequest,
        history: _core.Transcript,
        prompt_text: str,
        prompt_message: dict[str, Any],
        provenance: InputProvenance | None,
        history_provenance: list[InputProvenance | None],
        live_events: tuple[AgentTaskCompletionEvent, ...] | None,
        run: _Run,
    ) -> tuple[_core.Transcript, str | None]:
        """``assemble`` as ``runEmbeddedAttempt`` calls it, with the RFC's proposed params (not
        upstream): the engine sees the history followed by
        this turn's message; ``pre_prompt_message_count`` marks the boundary. The message it
        returns last, when it is this turn's message, becomes the prompt again; everything
        before it is the history the model sees."""
        messages = history + [prompt_message]
        assembled, result, warning = await assemble_with_engine(
            self.context_engine,
            session_id=session.session_id or "",
            session_key=request.session_key,
            messages=messages,
            token_budget=self.model.context_window,
            model=self.model.id,
            prompt=prompt_text,
            pre_prompt_message_count=len(history),
            input_provenance=[*history_provenance, provenance],
            internal_events=[*([None] * len(history)), live_events],
        )
        if warning is not None:
            run.note("context_engine", warning)
        if result is None or assembled is messages:
            return history, None
        engine_id = self.context_engine.info.id
        out = assembled if isinstance(assembled, _core.Transcript) else _core.Transcript(assembled)
        if len(out) and out[-1] == prompt_message:
            out = out[:-1]
        run.note(
            "context_engine",
            f"{engine_id}: {len(history)} → {len(out)} history messages, "
            f"estimated {result.estimated_tokens} tokens",
        )
        return out, result.system_prompt_addition

    def _build_system_prompt(
        self, session: _core.Session, request: PromptRequest, body: PromptBody, run: _Run
    ) -> str:
        params = self.system_prompt_params
        mode = self.prompt_mode or resolve_prompt_mode(request.session_key)
        extra = build_extra_system_prompt(body.extra_system_prompt, params.extra_system_prompt)
        changes: dict[str, Any] = {"prompt_mode": mode, "extra_system_prompt": extra or None}
        tools = self.tools if request.tools is None else _tools_tuple(request.tools)
        if tools and not params.tool_names:
            # As run/attempt.ts builds the prompt from the session's tools: their names, and
            # summaries from their descriptions (`src/agents/tool-summaries.ts`,
            # ``buildToolSummaryMap``: trimmed, keyed by the lower-case name).
            changes["tool_names"] = tuple(t["name"] for t in tools)
            summaries = {t["name"].lower(): t["description"].strip() for t in tools}
            changes["tool_summaries"] = {
                **{k: v for k, v in summaries.items() if v},
                **params.tool_summaries,
            }
        if params.runtime_info is None:
            changes["runtime_info"] = RuntimeInfo(
                agent_id=self.agent_id,
                host=socket.gethostname(),
                os=platform.system(),
                arch=platform.machine(),
                model=self.model.ref,
                channel=_channel_of(run.inbound),
            )
        if not params.context_files and self.load_workspace_files:
            files, warning = self._workspace_context_files(session, request, run)
            changes["context_files"] = files
            if not params.bootstrap_truncation_warning_lines:
                changes["bootstrap_truncation_warning_lines"] = warning.lines
        if not params.skills_prompt and self.load_workspace_files:
            skills = load_workspace_skills(self.workspace_dir)
            if skills:
                changes["skills_prompt"] = format_skills_for_prompt(skills)
        return build_system_prompt(dataclasses.replace(params, **changes), layout=self.layout)

    def _workspace_context_files(
        self, session: _core.Session, request: PromptRequest, run: _Run
    ) -> tuple[tuple[ContextFile, ...], BootstrapPromptWarning]:
        """The Project Context files and the bootstrap truncation warning (run/attempt.ts:
        ``resolveBootstrapContextForRun``, ``analyzeBootstrapBudget``,
        ``buildBootstrapPromptWarning``), updating the session's seen signatures."""
        subagent = resolve_prompt_mode(request.session_key) == "minimal"
        files = load_workspace_bootstrap_files(self.workspace_dir, subagent=subagent)
        built = build_bootstrap_context_files(
            files,
            max_chars=self.bootstrap_max_chars,
            total_max_chars=self.bootstrap_total_max_chars,
            warn=lambda message: run.note("workspace_files", message),
        )
        # The analysis uses the budgets the files were cut to.
        total_max = self.bootstrap_total_max_chars
        if total_max is None:
            total_max = max(self.bootstrap_max_chars, DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS)
        analysis = analyze_bootstrap_budget(
            build_bootstrap_injection_stats(files, built),
            bootstrap_max_chars=self.bootstrap_max_chars,
            bootstrap_total_max_chars=total_max,
        )
        key = (
            request.session_key
            or session.session_id
            or (None if session.path is None else str(session.path))
        )
        seen = request.bootstrap_warning_signatures_seen
        if seen is None:
            seen = self._bootstrap_warning_seen.get(key, ()) if key else ()
        warning = build_bootstrap_prompt_warning(
            analysis,
            self.bootstrap_prompt_truncation_warning,
            seen_signatures=seen,
        )
        if key:
            self._bootstrap_warning_seen[key] = warning.warning_signatures_seen
        if warning.warning_shown:
            run.note(
                "workspace_files",
                f"bootstrap truncation warning: {len(analysis.truncated_files)} truncated file(s)",
            )
        run.bootstrap_warning = warning
        return tuple(built), warning

    async def _run_hooks(
        self,
        session: _core.Session,
        request: PromptRequest,
        prompt_text: str,
        history: _core.Transcript,
        run: _Run,
    ) -> PromptBuildHookResult | None:
        if not (self.hooks.has("before_prompt_build") or self.hooks.has("before_agent_start")):
            return None
        event = PromptBuildEvent(prompt=prompt_text, messages=history)
        ctx = HookContext(
            agent_id=self.agent_id,
            session_key=request.session_key,
            session_id=session.session_id,
            workspace_dir=self.workspace_dir,
            message_provider=_channel_of(run.inbound),
            trigger="heartbeat" if request.is_heartbeat else "user",
            run_id=request.run_id,
        )
        result = await resolve_prompt_build_hook_result(self.hooks, event, ctx)
        applied = [
            name
            for name, value in (
                ("systemPrompt", result.system_prompt),
                ("prependContext", result.prepend_context),
                ("prependSystemContext", result.prepend_system_context),
                ("appendSystemContext", result.append_system_context),
            )
            if value
        ]
        if applied:
            run.note("hooks", "applied " + ", ".join(applied))
        return result

    def _detach_orphaned_user(
        self,
        session: _core.Session,
        history: _core.Transcript,
        request: PromptRequest,
        run: _Run,
    ) -> _core.Transcript:
        """The orphaned-trailing-user repair of ``runEmbeddedAttempt``. Upstream then rebuilds the
        messages from the raw context, skipping the hygiene stages for this run (an upstream quirk);
        clawctx instead removes the orphan from the already prepared messages, so the model still
        gets a sanitized history."""
        report = detach_orphaned_trailing_user(session, run_id=request.run_id)
        if not report.detached:
            return history
        run.note("orphaned_user", report.warning or "orphaned trailing user message detached")
        roles = history.roles()
        if roles and roles[-1] == "user":
            return history[:-1]
        return history

    def _prompt_images(
        self, prompt_text: str, history: _core.Transcript, request: PromptRequest, run: _Run
    ) -> tuple[tuple[ImageContent, ...], _core.Transcript]:
        if not model_supports_images(list(self.model.input)):
            if request.images:
                run.note(
                    "images", f"{len(request.images)} image(s) dropped: model has no image input"
                )
            return (), history
        # Only user messages are scanned for image references (as run/images.ts does); the others
        # never become Python objects.
        user_indices = [i for i, role in enumerate(history.roles()) if role == "user"]
        user_messages = [history[i] for i in user_indices]
        result = detect_and_load_prompt_images(
            prompt=prompt_text,
            workspace_dir=self.workspace_dir,
            model_input=list(self.model.input),
            existing_images=tuple(request.images),
            history_messages=user_messages,
            sandbox_root=self.sandbox_root,
            max_dimension_px=self.image_max_dimension_px,
        )
        if result.detected_refs or result.skipped_count:
            run.note(
                "images",
                f"{len(result.detected_refs)} reference(s) detected, {result.loaded_count} "
                f"loaded, {result.skipped_count} skipped",
            )
        for dropped in result.dropped:
            run.note("images", dropped)
        if result.history_images_by_index:
            injected, changed = inject_history_images_into_messages(
                user_messages, result.history_images_by_index
            )
            if changed:
                replacements = {
                    user_indices[i]: injected[i]
                    for i in result.history_images_by_index
                    if 0 <= i < len(injected)
                }
                history = history.replace_messages(replacements)
                run.note(
                    "images", f"images re-injected into {len(replacements)} history message(s)"
                )
        return result.images, history

    def _final_prompt_message(
        self, message: dict[str, Any], prompt_text: str, images: tuple[ImageContent, ...]
    ) -> dict[str, Any]:
        content: str | list[dict[str, Any]] = prompt_text
        if images:
            content = [{"type": "text", "text": prompt_text}, *(i.to_block() for i in images)]
        return {**message, "content": content}

    def _not_run(self, run: _Run, body: PromptBody, request: PromptRequest) -> PreparedRequest:
        empty = _core.Transcript()
        return PreparedRequest(
            should_run=False,
            reply_text=body.reply_text,
            system_prompt="",
            messages=empty,
            prompt="",
            prompt_message={"role": "user", "content": ""},
            images=(),
            think_level=body.think_level,
            estimated_tokens=0,
            pre_prompt_message_count=0,
            input_provenance=(),
            internal_events=(),
            persist_prompt=False,
            prompt_body=body,
            changes=tuple(run.changes),
            session_id=None,
            session_file=None,
            session_key=request.session_key,
            model=self.model,
        )


def _tools_tuple(tools: Sequence[Any] | None) -> tuple[dict[str, Any], ...] | None:
    normalized = normalize_tools(tools)
    return None if normalized is None else tuple(normalized)


def _channel_of(ctx: InboundContext) -> str | None:
    channel = ctx.originating_channel or ctx.surface or ctx.provider
    return channel.strip().lower() if channel else None


def _note_transcript_change(
    run: _Run, stage: str, before: _core.Transcript, after: _core.Transcript
) -> None:
    if after is before or after == before:
        return
    if len(after) == len(before):
        run.note(stage, f"{len(after)} messages, some rewritten")
    else:
        run.note(stage, f"{len(before)} → {len(after)} messages")


#: Set while a synchronous entry point (``prepare``, ``record_turn``) runs its coroutine: no
#: other task shares that event loop, so the native steps run in place. A hand-off to a
#: worker thread costs more than most warm steps do (about 12 of 24 ms of a warm ``prepare``
#: of a 10 MB session on a loaded 2-core machine, three hand-offs and their threads).
_RUN_IN_PLACE: ContextVar[bool] = ContextVar("clawctx_pipeline_in_place", default=False)


async def _off_loop(function: Callable[..., _T], *args: Any) -> _T:
    """``function(*args)`` on a worker thread, so that an async caller's event loop keeps
    serving its other tasks while native code works with the GIL released; in place under a
    synchronous entry point, whose loop serves nothing else."""
    if _RUN_IN_PLACE.get():
        return function(*args)
    return await asyncio.to_thread(function, *args)


def _run_sync(awaitable: Coroutine[Any, Any, _T], async_name: str) -> _T:
    """Runs ``awaitable`` to completion on this thread's kept loop
    (:func:`clawctx.engine._sync_loop.run_on_thread_loop`), its native steps in place."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        awaitable.close()
        raise RuntimeError(
            f"an event loop is running in this thread; await ContextPipeline.{async_name}() instead"
        )
    token = _RUN_IN_PLACE.set(True)
    try:
        return run_on_thread_loop(awaitable)
    finally:
        _RUN_IN_PLACE.reset(token)
