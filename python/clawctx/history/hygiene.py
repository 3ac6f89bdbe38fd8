"""``sanitizeSessionHistory`` (OpenClaw 2026.3.13 `src/agents/pi-embedded-runner/google.ts`): the
per-provider hygiene passes in order, and the orphaned-trailing-user repair (``runEmbeddedAttempt``
in `src/agents/pi-embedded-runner/run/attempt.ts`).

Each pass is a Rust function of its own (exported from :mod:`clawctx`); this module only
orders them, runs the image pass, and performs the two session writes upstream makes (the
model snapshot and the Google bootstrap marker), through the session's normal append path and
only when a :class:`~clawctx.Session` is given.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from clawctx import _core
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


def _record_google_bootstrap(session: _core.Session, now: int) -> None:
    if session.latest_custom_entry([GOOGLE_BOOTSTRAP_CUSTOM_TYPE]) is None:
        log.warning(
            "google turn ordering fixup: prepended user bootstrap (sessionId=%s)",
            session.session_id,
        )
        session.append_custom_entry(GOOGLE_BOOTSTRAP_CUSTOM_TYPE, {"timestamp": now})


def _apply_google_turn_ordering(
    messages: _core.Transcript,
    model_api: str | None,
    session: _core.Session | None,
    now: int,
    pending_writes: list[Callable[[], None]] | None,
) -> _core.Transcript:
    """google.ts ``applyGoogleTurnOrderingFix`` and pi-embedded-helpers/bootstrap.ts
    ``sanitizeGoogleTurnOrdering``: prepend the bootstrap turn; for Google APIs also record it once.
    """
    fixed = _core.sanitize_google_turn_ordering(messages, now_ms=now)
    if fixed is messages or model_api not in GOOGLE_APIS or session is None:
        return fixed
    if pending_writes is None:
        _record_google_bootstrap(session, now)
    else:
        pending_writes.append(lambda: _record_google_bootstrap(session, now))
    return fixed


def sanitize_session_history(
    messages: _Messages,
    *,
    policy: _core.TranscriptPolicy | None = None,
    provider: str | None = None,
    model_api: str | None = None,
    model_id: str | None = None,
    allowed_tool_names: Sequence[str] | None = None,
    session: _core.Session | None = None,
    now_ms: int | Callable[[], int] | None = None,
    image_max_dimension_px: int | None = None,
    image_max_bytes: int | None = None,
    errored_assistant_result_policy: str | None = None,
    validate_turns: bool = True,
    pending_writes: list[Callable[[], None]] | None = None,
) -> _core.Transcript:
    """Make stored history safe to send to a provider (google.ts, sanitizeSessionHistory's pass
    order).

    1. resolve the policy (transcript-policy.ts, ``resolveTranscriptPolicy``) unless one is given;
    2. mark inter-session user messages (``annotateInterSessionUserMessages``); 3. for Anthropic,
    drop delivery-mirror assistants; 4. sanitize tool-call ids (when
    the policy says so) and make them unique, then thought signatures, blank assistant text and
    images (pi-embedded-helpers/images.ts, tool-images.ts, tool-call-id.ts);
    5. drop thinking blocks (Copilot Claude); 6. sanitize tool-call inputs
    (``repairToolCallInputs``); 7. repair tool-use/result pairing (``repairToolUseResultPairing``)
    and drop duplicate results it keeps by its quirk;
    8. strip tool-result ``details``; 9. zero stale
    usage and normalize usage (``stripStaleAssistantUsageBeforeLatestCompaction``); 10. for OpenAI
    Responses, drop reasoning signatures that cannot be replayed; 11. record a model snapshot in
    ``session``; 12. Google turn ordering (``applyGoogleTurnOrderingFix``), and the same bootstrap
    user turn for Anthropic-family providers. With ``validate_turns`` (default) the runner's next
    step follows: Gemini and Anthropic turn validation (pi-embedded-helpers/turns.ts) as the policy
    says.

    Only ``session`` is ever written to (steps 11 and 12, through its append path); the
    input is never modified. Returns a Transcript.
    With ``pending_writes`` (a list), the session writes of steps 11 and 12 are not done but
    appended to it as callables, so a caller can run them later — after moving the leaf off an
    orphaned user message (run/attempt.ts), so the entries do not hang below the orphan.
    """
    if policy is None:
        policy = _core.resolve_transcript_policy(
            provider=provider, model_api=model_api, model_id=model_id
        )
    now = _now_ms(now_ms)
    transcript = _core.annotate_inter_session_messages(messages)
    if provider == "anthropic" or model_api == "anthropic-messages":
        transcript = _core.drop_delivery_mirror_messages(transcript)
    id_mode = policy.tool_call_id_mode if policy.sanitize_tool_call_ids else None
    if id_mode is not None:
        transcript = _core.sanitize_tool_call_ids(transcript, id_mode, now_ms=now)
    # clawctx addition: repeated ids would reach the provider (or lose their results in the
    # pairing repair), so later occurrences get fresh ids as in OpenClaw 2026.5.
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
        # clawctx addition: the pairing repair keeps a second same-id result when nothing else
        # in its span changes (upstream quirk: repairToolUseResultPairing returns its input unless
        # a change flag was set); no provider accepts two results for one call.
        transcript = _core.drop_duplicate_tool_results(transcript)
    transcript = _core.strip_tool_result_details(transcript)
    transcript = _core.normalize_usage(_core.zero_stale_usage(transcript))
    if model_api in OPENAI_RESPONSES_APIS:
        transcript = _core.downgrade_openai_reasoning(transcript)
    if session is not None and (provider or model_api or model_id):
        if pending_writes is None:
            _record_model_snapshot(session, provider, model_api, model_id, now)
        else:
            pending_writes.append(
                lambda: _record_model_snapshot(session, provider, model_api, model_id, now)
            )
    if policy.apply_google_turn_ordering:
        transcript = _apply_google_turn_ordering(
            transcript, model_api, session, now, pending_writes
        )
    elif policy.validate_anthropic_turns:
        # clawctx addition: Anthropic wants a user turn first too; same bootstrap turn.
        transcript = _core.sanitize_google_turn_ordering(transcript, now_ms=now)
    if validate_turns:
        if policy.validate_gemini_turns:
            transcript = _core.validate_gemini_turns(transcript)
        if policy.validate_anthropic_turns:
            transcript = _core.validate_anthropic_turns(transcript)
    return transcript


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
