"""JavaScript string semantics the byte-exact ports need (JSON.stringify, String.prototype.trim,
UTF-16 lengths, as OpenClaw 2026.3.13 uses them e.g. in `src/auto-reply/reply/inbound-meta.ts`).

JS ``String.prototype.trim`` and the regex class ``\\s`` use ECMAScript's WhiteSpace and
LineTerminator set. Python's ``str.strip()`` and ``\\s`` differ: they also strip U+001C-U+001F
and U+0085 and keep U+FEFF, which changes output that runtimes compare byte for byte.
"""

from __future__ import annotations

from typing import Final

__all__ = ["JS_WHITESPACE", "JS_WHITESPACE_CLASS", "js_trim"]

#: ECMAScript WhiteSpace + LineTerminator, as a plain string (for ``str.strip``).
JS_WHITESPACE: Final = (
    "\t\n\v\f\r \xa0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
#: The same set as a regex character class: JS ``\s``.
JS_WHITESPACE_CLASS: Final = f"[{JS_WHITESPACE}]"


def js_trim(text: str) -> str:
    """``text.trim()`` as JavaScript does it."""
    return text.strip(JS_WHITESPACE)
