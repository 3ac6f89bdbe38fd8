"""``build_session_context`` on plain entry dicts (spec hot-path §1.6)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from clawctx import _core


class _Omitted:
    """Marks an argument that was not passed (distinct from ``None``)."""

    def __repr__(self) -> str:
        return "<omitted>"


_OMITTED: Final = _Omitted()


def build_session_context(
    entries: Iterable[Mapping[str, Any]],
    leaf_id: str | _Omitted | None = _OMITTED,
) -> _core.SessionContext:
    """Build the context (messages, thinking level, model) of a list of session entries.

    ``entries`` are session entries in file order, header excluded. ``leaf_id`` picks the leaf:
    omitted means the last entry, ``None`` gives the empty context, and an id that is not in
    ``entries`` falls back to the last entry, exactly as pi's ``buildSessionContext`` does.
    """
    if isinstance(leaf_id, _Omitted):
        return _core.build_session_context(entries, None, False)
    return _core.build_session_context(entries, leaf_id, True)
