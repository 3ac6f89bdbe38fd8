"""The prompt-body pipeline: from an inbound message to the text the agent runs on (OpenClaw
2026.3.13 `src/auto-reply/reply/get-reply-run.ts`, ``runPreparedReply``; the 2026.3.13 release is
the "baseline", "[later]" marks rules of later OpenClaw releases).

:func:`build_prompt_body` applies the eight steps of ``runPreparedReply``, each also callable
alone (numbered as in the spec; 2026.3.13 runs step 8 right after step 3):

1. base body, or the bare ``/new`` / ``/reset`` prompt (get-reply-run.ts) —
   :func:`resolve_base_body`, :func:`is_bare_session_reset`;
2. inbound user-context prefix, untrusted JSON blocks (`src/auto-reply/reply/inbound-meta.ts`,
   ``buildInboundUserContextPrefix``) — :func:`build_inbound_user_context_prefix`;
3. abort hint (`src/auto-reply/reply/body.ts`, ``applySessionHints``) — :func:`apply_abort_hint`;
4. ``System:`` event lines (`src/auto-reply/reply/session-updates.ts`,
   ``drainFormattedSystemEvents``) — :func:`prepend_system_events`;
5. untrusted-context block (`src/auto-reply/reply/untrusted-context.ts`) —
   :func:`append_untrusted_context`;
6. thread note (get-reply-run.ts) — :func:`build_thread_note`;
7. media note and reply hint (`src/auto-reply/media-note.ts`, ``buildInboundMediaNote``) —
   :func:`build_media_note`, :func:`apply_media_note`;
8. think-level shorthand (`src/auto-reply/thinking.ts`, ``normalizeThinkLevel``) —
   :func:`extract_think_level`; in 2026.3.13 it is taken from the body after step 3, before the
   system events and the thread, media and untrusted-context parts are added.

It also builds the queued body for steer/followup runs (``queuedBody``, :func:`build_queued_body`)
and the trusted inbound metadata block that opens ``extraSystemPrompt`` (inbound-meta.ts,
``buildInboundMetaSystemPrompt``: :func:`build_inbound_meta_system_prompt`). Separators are
those of each step's upstream file.

**Untrusted text cannot forge structure.** The model sees one flat prompt, in which ``System:``
lines, internal-context delimiters and ``[Inter-session message]`` headers are trusted
structure. With ``neutralize_untrusted=True`` (the default everywhere) every piece of text that
comes from a user or a channel and is rendered outside JSON — the user's own text, untrusted
context entries, thread history and starter bodies, the continuation lines of event texts,
media paths/types/URLs and the summary line — goes through
:func:`clawctx.prompt.untrusted.neutralize_untrusted_text`, which rewrites only those markers. Every
line break a reader may honour counts (lone CR, VT, FF, U+001C-U+001E, NEL, U+2028, U+2029, not
only LF). Values rendered inside JSON cannot start a line through LF or CR (JSON escapes them):
there the delimiters are escaped, and only text after a raw NEL/U+2028/U+2029 (which JSON
leaves unescaped) is neutralized. The runtime's own text (event first lines, abort hint, media
note frame, reset prompt, headers) is never rewritten; for input without markers the output is
byte-identical to ``neutralize_untrusted=False``, the exact upstream baseline.

Choices where the spec leaves room are stated in the docstring of the function concerned.
"""

from __future__ import annotations

from collections.abc import Sequence

from clawctx._js import js_trim as _js_trim
from clawctx.prompt._body_input import (
    ChatType,
    InboundContext,
    InboundHistoryEntry,
    MediaUnderstandingAttachment,
    MediaUnderstandingDecision,
    MediaUnderstandingOutput,
    PromptBody,
    ThinkLevel,
)
from clawctx.prompt._body_steps import (
    ABORT_HINT,
    BARE_SESSION_RESET_PROMPT,
    EMPTY_BODY_REPLY,
    MEDIA_REPLY_HINT,
    MEDIA_WITHOUT_CAPTION_BODY,
    UNTRUSTED_CONTEXT_HEADER,
    _apply_media_prefix,
    _join_non_empty,
    _neutralize,
    append_untrusted_context,
    apply_abort_hint,
    apply_media_note,
    build_inbound_extra_system_prompt,
    build_inbound_meta_system_prompt,
    build_inbound_user_context_prefix,
    build_media_note,
    build_thread_note,
    compact_system_event,
    extract_think_level,
    is_bare_session_reset,
    normalize_chat_type,
    normalize_think_level,
    prepend_system_events,
    resolve_base_body,
    resolve_sender_label,
)
from clawctx.prompt._body_time import format_system_event_timestamp
from clawctx.prompt.system_events import SystemEvent, SystemEventQueue

