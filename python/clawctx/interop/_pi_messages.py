"""clawctx's own shape: a ``Transcript`` or a list of pi message dicts (pi-mono 0.58.3
`packages/ai/src/types.ts`), read as it is; blocks carried from another format
(``"type": "foreign"``, see ``clawctx.interop._carried``) and provider compaction blocks
(``"type": "compaction"``, as ``clawctx.wire.parse_response`` stores them) included."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from clawctx.interop import _common as c

FORMAT = "pi"
_BLOCKS = {
    "user": ("text", "image", "foreign"),
    "assistant": ("text", "thinking", "toolCall", "foreign", "compaction"),
}


def claims(element: object) -> bool:
    if not isinstance(element, Mapping) or element.get("role") not in c.PI_ROLES:
        return False
    role, content = element["role"], element.get("content")
    if role in _BLOCKS and isinstance(content, list):
        return all(
            isinstance(b, Mapping)
            and b.get("type") in _BLOCKS[role]
            and (b.get("type") != "image" or "data" in b or "url" in b)
            # pi's compaction block holds the provider's block under `raw`; a bare one is
            # Anthropic's own (carried from that format).
            and (b.get("type") != "compaction" or isinstance(b.get("raw"), Mapping))
            for b in content
        )
    if role == "assistant":
        return False
    return role != "toolResult" or "toolCallId" in element


def read(messages: Sequence[Any]) -> tuple[list[c.JsonDict], list[int]]:
    for index, message in enumerate(messages):
        if not claims(message):
            raise ValueError(f"{c.where(index, message)} is not a pi message")
    return [dict(m) for m in messages], list(range(len(messages)))


def write(messages: Iterable[Mapping[str, Any]]) -> list[c.JsonDict]:
    return [dict(m) for m in messages]
