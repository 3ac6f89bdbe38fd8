"""Whether a request keeps the provider's prompt cache: its system prompt, tools and the
messages of the previous request of the same session sent again byte for byte.

Providers cache the longest prefix a request shares with an earlier one (Anthropic in the
order tools, system, messages; OpenAI and Gemini on the serialized prefix). The pipeline
builds each request from the session, so by construction the next request extends the last:
the history is the previous history, the previous prompt and the turn's replies. The prefix
breaks only when something rewrote what was sent. :class:`CachePrefixTracker` remembers what
each session's last request sent and, when the next one does not extend it, names the cause
as a ``PipelineChange`` of stage ``"cache"``:

- ``compaction``: the history now starts at a (new) compaction summary;
- ``reset``: an OpenClaw ``reset`` entry was written since, or the session key now names
  another session (a reset to a new session file);
- ``prune``: a stage of this request dropped or shortened messages (the history limit, the
  context engine's ``assemble``);
- ``branch``: the session's leaf moved off the branch the last request was built on;
- ``system prompt`` / ``tools``: their bytes changed (a workspace file edited, a skill added,
  a hook's system context, another tool list);
- ``history rewritten``: anything else, with the index of the first message that differs.

Nothing is written anywhere; the tracker lives as long as the pipeline. Comparing costs one
native equality check of the shared prefix (no Python object per message); finding the
cause of a break reads the entries written since the last request.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from clawctx import _core

__all__ = ["CACHE_BREAK_CAUSES", "CachePrefixTracker"]

#: The causes a ``"cache"`` change names, in the order they are looked for.
CACHE_BREAK_CAUSES = (
    "compaction",
    "reset",
    "prune",
    "branch",
    "system prompt",
    "tools",
    "history rewritten",
)

#: Stages of a request that drop or shorten history messages on purpose.
_PRUNING_STAGES = frozenset({"limit_history", "context_engine", "prune"})

#: How far back from the leaf the entries written since the last request are searched.
_MAX_ENTRIES_BACK = 10_000


@dataclass(frozen=True)
class _Sent:
    session_id: str | None
    leaf_id: str | None
    system_prompt: str
    tools: tuple[dict[str, Any], ...] | None
    #: The history followed by the prompt message, as the request sent them.
    messages: _core.Transcript


class CachePrefixTracker:
    """What the last request of each session sent, and why the next one does not extend it.

    ``capacity`` bounds the sessions remembered (least recently prepared forgotten first)."""

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self._sent: OrderedDict[str, _Sent] = OrderedDict()

    def check(
        self,
        key: str | None,
        session: _core.Session,
        *,
        system_prompt: str,
        tools: tuple[dict[str, Any], ...] | None,
        history: _core.Transcript,
        prompt_message: dict[str, Any],
        stages: Sequence[str],
    ) -> list[str]:
        """Records this request as the session's last and returns the breaks from the previous
        one (``"<cause>: <detail>"``, empty when it extends it or there was none)."""
        sent = _Sent(
            session_id=session.session_id,
            leaf_id=session.leaf_id,
            system_prompt=system_prompt,
            tools=tools,
            messages=history + [prompt_message],
        )
        if key is None:
            return []
        previous = self._sent.pop(key, None)
        self._sent[key] = sent
        while len(self._sent) > self.capacity:
            self._sent.popitem(last=False)
        if previous is None:
            return []
        return _breaks(previous, sent, history, session, stages)


def _breaks(
    previous: _Sent,
    sent: _Sent,
    history: _core.Transcript,
    session: _core.Session,
    stages: Sequence[str],
) -> list[str]:
    breaks: list[str] = []
    if previous.session_id != sent.session_id:
        return [f"reset: the session key now names session {sent.session_id}"]
    old = previous.messages
    shared = len(old) <= len(history) and history[: len(old)] == old
    if not shared:
        index = _first_difference(old, history)
        breaks.append(_message_break(previous, history, session, stages, index))
    if previous.system_prompt != sent.system_prompt:
        offset = _first_difference(previous.system_prompt, sent.system_prompt)
        breaks.append(f"system prompt: changed at character {offset}")
    if previous.tools != sent.tools:
        breaks.append("tools: the tool definitions changed")
    return breaks


def _first_difference(old: Sequence[Any], new: Sequence[Any]) -> int:
    """The index of the first item that differs (the shorter length when one is a prefix of
    the other). A binary search over prefix equality: each step compares two slices natively
    (``str``, ``Transcript``), where a loop over the items built a dict per message (7 ms for
    200 messages on every request whose last message changed)."""
    low, high = 0, min(len(old), len(new))
    while low < high:
        middle = (low + high + 1) // 2
        if old[:middle] == new[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _message_break(
    previous: _Sent,
    history: _core.Transcript,
    session: _core.Session,
    stages: Sequence[str],
    index: int,
) -> str:
    where = f"message {index} of the previous request's {len(previous.messages)} differs"
    boundary = _boundary_since(session, previous.leaf_id)
    if boundary == "compaction" or (
        index == 0 and len(history) > 0 and history[0].get("role") == "compactionSummary"
    ):
        return f"compaction: the history now starts at a compaction summary ({where})"
    if boundary == "reset":
        return f"reset: an OpenClaw reset entry bounds the history ({where})"
    pruned = [stage for stage in stages if stage in _PRUNING_STAGES]
    if pruned:
        return f"prune: {', '.join(dict.fromkeys(pruned))} dropped messages ({where})"
    if boundary == "branch":
        return f"branch: the leaf moved off the previous request's branch ({where})"
    return f"history rewritten: {where}"


def _boundary_since(session: _core.Session, previous_leaf: str | None) -> str | None:
    """The newest compaction or reset entry on the path from the leaf back to the previous
    request's leaf, ``"branch"`` when that leaf is not on the path, else ``None``."""
    current = session.leaf_id
    for _ in range(_MAX_ENTRIES_BACK):
        if current is None or current == previous_leaf:
            return None if current == previous_leaf else "branch"
        entry = session.get_entry(current)
        if entry is None:
            return "branch"
        if entry.get("type") in ("compaction", "reset"):
            return str(entry["type"])
        parent = entry.get("parentId")
        current = parent if isinstance(parent, str) else None
    return None
