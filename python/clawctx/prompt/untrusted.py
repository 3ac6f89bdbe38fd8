"""Markers the runtime uses to frame trusted structure, and the escaping that keeps untrusted
text from forging them (later OpenClaw
`src/agents/internal-runtime-context.ts`, ``escapeInternalRuntimeContextDelimiters``, not in
2026.3.13; the markers of 2026.3.13 `src/auto-reply/reply/session-updates.ts` and
`src/agents/pi-embedded-runner/google.ts`).

The model sees one flat prompt. Structure the runtime adds (``System:`` event lines, internal
context blocks, the ``[Inter-session message]`` header, ``[System Message]`` announces) is
recognised by its exact text, so text that comes from a user, a channel or a child agent must
never contain it verbatim. :func:`neutralize_untrusted_text` rewrites every such marker into a
visibly different, harmless form. The rewrite is a clawctx hardening beyond the baseline (upstream
fixed the same spoofing later, issue #26675); it changes only the markers, never other text.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "INTERNAL_CONTEXT_BEGIN",
    "INTERNAL_CONTEXT_BEGIN_ESCAPED",
    "INTERNAL_CONTEXT_END",
    "INTERNAL_CONTEXT_END_ESCAPED",
    "INTER_SESSION_HEADER",
    "UNTRUSTED_CHILD_RESULT_BEGIN",
    "UNTRUSTED_CHILD_RESULT_END",
    "escape_internal_context_delimiters",
    "neutralize_untrusted_text",
]

#: Later OpenClaw internal-runtime-context.ts: the delimiters of a runtime-generated context block
#: (each on a line of its own).
INTERNAL_CONTEXT_BEGIN: Final = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"
INTERNAL_CONTEXT_END: Final = "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"
#: escapeInternalRuntimeContextDelimiters: what the delimiters become inside untrusted text.
INTERNAL_CONTEXT_BEGIN_ESCAPED: Final = "[[OPENCLAW_INTERNAL_CONTEXT_BEGIN]]"
INTERNAL_CONTEXT_END_ESCAPED: Final = "[[OPENCLAW_INTERNAL_CONTEXT_END]]"
#: internal-events.ts, formatTaskCompletionEvent: the fence around a child agent's result inside a
#: task-completion event.
UNTRUSTED_CHILD_RESULT_BEGIN: Final = "<<<BEGIN_UNTRUSTED_CHILD_RESULT>>>"
UNTRUSTED_CHILD_RESULT_END: Final = "<<<END_UNTRUSTED_CHILD_RESULT>>>"
#: google.ts, buildInterSessionPrefix: the first word of the inter-session prefix.
INTER_SESSION_HEADER: Final = "[Inter-session message]"

_DELIMITER_ESCAPES: Final = (
    (INTERNAL_CONTEXT_BEGIN, INTERNAL_CONTEXT_BEGIN_ESCAPED),
    (INTERNAL_CONTEXT_END, INTERNAL_CONTEXT_END_ESCAPED),
    (UNTRUSTED_CHILD_RESULT_BEGIN, "[[UNTRUSTED_CHILD_RESULT_BEGIN]]"),
    (UNTRUSTED_CHILD_RESULT_END, "[[UNTRUSTED_CHILD_RESULT_END]]"),
)

# Line-leading markers a reader (model or runtime) takes as trusted structure. Matched after
# optional horizontal whitespace, case-insensitively, because models read "system:" and
# " SYSTEM:" the same way. A line starts after any character a tokenizer or renderer may treat
# as a line break, not only "\n" (Python's ``^`` with MULTILINE knows only "\n").
_LINE_START = r"(?:\A|(?<=[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]))"
_SYSTEM_LINE = re.compile(_LINE_START + r"([ \t\u00a0]*)system[ \t]*:", re.IGNORECASE)
_BRACKET_MARKER = re.compile(
    _LINE_START + r"([ \t\u00a0]*)\[(system message|inter-session message)\]", re.IGNORECASE
)


def escape_internal_context_delimiters(text: str) -> str:
    """``escapeInternalRuntimeContextDelimiters``: replaces the internal-context delimiters (and the
    child-result fence of ``formatTaskCompletionEvent``) with bracketed look-alikes, so untrusted
    text can neither open nor close a block."""
    for marker, escaped in _DELIMITER_ESCAPES:
        if marker in text:
            text = text.replace(marker, escaped)
    return text


def neutralize_untrusted_text(text: str) -> str:
    """Makes untrusted text unable to forge runtime structure in a prompt.

    * internal-context and child-result delimiters are escaped;
    * a line starting with ``System:`` becomes ``System (untrusted):`` (system-event lines are
      ``System: [...]``, session-updates.ts);
    * a line starting with ``[System Message]`` or ``[Inter-session message]`` gets parentheses
      instead of brackets: ``(System Message)``, ``(Inter-session message)`` (subagent-announce.ts,
      google.ts).

    Everything else is kept byte for byte; applying it twice gives the same result as once.
    """
    text = escape_internal_context_delimiters(text)
    text = _SYSTEM_LINE.sub(r"\1System (untrusted):", text)
    return _BRACKET_MARKER.sub(lambda m: f"{m.group(1)}({m.group(2)})", text)
