"""Plugin hooks around prompt building and every model call (OpenClaw 2026.3.13
`src/plugins/hooks.ts`, ``createHookRunner``; applied in
`src/agents/pi-embedded-runner/run/attempt.ts`).

Plugins register handlers for ``before_prompt_build`` (and the legacy ``before_agent_start``) to
add context to the prompt or change the system prompt, and for ``context`` to rewrite the
message list right before each model call (pruning inside long tool loops). Handlers may be
plain functions or ``async def``; they run one after the other in descending priority, a failing
handler is logged and skipped, and their results are merged by the rules of
``mergeBeforePromptBuild``.

Typical use::

    runner = HookRunner()
    runner.register("before_prompt_build", lambda event, ctx: {"prependContext": "Today: Mon"})
    result = await resolve_prompt_build_hook_result(runner, PromptBuildEvent(prompt, msgs), ctx)
    prompt, system_prompt = apply_prompt_build_hook_result(prompt, system_prompt, result)
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal, TypeVar, get_args

from clawctx._core import Transcript
from clawctx._js import js_trim as _js_trim
from clawctx.engine._sync_loop import run_on_thread_loop
from clawctx.errors import HookError

__all__ = [
    "HOOK_NAMES",
    "ContextHookEvent",
    "HookContext",
    "HookError",
    "HookHandler",
    "HookName",
    "HookRunner",
    "PromptBuildEvent",
    "PromptBuildHookResult",
    "apply_prompt_build_hook_result",
    "resolve_prompt_build_hook_result",
    "resolve_prompt_build_hook_result_sync",
]

HookName = Literal["before_prompt_build", "before_agent_start", "context"]
HOOK_NAMES: Final[tuple[HookName, ...]] = get_args(HookName)

#: A handler: ``(event, ctx)`` → result, ``None``, or an awaitable of either.
HookHandler = Callable[[Any, "HookContext"], Any]

_T = TypeVar("_T")
_Messages = Sequence[Mapping[str, Any]] | Transcript
# What a driver sends back into a hook pipeline: the awaited value, or the exception it raised.
_Step = Generator[Awaitable[Any], Any, _T]

# (dataclass field, upstream camelCase key) of a prompt-build result.
_RESULT_KEYS: Final = (
    ("system_prompt", "systemPrompt"),
    ("prepend_context", "prependContext"),
    ("prepend_system_context", "prependSystemContext"),
    ("append_system_context", "appendSystemContext"),
    ("model_override", "modelOverride"),
    ("provider_override", "providerOverride"),
)
_LOGGER: Final = logging.getLogger("clawctx.hooks")


@dataclass(frozen=True, slots=True)
class PromptBuildEvent:
    """What ``before_prompt_build`` / ``before_agent_start`` handlers see (`src/plugins/types.ts`,
    ``PluginHookBeforePromptBuildEvent``)."""

    #: The prompt body (get-reply-run.ts, runPreparedReply; before hooks prepend anything).
    prompt: str
    #: The session messages after history sanitization and limiting.
    messages: _Messages


@dataclass(frozen=True, slots=True)
class ContextHookEvent:
    """What ``context`` handlers see before each model call: the current messages (a tuple, so
    a handler returns a replacement instead of editing the pipeline's list in place)."""

    messages: Sequence[Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class HookContext:
    """The agent context passed to every handler (upstream ``ctx``, plugins/types.ts)."""

    agent_id: str | None = None
    session_key: str | None = None
    session_id: str | None = None
    workspace_dir: str | None = None
    message_provider: str | None = None
    #: Why the run happened: ``"user"``, ``"heartbeat"``, ``"cron"``, ``"manual"``, …
    trigger: str | None = None
    run_id: str | None = None
    #: Anything else a runtime wants handlers to see.
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PromptBuildHookResult:
    """A prompt-build hook result (plugins/types.ts, ``PluginHookBeforePromptBuildResult``).

    Handlers may return this, a mapping with the upstream camelCase keys (``systemPrompt``,
    ``prependContext``, ``prependSystemContext``, ``appendSystemContext``, ``modelOverride``,
    ``providerOverride``) or the snake_case field names, or ``None``. Unknown keys ([later]
    fields such as ``toolsAllow``) are ignored. The overrides only count for
    ``before_agent_start``.
    """

    system_prompt: str | None = None
    prepend_context: str | None = None
    prepend_system_context: str | None = None
    append_system_context: str | None = None
    model_override: str | None = None
    provider_override: str | None = None

    @classmethod
    def from_value(cls, value: object) -> PromptBuildHookResult | None:
        """Reads a handler's return value; ``TypeError`` for anything but the accepted shapes
        (``None``, this class, a mapping of optional strings)."""
        if value is None or isinstance(value, PromptBuildHookResult):
            return value
        if not isinstance(value, Mapping):
            raise TypeError(
                "a prompt build hook must return a PromptBuildHookResult, a mapping or None, "
                f"not {type(value).__name__}"
            )
        fields: dict[str, str | None] = {}
        for field_name, key in _RESULT_KEYS:
            item = value.get(key)
            if item is None:
                item = value.get(field_name)
            if item is not None and not isinstance(item, str):
                raise TypeError(f"{key} must be a string, not {type(item).__name__}")
            fields[field_name] = item
        return cls(**fields)


@dataclass(frozen=True, slots=True)
class _Registration:
    hook_name: HookName
    handler: HookHandler
    priority: int
    plugin_id: str


def _describe_error(error: BaseException) -> str:
    """An error as JavaScript's ``String(err)`` prints one: ``Name: message``."""
    message = str(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def _concat_segments(left: str | None, right: str | None) -> str | None:
    """``mergeBeforePromptBuild`` text merge: both non-empty → ``left\\n\\nright``; else the
    non-empty one (empties are skipped); ``None`` only when neither side was given."""
    if left and right:
        return f"{left}\n\n{right}"
    if right:
        return right
    if left:
        return left
    return right if right is not None else left


def _join_present(*segments: str | None) -> str | None:
    """Non-empty segments joined by a blank line, ``None`` if there are none
    (``resolvePromptBuildHookResult``)."""
    present = [segment for segment in segments if segment]
    return "\n\n".join(present) if present else None


class HookRunner:
    """Runs registered hook handlers (hooks.ts, ``createHookRunner``).

    Handlers of one hook run sequentially in descending ``priority`` (registration order for
    ties). A handler that raises is logged as ``[hooks] <hookName> handler from <pluginId>
    failed: <error>`` and skipped; with ``catch_errors=False`` a :class:`HookError` with that
    message is raised instead. ``system_prompt_merge="first"`` selects the [later] rule where
    the highest-priority ``systemPrompt`` wins (baseline: the last one wins).

    Each ``run_*`` coroutine has a ``run_*_sync`` twin for code without an event loop: it runs
    sync handlers directly and ``async`` handlers on the thread's kept event loop (as
    ``asyncio.run`` would, without making a loop per call); called from a thread
    whose event loop is running, it raises ``RuntimeError`` as soon as a handler returns an
    awaitable (use the async method there).
    """

    def __init__(
        self,
        *,
        catch_errors: bool = True,
        logger: logging.Logger | None = None,
        system_prompt_merge: Literal["last", "first"] = "last",
    ) -> None:
        self.catch_errors = catch_errors
        self.logger = logger if logger is not None else _LOGGER
        self.system_prompt_merge = system_prompt_merge
        self._hooks: dict[HookName, list[_Registration]] = {name: [] for name in HOOK_NAMES}

    def register(
        self,
        hook_name: HookName,
        handler: HookHandler,
        *,
        priority: int = 0,
        plugin_id: str = "anonymous",
    ) -> None:
        """Adds a handler (sorted by priority, higher first, as ``getHooksForName``).
        ``handler(event, ctx)`` may be sync or ``async``."""
        if hook_name not in self._hooks:
            raise ValueError(f"unknown hook {hook_name!r}; expected one of {', '.join(HOOK_NAMES)}")
        if not callable(handler):
            raise TypeError(f"a hook handler must be callable, not {type(handler).__name__}")
        registrations = self._hooks[hook_name]
        registrations.append(_Registration(hook_name, handler, priority, plugin_id))
        # list.sort is stable: equal priorities keep registration order.
        registrations.sort(key=lambda registration: -registration.priority)

    def has(self, hook_name: HookName) -> bool:
        """Whether any handler is registered for ``hook_name``."""
        return bool(self._hooks.get(hook_name))

    # ---- async API ----------------------------------------------------------------------

    async def run_before_prompt_build(
        self, event: PromptBuildEvent, ctx: HookContext
    ) -> PromptBuildHookResult | None:
        """Runs ``before_prompt_build`` and merges the results (``mergeBeforePromptBuild``);
        ``None`` when no handler returned anything. Model/provider overrides are not part of this
        hook's result."""
        return await _drive_async(self._prompt_build_steps("before_prompt_build", event, ctx))

    async def run_before_agent_start(
        self, event: PromptBuildEvent, ctx: HookContext
    ) -> PromptBuildHookResult | None:
        """Runs the legacy ``before_agent_start`` hook: the prompt fields merge as for
        ``before_prompt_build``, ``modelOverride``/``providerOverride`` keep the first defined
        value (``mergeBeforePromptBuild``)."""
        return await _drive_async(self._prompt_build_steps("before_agent_start", event, ctx))

    async def run_context(self, messages: _Messages, ctx: HookContext) -> list[Mapping[str, Any]]:
        """Runs the per-model-call ``context`` hook: each handler gets the current messages
        and may return replacement messages (a sequence, or a mapping with ``"messages"``) or
        ``None`` to keep them. Returns the final list (a new list even when unchanged)."""
        return await _drive_async(self._context_steps(messages, ctx))

    # ---- sync API -----------------------------------------------------------------------

    def run_before_prompt_build_sync(
        self, event: PromptBuildEvent, ctx: HookContext
    ) -> PromptBuildHookResult | None:
        """Sync twin of :meth:`run_before_prompt_build`."""
        return _drive_sync(
            self._prompt_build_steps("before_prompt_build", event, ctx), "run_before_prompt_build"
        )

    def run_before_agent_start_sync(
        self, event: PromptBuildEvent, ctx: HookContext
    ) -> PromptBuildHookResult | None:
        """Sync twin of :meth:`run_before_agent_start`."""
        return _drive_sync(
            self._prompt_build_steps("before_agent_start", event, ctx), "run_before_agent_start"
        )

    def run_context_sync(self, messages: _Messages, ctx: HookContext) -> list[Mapping[str, Any]]:
        """Sync twin of :meth:`run_context`."""
        return _drive_sync(self._context_steps(messages, ctx), "run_context")

    # ---- pipelines (shared by both APIs) ------------------------------------------------
    # Each pipeline is a generator that yields the awaitables handlers return and receives
    # their values, so one implementation serves the async and the sync driver.

    def _fail(self, registration: _Registration, error: Exception) -> None:
        message = (
            f"[hooks] {registration.hook_name} handler from {registration.plugin_id} failed: "
            f"{_describe_error(error)}"
        )
        if not self.catch_errors:
            raise HookError(message) from error
        self.logger.error(message)

    def _call(self, registration: _Registration, event: object, ctx: HookContext) -> _Step[Any]:
        value = registration.handler(event, ctx)
        if inspect.isawaitable(value):
            value = yield value
        return value

    def _prompt_build_steps(
        self,
        hook_name: Literal["before_prompt_build", "before_agent_start"],
        event: PromptBuildEvent,
        ctx: HookContext,
    ) -> _Step[PromptBuildHookResult | None]:
        with_overrides = hook_name == "before_agent_start"
        merged: PromptBuildHookResult | None = None
        for registration in tuple(self._hooks[hook_name]):
            try:
                value = yield from self._call(registration, event, ctx)
                result = PromptBuildHookResult.from_value(value)
            except Exception as error:
                self._fail(registration, error)
                continue
            if result is None:
                continue
            if not with_overrides:
                result = replace(result, model_override=None, provider_override=None)
            merged = result if merged is None else self._merge(merged, result)
        return merged

    def _merge(
        self, acc: PromptBuildHookResult, nxt: PromptBuildHookResult
    ) -> PromptBuildHookResult:
        """``mergeBeforePromptBuild``: texts concatenate in priority order; ``systemPrompt`` last
        defined wins (baseline) or first defined wins ([later]); overrides keep the first
        defined."""
        if self.system_prompt_merge == "first":
            system_prompt = (
                acc.system_prompt if acc.system_prompt is not None else nxt.system_prompt
            )
        else:
            system_prompt = (
                nxt.system_prompt if nxt.system_prompt is not None else acc.system_prompt
            )
        return PromptBuildHookResult(
            system_prompt=system_prompt,
            prepend_context=_concat_segments(acc.prepend_context, nxt.prepend_context),
            prepend_system_context=_concat_segments(
                acc.prepend_system_context, nxt.prepend_system_context
            ),
            append_system_context=_concat_segments(
                acc.append_system_context, nxt.append_system_context
            ),
            model_override=(
                acc.model_override if acc.model_override is not None else nxt.model_override
            ),
            provider_override=(
                acc.provider_override
                if acc.provider_override is not None
                else nxt.provider_override
            ),
        )

    def _context_steps(
        self, messages: _Messages, ctx: HookContext
    ) -> _Step[list[Mapping[str, Any]]]:
        current: list[Mapping[str, Any]] = list(messages)
        for registration in tuple(self._hooks["context"]):
            try:
                value = yield from self._call(registration, ContextHookEvent(tuple(current)), ctx)
                replacement = _context_replacement(value)
            except Exception as error:
                self._fail(registration, error)
                continue
            if replacement is not None:
                current = replacement
        return current


def _context_replacement(value: object) -> list[Mapping[str, Any]] | None:
    """Reads a ``context`` handler's return value: ``None``, messages, or ``{"messages": …}``."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        if "messages" not in value:
            raise TypeError('a context hook mapping result needs a "messages" key')
        value = value["messages"]
    if isinstance(value, Transcript):
        messages: list[object] = list(value)
    elif isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):
        messages = list(value)
    else:
        raise TypeError(
            f"a context hook must return messages, a mapping or None, not {type(value).__name__}"
        )
    checked: list[Mapping[str, Any]] = []
    for message in messages:
        if not isinstance(message, Mapping):
            raise TypeError(f"context hook messages must be mappings, not {type(message).__name__}")
        checked.append(message)
    return checked


async def _drive_async(steps: _Step[_T]) -> _T:
    """Runs a pipeline, awaiting each awaitable it yields."""
    try:
        pending = next(steps)
        while True:
            try:
                value = await pending
            except Exception as error:
                pending = steps.throw(error)
            else:
                pending = steps.send(value)
    except StopIteration as stop:
        result: _T = stop.value
        return result


async def _await(awaitable: Awaitable[_T]) -> _T:
    return await awaitable


def _drive_sync(steps: _Step[_T], method: str) -> _T:
    """Runs a pipeline without an event loop: each yielded awaitable runs on this thread's kept
    loop (``clawctx.engine._sync_loop``)."""
    try:
        pending = next(steps)
        while True:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                pass
            else:
                if inspect.iscoroutine(pending):
                    pending.close()  # never awaited: close it so no warning is emitted
                steps.close()
                raise RuntimeError(
                    f"an async hook handler cannot run in {method}_sync while this thread's "
                    f"event loop is running; await HookRunner.{method}(...) instead"
                )
            try:
                value = run_on_thread_loop(_await(pending))
            except Exception as error:
                pending = steps.throw(error)
            else:
                pending = steps.send(value)
    except StopIteration as stop:
        result: _T = stop.value
        return result


# ---- combining and applying the results (run/attempt.ts) -----------------------------------


def _combine(
    prompt_build: PromptBuildHookResult | None, legacy: PromptBuildHookResult | None
) -> PromptBuildHookResult:
    """``resolvePromptBuildHookResult``: ``systemPrompt`` = prompt-build's if defined, else
    legacy's; the three text fields are ``[prompt-build, legacy]`` non-empty joined by a blank
    line."""
    pb = prompt_build or PromptBuildHookResult()
    old = legacy or PromptBuildHookResult()
    return PromptBuildHookResult(
        system_prompt=pb.system_prompt if pb.system_prompt is not None else old.system_prompt,
        prepend_context=_join_present(pb.prepend_context, old.prepend_context),
        prepend_system_context=_join_present(pb.prepend_system_context, old.prepend_system_context),
        append_system_context=_join_present(pb.append_system_context, old.append_system_context),
    )


async def resolve_prompt_build_hook_result(
    runner: HookRunner | None,
    event: PromptBuildEvent,
    ctx: HookContext,
    *,
    precomputed_legacy: PromptBuildHookResult | None = None,
    logger: logging.Logger | None = None,
) -> PromptBuildHookResult:
    """The attempt's combined hook result (upstream ``resolvePromptBuildHookResult``).

    Runs ``before_prompt_build`` if registered; uses ``precomputed_legacy`` (the
    ``before_agent_start`` result the caller already got before model resolution) or else runs
    ``before_agent_start`` now. A runner call that raises (e.g. :class:`HookError` with
    ``catch_errors=False``) is logged as a warning, ``before_prompt_build hook failed: <err>``
    or ``before_agent_start hook (legacy prompt build path) failed: <err>``, and counts as no
    result (``catchErrors``). Model/provider overrides are not carried into the combined result.
    """
    log = logger if logger is not None else _LOGGER
    prompt_build: PromptBuildHookResult | None = None
    if runner is not None and runner.has("before_prompt_build"):
        try:
            prompt_build = await runner.run_before_prompt_build(event, ctx)
        except Exception as error:
            log.warning(f"before_prompt_build hook failed: {_describe_error(error)}")
    legacy = precomputed_legacy
    if legacy is None and runner is not None and runner.has("before_agent_start"):
        try:
            legacy = await runner.run_before_agent_start(event, ctx)
        except Exception as error:
            log.warning(
                "before_agent_start hook (legacy prompt build path) failed: "
                f"{_describe_error(error)}"
            )
    return _combine(prompt_build, legacy)


def resolve_prompt_build_hook_result_sync(
    runner: HookRunner | None,
    event: PromptBuildEvent,
    ctx: HookContext,
    *,
    precomputed_legacy: PromptBuildHookResult | None = None,
    logger: logging.Logger | None = None,
) -> PromptBuildHookResult:
    """Sync twin of :func:`resolve_prompt_build_hook_result` (same rules; async handlers run
    as described on :class:`HookRunner`; the running-loop ``RuntimeError`` is not swallowed)."""
    log = logger if logger is not None else _LOGGER
    prompt_build: PromptBuildHookResult | None = None
    if runner is not None and runner.has("before_prompt_build"):
        try:
            prompt_build = runner.run_before_prompt_build_sync(event, ctx)
        except HookError as error:
            log.warning(f"before_prompt_build hook failed: {_describe_error(error)}")
    legacy = precomputed_legacy
    if legacy is None and runner is not None and runner.has("before_agent_start"):
        try:
            legacy = runner.run_before_agent_start_sync(event, ctx)
        except HookError as error:
            log.warning(
                "before_agent_start hook (legacy prompt build path) failed: "
                f"{_describe_error(error)}"
            )
    return _combine(prompt_build, legacy)


def apply_prompt_build_hook_result(
    prompt: str, system_prompt: str, result: PromptBuildHookResult | None
) -> tuple[str, str]:
    """Applies a combined hook result (run/attempt.ts, ``composeSystemPromptWithHookContext``);
    returns ``(prompt, system_prompt)``.

    * a non-empty ``prepend_context`` gives ``prepend_context + "\\n\\n" + prompt``;
    * a ``system_prompt`` that is not blank replaces the system prompt (trimmed);
    * when ``prepend_system_context`` or ``append_system_context`` is non-blank, the system
      prompt becomes ``[prepend, system prompt, append]`` with each part trimmed, empty parts
      dropped, joined by ``"\\n\\n"``.
    """
    if result is None:
        return prompt, system_prompt
    if result.prepend_context:
        prompt = f"{result.prepend_context}\n\n{prompt}"
    override = _js_trim(result.system_prompt) if result.system_prompt is not None else ""
    if override:
        system_prompt = override
    prepend = _js_trim(result.prepend_system_context or "")
    append = _js_trim(result.append_system_context or "")
    if prepend or append:
        system_prompt = "\n\n".join(
            part for part in (prepend, _js_trim(system_prompt), append) if part
        )
    return prompt, system_prompt
