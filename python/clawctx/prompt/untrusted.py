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
import unicodedata
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

# Look-alike detection (UTS #39 skeleton idea): every character is mapped to a skeleton piece
# (compatibility decomposition with combining marks dropped, format characters removed, all
# whitespace one space, line breaks "\n", lower case, a small confusables table for the letters of
# the marker words), and the markers are searched in the skeleton (" *" matches any run of
# whitespace).
# Matches map back to spans of the original text; everything else keeps its exact characters.
_LINE_BREAKS: Final = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
# Letters that render blank but are not whitespace (Hangul fillers, braille blank).
_BLANKS: Final = frozenset("\u115f\u1160\u3164\uffa0\u2800")
# Confusables for the letters of the marker words (s y t e m a g i n r o c l u h x b d p w k,
# "-", ":", brackets, angle brackets, underscore), lower-cased keys after decomposition.
_CONFUSABLES: Final[dict[str, str]] = {
    # Cyrillic
    "\u0430": "a",  # cyrillic small letter a
    "\u0441": "c",  # cyrillic small letter es
    "\u0435": "e",  # cyrillic small letter ie
    "\u0455": "s",  # cyrillic small letter dze
    "\u0456": "i",  # cyrillic small letter byelorussian-ukrainian i
    "\u0458": "j",  # cyrillic small letter je
    "\u043e": "o",  # cyrillic small letter o
    "\u0440": "p",  # cyrillic small letter er
    "\u0443": "y",  # cyrillic small letter u
    "\u04af": "y",  # cyrillic small letter straight u
    "\u0445": "x",  # cyrillic small letter ha
    "\u043c": "m",  # cyrillic small letter em (small-capital form)
    "\u0442": "t",  # cyrillic small letter te (small-capital form)
    "\u043d": "n",  # cyrillic small letter en (small-capital H, read as n in some fonts)
    "\u0433": "r",  # cyrillic small letter ghe
    "\u04bb": "h",  # cyrillic small letter shha
    "\u0501": "d",  # cyrillic small letter komi de
    "\u051b": "q",  # cyrillic small letter qa
    "\u051d": "w",  # cyrillic small letter we
    "\u04cf": "i",  # cyrillic small letter palochka
    # Greek
    "\u03b1": "a",  # greek small letter alpha
    "\u03b5": "e",  # greek small letter epsilon
    "\u03b9": "i",  # greek small letter iota
    "\u03bf": "o",  # greek small letter omicron
    "\u03c5": "u",  # greek small letter upsilon
    "\u03bd": "n",  # greek small letter nu (read as v/n)
    "\u03c4": "t",  # greek small letter tau
    "\u03ba": "k",  # greek small letter kappa
    "\u03c1": "p",  # greek small letter rho
    "\u03bc": "m",  # greek small letter mu
    "\u03c3": "s",  # greek small letter sigma (rare)
    "\u03b3": "y",  # greek small letter gamma
    # Armenian / Latin extensions
    "\u0578": "n",  # armenian small letter vo
    "\u057d": "u",  # armenian small letter seh
    "\u0585": "o",  # armenian small letter oh
    "\u0261": "g",  # latin small letter script g
    "\u0131": "i",  # latin small letter dotless i
    "\u0269": "i",  # latin small letter iota
    "\u1d0f": "o",  # latin letter small capital o
    "\u1d1b": "t",  # latin letter small capital t
    "\u1d0d": "m",  # latin letter small capital m
    "\u0280": "r",  # latin letter small capital r
    "\u0274": "n",  # latin letter small capital n
    "\u0262": "g",  # latin letter small capital g
    "\u026a": "i",  # latin letter small capital i
    "\u028f": "y",  # latin letter small capital y
    "\ua731": "s",  # latin letter small capital s
    "\u1d07": "e",  # latin letter small capital e
    "\u1d00": "a",  # latin letter small capital a
    "l": "i",  # "lnter" reads as "Inter"
    "\u01c0": "i",  # latin letter dental click
    # punctuation
    "\u2010": "-",
    "\u2011": "-",
    "\u2012": "-",
    "\u2013": "-",
    "\u2014": "-",
    "\u2015": "-",
    "\u2212": "-",
    "\u2043": "-",
    "\u02d0": ":",  # modifier letter triangular colon
    "\u0589": ":",  # armenian full stop
    "\u05c3": ":",  # hebrew punctuation sof pasuq
    "\u2236": ":",  # ratio
    "\ua789": ":",  # modifier letter colon
    "\u16ec": ":",  # runic multiple punctuation
    "\u3010": "[",  # left black lenticular bracket
    "\u3011": "]",  # right black lenticular bracket
    "\u3014": "[",  # left tortoise shell bracket
    "\u3015": "]",  # right tortoise shell bracket
    "\u3016": "[",  # left white lenticular bracket
    "\u3017": "]",  # right white lenticular bracket
    "\u301a": "[",  # left white square bracket
    "\u301b": "]",  # right white square bracket
    "\u27e6": "[",  # mathematical left white square bracket
    "\u27e7": "]",  # mathematical right white square bracket
    "\u2045": "[",  # left square bracket with quill
    "\u2046": "]",  # right square bracket with quill
    "\u2039": "<",  # single left-pointing angle quotation mark
    "\u203a": ">",  # single right-pointing angle quotation mark
    "\u00ab": "<<",  # left-pointing double angle quotation mark
    "\u00bb": ">>",  # right-pointing double angle quotation mark
    "\u2329": "<",  # left-pointing angle bracket
    "\u232a": ">",  # right-pointing angle bracket
    "\u3008": "<",  # left angle bracket
    "\u3009": ">",  # right angle bracket
    "\u276e": "<",  # heavy left-pointing angle quotation mark ornament
    "\u276f": ">",  # heavy right-pointing angle quotation mark ornament
    "\u02c2": "<",  # modifier letter left arrowhead
    "\u02c3": ">",  # modifier letter right arrowhead
}
_SKELETON_CACHE: dict[str, str] = {}