__all__ = [
    "ABORT_HINT",
    "BARE_SESSION_RESET_PROMPT",
    "EMPTY_BODY_REPLY",
    "MEDIA_REPLY_HINT",
    "MEDIA_WITHOUT_CAPTION_BODY",
    "UNTRUSTED_CONTEXT_HEADER",
    "ChatType",
    "InboundContext",
    "InboundHistoryEntry",
    "MediaUnderstandingAttachment",
    "MediaUnderstandingDecision",
    "MediaUnderstandingOutput",
    "PromptBody",
    "ThinkLevel",
    "append_untrusted_context",
    "apply_abort_hint",
    "apply_media_note",
    "build_inbound_extra_system_prompt",
    "build_inbound_meta_system_prompt",
    "build_inbound_user_context_prefix",
    "build_media_note",
    "build_prompt_body",
    "build_queued_body",
    "build_thread_note",
    "compact_system_event",
    "extract_think_level",
    "format_system_event_timestamp",
    "is_bare_session_reset",
    "normalize_chat_type",
    "normalize_think_level",
    "prepend_system_events",
    "resolve_base_body",
    "resolve_sender_label",
]


# --------------------------------------------------------------------------------------------
# Queued body and the full pipeline (get-reply-run.ts, runPreparedReply)
# --------------------------------------------------------------------------------------------


def build_queued_body(
    effective_base_body: str,
    *,
    thread_note: str | None = None,
    media_note: str | None = None,
) -> str:
    """``queuedBody`` (OpenClaw 2026.3.13 `src/auto-reply/reply/get-reply-run.ts`):
    ``[thread_note, effective_base_body]`` joined by a blank line, then with a media note
    ``[media_note, MEDIA_REPLY_HINT, that]`` joined by ``\\n`` and trimmed.

    ``effective_base_body`` is upstream's ``bodyWithEvents``: the body with the inbound prefix
    and, when events were drained, the ``System:`` block in front
    (:func:`prepend_system_events`, the same block as the immediate run's). The abort hint,
    untrusted context and think-level stripping are not applied to queued bodies."""
    base = _join_non_empty((thread_note, effective_base_body), "\n\n")
    return _apply_media_prefix(base, media_note)


def _drain_events(
    system_events: SystemEventQueue | Sequence[SystemEvent] | None, session_key: str | None
) -> tuple[SystemEvent, ...]:
    if system_events is None:
        return ()
    if isinstance(system_events, SystemEventQueue):
        if not session_key or not _js_trim(session_key):
            return ()
        return tuple(system_events.drain(session_key))
    return tuple(system_events)


