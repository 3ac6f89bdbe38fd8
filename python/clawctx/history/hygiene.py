"""``sanitizeSessionHistory`` (OpenClaw 2026.3.13 `src/agents/pi-embedded-runner/google.ts`): the
per-provider hygiene passes in order, and the orphaned-trailing-user repair (``runEmbeddedAttempt``
in `src/agents/pi-embedded-runner/run/attempt.ts`).

Each pass is a Rust function of its own (exported from :mod:`clawctx`); this module only
orders them, runs the image pass, and performs the two session writes upstream makes (the
model snapshot and the Google bootstrap marker), through the session's normal append path and
only when a :class:`~clawctx.Session` is given.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from clawctx import _compat, _core
from clawctx.history import images
from clawctx.history.images import DEFAULT_IMAGE_LABEL

log = logging.getLogger("clawctx")

#: ``customType`` of the model snapshot entry (google.ts, appendModelSnapshot).
MODEL_SNAPSHOT_CUSTOM_TYPE: Final = "model-snapshot"
#: ``customType`` of the marker written when Google turn ordering prepended a bootstrap turn.
GOOGLE_BOOTSTRAP_CUSTOM_TYPE: Final = "google-turn-ordering-bootstrap"
GOOGLE_APIS: Final = frozenset({"google-gemini-cli", "google-generative-ai"})
OPENAI_RESPONSES_APIS: Final = frozenset({"openai-responses", "openai-codex-responses"})

_Messages = _core.Transcript | Iterable[Mapping[str, Any]]


def _now_ms(now_ms: int | Callable[[], int] | None) -> int:
    if now_ms is None:
        return time.time_ns() // 1_000_000
    return now_ms() if callable(now_ms) else now_ms


def _sanitize_images(
    messages: _core.Transcript, *, max_dimension_px: int | None, max_bytes: int | None
) -> _core.Transcript:
    # The image pass imports Pillow inside its functions, only when an image needs it.
    options: dict[str, Any] = {"label": DEFAULT_IMAGE_LABEL}
    if max_dimension_px is not None:
        options["max_dimension_px"] = max_dimension_px
    if max_bytes is not None:
        options["max_bytes"] = max_bytes
    return images.sanitize_images(messages, **options)


def _record_model_snapshot(
    session: _core.Session,
    provider: str | None,
    model_api: str | None,
    model_id: str | None,
    now: int,
) -> None:
    """google.ts ``appendModelSnapshot``: append a ``model-snapshot`` entry when the model differs
    from the last one."""
    latest = session.latest_custom_entry([MODEL_SNAPSHOT_CUSTOM_TYPE])
    data = latest.get("data") if latest is not None else None
    previous = data if isinstance(data, dict) else {}
    current = {"provider": provider, "modelApi": model_api, "modelId": model_id}
    if latest is not None and all((previous.get(k) or "") == (v or "") for k, v in current.items()):
        return
    snapshot: dict[str, Any] = {"timestamp": now}
    snapshot.update({k: v for k, v in current.items() if v is not None})
    session.append_custom_entry(MODEL_SNAPSHOT_CUSTOM_TYPE, snapshot)


def _has_google_bootstrap_marker(session: _core.Session) -> bool:
    return session.latest_custom_entry([GOOGLE_BOOTSTRAP_CUSTOM_TYPE]) is not None


def _record_google_bootstrap(session: _core.Session, session_id: str, now: int) -> None:
    """google.ts ``applyGoogleTurnOrderingFix``: warn and write the marker, once per session."""
    if not _has_google_bootstrap_marker(session):
        log.warning(
            "google turn ordering fixup: prepended user bootstrap (sessionId=%s)", session_id
        )
        session.append_custom_entry(GOOGLE_BOOTSTRAP_CUSTOM_TYPE, {"timestamp": now})


@dataclass(frozen=True)
class GoogleTurnOrderingFix:
    """What :func:`apply_google_turn_ordering_fix` did."""

    messages: _core.Transcript
    #: Whether the ``(session bootstrap)`` user turn was prepended.
    did_prepend: bool


def apply_google_turn_ordering_fix(
    messages: _Messages,
    *,
    model_api: str | None,
    session: _core.Session | None = None,
    session_id: str | None = None,
    now_ms: int | Callable[[], int] | None = None,
    pending_writes: list[Callable[[], None]] | None = None,
) -> GoogleTurnOrderingFix:
    """``applyGoogleTurnOrderingFix`` of OpenClaw 2026.3.13
    `src/agents/pi-embedded-runner/google.ts`.

    Only for ``model_api`` exactly ``"google-generative-ai"`` or ``"google-gemini-cli"``: a
    transcript whose first message is an assistant gets the ``(session bootstrap)`` user turn
    in front (:func:`sanitize_google_turn_ordering`). When it is prepended and ``session`` has
    no ``google-turn-ordering-bootstrap`` custom entry yet, the warning
    ``google turn ordering fixup: prepended user bootstrap (sessionId=<id>)`` is logged on the
    ``clawctx`` logger and that marker (``{"timestamp": now}``) is appended, so both happen
    once per session. ``session_id`` is the id the warning names (default: the session's).
    With ``pending_writes`` (a list), the warning and marker are deferred into it as a callable.
    Any other ``model_api`` returns the messages as given (a Transcript) with
    ``did_prepend=False``.
    """
    given = messages if isinstance(messages, _core.Transcript) else _core.Transcript(messages)
    if model_api not in GOOGLE_APIS:
        return GoogleTurnOrderingFix(given, did_prepend=False)
    now = _now_ms(now_ms)
    fixed = _core.sanitize_google_turn_ordering(given, now_ms=now)
    did_prepend = fixed is not given
    if did_prepend and session is not None:
        sid = (session.session_id or "") if session_id is None else session_id
        if pending_writes is None:
            _record_google_bootstrap(session, sid, now)
        else:
            pending_writes.append(lambda: _record_google_bootstrap(session, sid, now))
    return GoogleTurnOrderingFix(fixed, did_prepend=did_prepend)


def sanitize_session_history(
    messages: _Messages,
    *,
    policy: _core.TranscriptPolicy | None = None,
    provider: str | None = None,
    model_api: str | None = None,
    model_id: str | None = None,
    allowed_tool_names: Sequence[str] | None = None,
    session: _core.Session | None = None,
    session_id: str | None = None,
    now_ms: int | Callable[[], int] | None = None,
    image_max_dimension_px: int | None = None,
    image_max_bytes: int | None = None,
    errored_assistant_result_policy: str | None = None,
    validate_turns: bool = False,
    provider_safe: bool = False,
    pending_writes: list[Callable[[], None]] | None = None,
    safe: bool | None = None,
) -> _core.Transcript:
    """Make stored history safe to send to a provider: ``sanitizeSessionHistory`` of OpenClaw
    2026.3.13 `src/agents/pi-embedded-runner/google.ts`, pass by pass.

    1. resolve the policy (transcript-policy.ts, ``resolveTranscriptPolicy``) unless one is given;
    2. mark inter-session user messages (``annotateInterSessionUserMessages``); 3. sanitize
    tool-call ids when the policy says so, then, in the policy's ``full`` mode, thought
    signatures (unless preserved) and blank assistant text, then images
    (pi-embedded-helpers/images.ts ``sanitizeSessionMessagesImages``, tool-call-id.ts);
    4. drop thinking blocks when the policy says so (``dropThinkingBlocks``); 5. sanitize
    tool-call inputs (``sanitizeToolCallInputs``); 6. repair tool-use/result pairing
    (``sanitizeToolUseResultPairing``); 7. strip tool-result ``details``; 8. zero usage before
    the latest compaction and normalize every assistant's usage snapshot
    (``stripStaleAssistantUsageBeforeLatestCompaction``, ``ensureAssistantUsageSnapshots``);
    9. for OpenAI Responses APIs, drop unreplayable reasoning blocks and downgrade
    ``call|fc_`` tool-call id pairs (pi-embedded-helpers/openai.ts); 10. record a
    ``model-snapshot`` custom entry in ``session`` when the model differs from the last one;
    11. (clawctx addition, before step 2) another provider's ``compaction`` blocks
    (:func:`drop_foreign_compaction_blocks`; the target's own stay for the payload writers);
    12. when the policy applies Google turn ordering: :func:`apply_google_turn_ordering_fix`
    for the Google APIs (warning and marker, with ``session``), the bootstrap user turn alone
    for the other (strict OpenAI-compatible) providers.

    **Safe by default.** Unless ``safe=False`` or a :func:`clawctx.compat` release is in force,
    the result is also a history the provider accepts (:func:`validate_for_provider` finds
    nothing): when the recorded release's passes above leave it invalid (a repeated tool-call
    id, an orphaned, missing, late or second result, an aborted turn with calls, an assistant
    first), the passes run again with ``provider_safe`` and the request guard
    (``clawctx._core.guard_request``) repairs what is left, as later OpenClaw releases do. A
    history the recorded release already makes valid is returned exactly as it returns it.

    ``validate_turns`` adds the runner's next step (run/attempt.ts): Gemini and Anthropic turn
    validation (pi-embedded-helpers/turns.ts) as the policy says. ``provider_safe`` adds
    clawctx's safety passes, aimed at a transcript every provider accepts (upstream has none of
    them): delivery-mirror assistants dropped for Anthropic, repeated tool-call ids made unique
    (as OpenClaw 2026.5), a second result for one call id dropped, the bootstrap user turn for
    Anthropic-family providers too, and, with ``validate_turns``, every unanswered tool call
    removed (:func:`strip_dangling_tool_calls`). Whenever these passes run (``provider_safe``,
    or the safe default's second run), they are repeated on their own output until nothing
    changes, so the result is a fixed point: sanitizing it again returns it unchanged.

    Only ``session`` is ever written to (steps 10 and 11, through its append path); the
    input is never modified. Returns a Transcript: the given one when no pass changed anything
    (Transcripts are immutable, so this is observably the same as upstream's fresh copy).
    ``session_id`` is the id the Google warning names (default: the session's).
    With ``pending_writes`` (a list), the session writes of steps 10 and 11 are not done but
    appended to it as callables, so a caller can run them later — after moving the leaf off an
    orphaned user message (run/attempt.ts), so the entries do not hang below the orphan.
    """
    if policy is None:
        policy = _core.resolve_transcript_policy(
            provider=provider, model_api=model_api, model_id=model_id
        )
    now = _now_ms(now_ms)
    options: dict[str, Any] = {
        "policy": policy,
        "provider": provider,
        "model_api": model_api,
        "model_id": model_id,
        "allowed_tool_names": allowed_tool_names,
        "session_id": session_id,
        "image_max_dimension_px": image_max_dimension_px,
        "image_max_bytes": image_max_bytes,
        "errored_assistant_result_policy": errored_assistant_result_policy,
        "validate_turns": validate_turns,
    }
    transcript = _sanitize_passes(
        messages,
        now=now,
        provider_safe=provider_safe,
        session=session,
        pending_writes=pending_writes,
        **options,
    )
    safe_on = _compat.resolve_safe(safe)
    if not safe_on:
        return transcript if not provider_safe else _settle(transcript, now, False, options)
    if not _core.request_issues(
        transcript, provider=provider, model_api=model_api, model_id=model_id
    ):
        return transcript if not provider_safe else _settle(transcript, now, True, options)
    if not provider_safe:
        # The session writes were made (or queued) by the first run.
        transcript = _sanitize_passes(
            messages, now=now, provider_safe=True, session=None, pending_writes=None, **options
        )
    return _settle(_guard(transcript, now, options), now, True, options)


#: How often :func:`_settle` reruns the passes before it gives up looking for a fixed point;
#: the property tests settle in at most two rounds.
_SETTLE_ROUNDS = 6


def _guard(transcript: _core.Transcript, now: int, options: dict[str, Any]) -> _core.Transcript:
    guarded, _changes = _core.guard_request(
        transcript,
        provider=options["provider"],
        model_api=options["model_api"],
        model_id=options["model_id"],
        now_ms=now,
    )
    return guarded


def _settle(
    transcript: _core.Transcript, now: int, guard: bool, options: dict[str, Any]
) -> _core.Transcript:
    """Reruns the ``provider_safe`` passes (and the request guard) on their own output until
    nothing changes, so the result is a fixed point: a second ``sanitize_session_history`` of
    it returns it unchanged. One round is not always enough, because a pass can create what an
    earlier pass removes: Gemini turn validation merges an errored blank assistant into the
    next turn and leaves a blank text block behind, and the guard leaves out an aborted turn
    between two user turns, which turn validation then merges. Passes return their input when
    they change nothing, so the common case costs one scan."""
    for _ in range(_SETTLE_ROUNDS):
        again = _sanitize_passes(
            transcript, now=now, provider_safe=True, session=None, pending_writes=None, **options
        )
        if guard and _core.request_issues(
            again,
            provider=options["provider"],
            model_api=options["model_api"],
            model_id=options["model_id"],
        ):
            again = _guard(again, now, options)
        if again is transcript:
            break
        transcript = again
    return transcript


def _sanitize_passes(
    messages: _Messages,
    *,
    policy: _core.TranscriptPolicy,
    provider: str | None,
    model_api: str | None,
    model_id: str | None,
    allowed_tool_names: Sequence[str] | None,
    session: _core.Session | None,
    session_id: str | None,
    now: int,
    image_max_dimension_px: int | None,
    image_max_bytes: int | None,
    errored_assistant_result_policy: str | None,
    validate_turns: bool,
    provider_safe: bool,
    pending_writes: list[Callable[[], None]] | None,
) -> _core.Transcript:
    """The passes of :func:`sanitize_session_history` in order (its steps 2-11)."""
    transcript = _core.annotate_inter_session_messages(messages)
    if provider or model_api:
        # clawctx addition (issue 31): provider `compaction` blocks another provider returned
        # are dropped, or become their readable summary, as the payload writers send them.
        transcript = _core.drop_foreign_compaction_blocks(
            transcript, provider=provider, model_api=model_api
        )
    if provider_safe and (provider == "anthropic" or model_api == "anthropic-messages"):
        transcript = _core.drop_delivery_mirror_messages(transcript)
    id_mode = policy.tool_call_id_mode if policy.sanitize_tool_call_ids else None
    if id_mode is not None:
        transcript = _core.sanitize_tool_call_ids(transcript, id_mode, now_ms=now)
    if provider_safe:
        # clawctx addition: repeated ids would reach the provider (or lose their results in
        # the pairing repair), so later occurrences get fresh ids as in OpenClaw 2026.5.
        transcript = _core.dedupe_tool_call_ids(transcript, id_mode)
    transcript = _core.sanitize_message_blocks(
        transcript,
        sanitize_mode=policy.sanitize_mode,
        preserve_signatures=policy.preserve_signatures,
        sanitize_thought_signatures=policy.sanitize_thought_signatures,
    )
    transcript = _sanitize_images(
        transcript, max_dimension_px=image_max_dimension_px, max_bytes=image_max_bytes
    )
    if policy.drop_thinking_blocks:
        transcript = _core.drop_thinking_blocks(transcript)
    transcript = _core.sanitize_tool_call_inputs(transcript, allowed_tool_names=allowed_tool_names)
    if policy.repair_tool_use_result_pairing:
        transcript = _core.sanitize_tool_use_result_pairing(
            transcript, now_ms=now, errored_assistant_result_policy=errored_assistant_result_policy
        )
        if provider_safe:
            # clawctx addition: the pairing repair keeps a second same-id result when nothing
            # else in its span changes (upstream returns its input unless a change flag was
            # set); no provider accepts two results for one call.
            transcript = _core.drop_duplicate_tool_results(transcript)
    transcript = _core.strip_tool_result_details(transcript)
    transcript = _core.normalize_usage(_core.zero_stale_usage(transcript))
    if model_api in OPENAI_RESPONSES_APIS:
        transcript = _core.downgrade_openai_function_call_pairs(
            _core.downgrade_openai_reasoning(transcript)
        )
    if session is not None and (provider or model_api or model_id):
        if pending_writes is None:
            _record_model_snapshot(session, provider, model_api, model_id, now)
        else:
            pending_writes.append(
                lambda: _record_model_snapshot(session, provider, model_api, model_id, now)
            )
    if policy.apply_google_turn_ordering:
        if model_api in GOOGLE_APIS:
            transcript = apply_google_turn_ordering_fix(
                transcript,
                model_api=model_api,
                session=session,
                session_id=session_id,
                now_ms=now,
                pending_writes=pending_writes,
            ).messages
        else:
            transcript = _core.sanitize_google_turn_ordering(transcript, now_ms=now)
    elif provider_safe and policy.validate_anthropic_turns:
        # clawctx addition: Anthropic wants a user turn first too; same bootstrap turn.
        transcript = _core.sanitize_google_turn_ordering(transcript, now_ms=now)
    if validate_turns:
        if policy.validate_gemini_turns:
            transcript = _core.validate_gemini_turns(transcript)
        if policy.validate_anthropic_turns:
            if provider_safe:
                transcript = _core.strip_dangling_tool_calls(transcript)
            transcript = _core.validate_anthropic_turns(transcript)
    return transcript


def validate_for_provider(
    messages: _Messages,
    *,
    provider: str | None = None,
    model_api: str | None = None,
    model_id: str | None = None,
    followed_by_user: bool = False,
    tools: Sequence[Mapping[str, Any]] | None = None,
    system: str | Sequence[Mapping[str, Any]] | None = None,
) -> list[_core.Violation]:
    """The provider's request rules a request built from ``messages`` (AgentMessages or pi
    Messages) would break; an empty list means the provider accepts it.

    Sending is modelled as pi-ai does it (pi-mono 0.58.3
    `packages/ai/src/providers/transform-messages.ts`): assistant turns that ended in ``error``
    or ``aborted`` are skipped, a call still unanswered when the next user or assistant message
    arrives gets a synthetic result, another model's tool-call ids are normalised for
    Anthropic. The rules (each a ``Violation.rule``): ``result-without-call`` (a tool result
    that does not directly follow the turn that made its call), ``duplicate-result``,
    ``empty-call-id``, ``invalid-call-id`` (Anthropic and Bedrock: ``^[a-zA-Z0-9_-]+$``),
    ``duplicate-call-id`` (ids are unique per request; OpenAI Responses ``call_id``),
    ``duplicate-item-id`` (Responses item ids), ``call-without-result`` (unanswered at the end,
    unless ``followed_by_user``: a prompt comes after), ``first-turn-not-user`` (Anthropic,
    Bedrock, Gemini). ``model_id`` names the target model (a turn of another model has its ids
    normalised). The request bodies themselves are checked by
    :func:`clawctx.wire.validate_request_body`.

    Anthropic (and Bedrock) prompt-cache breakpoints: the ``cache_control`` markers on
    ``tools`` (the request's tool definitions), ``system`` (a list of system blocks; a string
    has none) and the messages' content blocks (Anthropic message params, or pi messages that
    carry them), counted in prefix order (tools, system, messages):
    ``too-many-cache-breakpoints`` on each marker past the 4th the API takes,
    ``cache-ttl-order`` on a ``"1h"`` marker after a ``"5m"`` one (the default: longer TTLs
    must come first), ``invalid-cache-ttl``. Their ``index`` is the message holding the marker
    (0 for tools and system) and the detail starts with its path (``tools[2]``,
    ``messages[3].content[0]``).
    """
    family = _core.provider_family(provider=provider, model_api=model_api)
    found = _core.request_issues(
        messages,
        provider=provider,
        model_api=model_api,
        model_id=model_id,
        followed_by_user=followed_by_user,
    )
    if family == "anthropic":
        found += _core._cache_breakpoint_issues(
            messages,
            tools_json=None if tools is None else json.dumps(list(tools), allow_nan=False),
            system_json=None
            if system is None or isinstance(system, str)
            else json.dumps(list(system), allow_nan=False),
        )
    return found


@dataclass(frozen=True)
class OrphanedUserReport:
    """What :func:`detach_orphaned_trailing_user` did."""

    detached: bool
    #: The orphaned user entry (still in the file) and where the leaf moved.
    entry_id: str | None = None
    new_leaf_id: str | None = None
    #: The rebuilt context (``None`` when nothing was detached).
    messages: _core.Transcript | None = None
    warning: str | None = None


def detach_orphaned_trailing_user(
    session: _core.Session, *, run_id: str | None = None
) -> OrphanedUserReport:
    """As ``runEmbeddedAttempt`` (run/attempt.ts): when the leaf is a user message (a turn that
    never got an answer), move the leaf to its parent (or before the first entry) so the new prompt
    becomes its sibling instead of a second consecutive user turn. The orphan stays in the file.
    Returns what happened and the rebuilt context messages."""
    leaf_id = session.leaf_id
    entry = session.get_entry(leaf_id) if leaf_id is not None else None
    message = entry.get("message") if entry is not None else None
    if entry is None or entry.get("type") != "message" or not isinstance(message, dict):
        return OrphanedUserReport(detached=False)
    if message.get("role") != "user":
        return OrphanedUserReport(detached=False)
    parent_id = entry.get("parentId")
    if isinstance(parent_id, str) and session.get_entry(parent_id) is not None:
        session.branch(parent_id)
    else:
        session.reset_leaf()
    warning = (
        "Removed orphaned user message to prevent consecutive user turns. "
        f"runId={run_id} sessionId={session.session_id}"
    )
    log.warning("%s", warning)
    return OrphanedUserReport(
        detached=True,
        entry_id=leaf_id,
        new_leaf_id=session.leaf_id,
        messages=session.context().messages,
        warning=warning,
    )