# Markdown a line may start with before a marker: quotes, bullets, emphasis, headings, numbers.
_PREFIX: Final = r"(?:[ >*+#_~`-]|\d{1,9}[.)])*"
_SKELETON_SYSTEM: Final = re.compile(r"(?m)^" + _PREFIX + r"(system *[*_`]* *:)")
_SKELETON_BRACKET: Final = re.compile(
    r"(?m)^" + _PREFIX + r"(\[ *(?:(system) *message|inter *-? *session *message) *\])"
)
# The skeleton spells "l" as "i" (see _CONFUSABLES): "openciaw", "internai", "chiid", "resuit".
_SKELETON_DELIMITER: Final = re.compile(
    r"(?:< *){2,}(begin|end)[ _-]*"
    r"(?:openciaw[ _-]*internai[ _-]*(context)|untrusted[ _-]*chiid[ _-]*resuit)(?: *>){2,}"
)
_ASCII_BRACKET_INNER: Final = re.compile(r"\[([ -Z\\^-~]*)\]")


def _char_skeleton(char: str) -> str:
    cached = _SKELETON_CACHE.get(char)
    if cached is not None:
        return cached
    if char in _LINE_BREAKS:
        piece = "\n"
    elif char.isspace() or char in _BLANKS:
        piece = " "
    else:
        parts: list[str] = []
        for part in unicodedata.normalize("NFKD", char):
            if unicodedata.category(part) in ("Mn", "Me", "Cf"):
                continue
            if part.isspace():
                parts.append(" ")
                continue
            mapped = _CONFUSABLES.get(part)
            if mapped is None:
                lowered = part.lower()
                mapped = _CONFUSABLES.get(lowered, lowered)
            parts.append(mapped)
        piece = "".join(parts)
    if len(_SKELETON_CACHE) < 65_536:
        _SKELETON_CACHE[char] = piece
    return piece


def _skeleton(text: str) -> tuple[str, list[int] | None]:
    """The skeleton of ``text`` and, for each skeleton character, the index of the original
    character it came from (None when every character maps to exactly one: the same index)."""
    pieces = {char: _char_skeleton(char) for char in set(text)}
    if all(len(piece) == 1 for piece in pieces.values()):
        return text.translate({ord(char): piece for char, piece in pieces.items()}), None
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        piece = pieces[char]
        chars.append(piece)
        origin.extend([index] * len(piece))
    return "".join(chars), origin


def _might_hold_marker(text: str) -> bool:
    """False only when no marker look-alike can occur (a fast path for plain ASCII text)."""
    if not text.isascii():
        return True
    lowered = text.lower()
    return "system" in lowered or "nter" in lowered or "<" in lowered