def build_prompt_body(
    ctx: InboundContext,
    *,
    is_new_session: bool = False,
    aborted_last_run: bool = False,
    session_key: str | None = None,
    is_main_session: bool = False,
    system_events: SystemEventQueue | Sequence[SystemEvent] | None = None,
    envelope_timezone: str | None = None,
    user_timezone: str | None = None,
    resolved_think_level: str | None = None,
    supports_xhigh: bool = False,
    channel_summary_lines: Sequence[str] = (),
    group_chat_context: str | None = None,
    group_intro: str | None = None,
    group_system_prompt: str | None = None,
    neutralize_untrusted: bool = True,
    later_media_rules: bool = False,
    unauthorized_control_command: bool = False,
) -> PromptBody:
    """Runs the prompt-body pipeline in the order of OpenClaw 2026.3.13
    `src/auto-reply/reply/get-reply-run.ts` (``runPreparedReply``).

    1. base body; a bare ``/new``/``/reset`` on a new session becomes
       :data:`BARE_SESSION_RESET_PROMPT` with no inbound prefix;
    2. otherwise ``[inbound prefix, user text]`` joined by a blank line. A blank result
       without media stops here with ``should_run=False`` and :data:`EMPTY_BODY_REPLY`; blank
       with media becomes :data:`MEDIA_WITHOUT_CAPTION_BODY`;
    3. abort hint; then (step 8), when no level was resolved, the think-level shorthand
       (``normalizeThinkLevel``) is taken from that body's first token — before anything below
       is added, so ``System:`` lines, the thread note or the media note never shadow it;
    4. ``System:`` lines — ``system_events`` is either a queue, drained once for
       ``session_key`` (default ``ctx.session_key``; nothing is drained without a key or when
       the run stops at step 2), or the events already drained; channel summary lines are used
       only when ``is_main_session and is_new_session``;
    5. untrusted context; 6. thread note (new and existing sessions alike);
    7. media note and hint. Finally a resolved ``xhigh`` the model does not support becomes
       ``high`` (the explicit-directive error reply is the directive handler's job).

    ``queued_body`` (:func:`build_queued_body`) gets the same ``System:`` block in front of the
    unstripped step-2 body, then the thread and media notes.

    ``unauthorized_control_command`` models get-reply-run.ts's rule: the caller sets it when the
    sender is not authorized and the raw text is a control command; with a blank stripped body the
    result is ``should_run=False`` with no reply. ``later_media_rules`` selects the [later] media
    note rules (:func:`build_media_note`). See the module docstring for
    ``neutralize_untrusted``.
    """
    base_body = resolve_base_body(ctx)
    base_trimmed = _js_trim(base_body)
    summary_line = _neutralize(base_trimmed, neutralize_untrusted)
    extra_system_prompt = build_inbound_extra_system_prompt(
        ctx,
        is_new_session=is_new_session,
        group_chat_context=group_chat_context,
        group_intro=group_intro,
        group_system_prompt=group_system_prompt,
    )

    def stopped(reply_text: str | None) -> PromptBody:
        return PromptBody(
            prefixed_command_body="",
            queued_body="",
            extra_system_prompt=extra_system_prompt,
            think_level=resolved_think_level,
            summary_line=summary_line,
            drained_events=(),
            should_run=False,
            reply_text=reply_text,
        )

    if unauthorized_control_command and not base_trimmed:
        return stopped(None)

    # Steps 1-2.
    if is_bare_session_reset(ctx, is_new_session):
        body_for_prompt = BARE_SESSION_RESET_PROMPT
    else:
        inbound_prefix = build_inbound_user_context_prefix(
            ctx, is_new_session=is_new_session, neutralize_untrusted=neutralize_untrusted
        )
        user_text = _neutralize(base_body, neutralize_untrusted)
        body_for_prompt = _join_non_empty((inbound_prefix, user_text), "\n\n")
    has_media = bool(ctx.media_path) or bool(ctx.media_paths)
    if not _js_trim(body_for_prompt):
        if not has_media:
            return stopped(EMPTY_BODY_REPLY)
        body_for_prompt = MEDIA_WITHOUT_CAPTION_BODY
    effective_base_body = body_for_prompt

    # Step 3.
    body = apply_abort_hint(effective_base_body, aborted_last_run)
    # Step 8: 2026.3.13 takes the shorthand here, before the System: block is prepended (which
    # would otherwise be the first token and shadow it) and before the other parts are added.
    think_level = resolved_think_level
    if not think_level and body:
        think_level, body = extract_think_level(body, supports_xhigh=supports_xhigh)
    # Step 4: events are drained once and prepended to both bodies (``bodyWithEvents`` is the
    # queued body's base).
    drained = _drain_events(system_events, session_key or ctx.session_key)

    def with_events(text: str) -> str:
        return prepend_system_events(
            text,
            drained,
            envelope_timezone=envelope_timezone,
            user_timezone=user_timezone,
            channel_summary_lines=(
                channel_summary_lines if is_main_session and is_new_session else ()
            ),
            neutralize_untrusted=neutralize_untrusted,
        )

    body = with_events(body)
    # Step 5.
    body = append_untrusted_context(
        body, ctx.untrusted_context, neutralize_untrusted=neutralize_untrusted
    )
    # Step 6.
    thread_note = build_thread_note(ctx, neutralize_untrusted=neutralize_untrusted)
    body = _join_non_empty((thread_note, body), "\n\n")
    # Step 7.
    media_note = build_media_note(
        ctx, later_media_rules=later_media_rules, neutralize_untrusted=neutralize_untrusted
    )
    body = _apply_media_prefix(body, media_note)
    if think_level == "xhigh" and not supports_xhigh:
        think_level = "high"

    return PromptBody(
        prefixed_command_body=body,
        queued_body=build_queued_body(
            with_events(effective_base_body), thread_note=thread_note, media_note=media_note
        ),
        extra_system_prompt=extra_system_prompt,
        think_level=think_level,
        summary_line=summary_line,
        drained_events=drained,
        should_run=True,
        reply_text=None,
    )