def _marker_replacements(text: str) -> list[tuple[int, int, str]]:
    """The spans of ``text`` holding marker look-alikes and their replacements, in order."""
    skeleton, origin = _skeleton(text)
    found: list[tuple[int, int, str]] = []

    def span(match: re.Match[str], group: int) -> tuple[int, int]:
        if origin is None:
            return match.start(group), match.end(group)
        return origin[match.start(group)], origin[match.end(group) - 1] + 1

    for match in _SKELETON_SYSTEM.finditer(skeleton):
        found.append((*span(match, 1), "System (untrusted):"))
    for match in _SKELETON_BRACKET.finditer(skeleton):
        start, end = span(match, 1)
        plain = _ASCII_BRACKET_INNER.fullmatch(text, start, end)
        if plain is not None:
            replacement = f"({plain.group(1)})"
        elif match.group(2):
            replacement = "(System Message)"
        else:
            replacement = "(Inter-session message)"
        found.append((start, end, replacement))
    for match in _SKELETON_DELIMITER.finditer(skeleton):
        edge = "BEGIN" if match.group(1) == "begin" else "END"
        kind = "OPENCLAW_INTERNAL_CONTEXT" if match.group(2) else "UNTRUSTED_CHILD_RESULT"
        found.append((*span(match, 0), f"[[{kind}_{edge}]]"))
    found.sort()
    kept: list[tuple[int, int, str]] = []
    for start, end, replacement in found:
        if kept and start < kept[-1][1]:
            continue  # overlaps an earlier marker, which is rewritten already
        kept.append((start, end, replacement))
    return kept


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

    * internal-context and child-result delimiters, anywhere in the text, become
      ``[[OPENCLAW_INTERNAL_CONTEXT_BEGIN]]``, ``[[OPENCLAW_INTERNAL_CONTEXT_END]]``,
      ``[[UNTRUSTED_CHILD_RESULT_BEGIN]]``, ``[[UNTRUSTED_CHILD_RESULT_END]]``;
    * a line starting with ``System:`` gets ``System (untrusted):`` in place of the word and
      its colon (system-event lines are ``System: [...]``, session-updates.ts);
    * a line starting with ``[System Message]`` or ``[Inter-session message]`` gets parentheses
      instead of brackets: ``(System Message)``, ``(Inter-session message)`` (subagent-announce.ts,
      google.ts); when the bracketed words are plain ASCII their spelling is kept
      (``[inter-session message]`` becomes ``(inter-session message)``).

    Look-alikes are rewritten the same way, to exactly those canonical texts: markers are found
    in a skeleton of the text (UTS #39 idea) where each character is compatibility-decomposed
    (NFKD, so full-width letters and colons, the long s and the like become ASCII) with combining
    marks dropped, format characters (category Cf: U+200B, U+FEFF, U+2060, U+180E, U+200E ...)
    removed, every Unicode space (U+00A0, U+2003, U+3000, U+202F, U+2007, U+1680 ...) one space
    in any number, lower-cased, and Cyrillic/Greek/small-capital homoglyphs of the marker
    letters, dash, colon and bracket look-alikes (U+3010/U+3011, U+3014/U+3015, guillemets ...)
    mapped to ASCII.
    A line may start with spaces and markdown (``>``, ``-``, ``*``, ``+``, ``#``, ``**``, ``1.``)
    before the marker, spaces may surround the marker's words, colon and brackets, and the
    delimiters may be spaced, lower-cased or use ``-``/spaces for ``_``. Only the marker's own
    characters are replaced (from its first letter or bracket to its colon or closing bracket);
    the prefix, the rest of the line and all other text keep their exact characters. Applying it
    twice gives the same result as once. A line starts at the start of the text and after any
    character a tokenizer or renderer may treat as a line break (``\\n``, ``\\r``, ``\\v``,
    ``\\f``, U+001C-U+001E, U+0085, U+2028, U+2029).
    """
    text = escape_internal_context_delimiters(text)
    if not _might_hold_marker(text):
        return text
    replacements = _marker_replacements(text)
    if not replacements:
        return text
    pieces: list[str] = []
    position = 0
    for start, end, replacement in replacements:
        pieces.append(text[position:start])
        pieces.append(replacement)
        position = end
    pieces.append(text[position:])
    return "".join(pieces)
