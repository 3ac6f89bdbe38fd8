"""The session: ``Session`` (the native session plus compaction) and ``build_session_context``
on plain entry dicts (pi-mono 0.58.3 `packages/coding-agent/src/core/session-manager.ts`,
``buildSessionContext``).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, overload

from clawctx import _core

# One test for an async summarizer, shared with compact_session.
from clawctx.history.compaction import (
    CompactionResult,
    _is_async_callable,
    _nothing,
    compact_session,
)

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["Session", "build_session_context"]


class Session(_core.Session):
    """A pi/OpenClaw session: header, entries, tree and leaf, bound to its JSONL file.

    Everything but :meth:`compact` is native (``clawctx._core.Session``); ``open``, ``create``
    and ``in_memory`` return instances of this class. ``compact`` is written in Python because
    it calls the caller's summarizer, which may be async and only Python can await.

    **Lazy open.** ``Session.open(path, lazy=True)`` reads the file from its end only as far as
    the last entry's messages reach (back to the latest compaction's first kept entry: the last
    few MB of a long session, a few ms at any size; ``is_lazy``, ``lazy_bytes_read``). It then
    behaves as a full open:

    * without reading more: ``context_messages()``, ``leaf_id``, ``session_id``, ``header``,
      ``version``, ``refresh()`` (appended bytes only; a truncated, replaced or rewritten file
      is loaded in full, as on any session), every ``append_*`` (same lock, the leaf as
      parent; a new id is also checked against the bytes not read, by a byte search),
      ``branch``/``get_entry`` of an entry held, ``reset_leaf``;
    * reading further back only as far as needed: ``context()`` (the thinking level and model
      may be further back), ``latest_custom_entry`` (back to the newest match);
    * loading the whole file first: everything else (``entries``, ``len``, ``tree``,
      ``labels``, ``skipped_lines``, ``name``, ``children``, ``branch_path``, an id not held,
      compaction, ``load_in_full()``). The leaf a ``branch``/``reset_leaf`` moved is kept when
      the file did not change since; entries another writer appended since the last
      ``refresh()`` are loaded with the rest, as ``refresh()`` would.

    A file that needs what only a full open does (migration, a missing or damaged header) or
    whose messages reach its first entry is opened in full. Damaged lines are reported in
    ``skipped_lines`` once loaded; lines never read are not checked.
    """

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        on_invalid_header: Literal["error", "reset"] = "error",
        rewrite_migrated: bool = False,
        read_only: bool = False,
        fsync: bool = True,
        lock_timeout: float = 10.0,
        now_ms: int | Callable[[], int] | None = None,
        id_factory: Callable[[], str] | None = None,
        session_id: str | None = None,
        cwd: str | None = None,
        lazy: bool = False,
    ) -> Self:
        """Opens a session file; see ``clawctx._core.Session.open`` for the JSONL options.

        **An OpenClaw SQLite store.** When ``path`` is a SQLite database (an
        ``openclaw-agent.sqlite``; any file not named ``*.jsonl`` is checked for SQLite's magic
        bytes), ``session_id`` names the window to open and the result is what
        ``open_store(path).open(session_id)`` gives: a read-only session of that window's
        records (``now_ms``, ``id_factory`` and ``lazy`` apply; the store is never written).
        Without ``session_id`` a store raises :class:`clawctx.errors.StoreError`.
        """
        if not os.fspath(path).endswith(".jsonl"):
            # Imported here: the store module builds its sessions with this class.
            from clawctx.history.store import is_store, open_store

            if is_store(path):
                from clawctx.errors import StoreError

                if session_id is None:
                    name = os.fspath(path)
                    raise StoreError(
                        f"{name}: an OpenClaw session store holds many sessions; "
                        "pass session_id= (open_store(path).sessions() lists them)",
                        path=name,
                    )
                with open_store(path) as store:
                    opened = store.open(session_id, now_ms=now_ms, id_factory=id_factory, lazy=lazy)
                return opened  # type: ignore[return-value]
        return super().open(
            path,
            on_invalid_header=on_invalid_header,
            rewrite_migrated=rewrite_migrated,
            read_only=read_only,
            fsync=fsync,
            lock_timeout=lock_timeout,
            now_ms=now_ms,
            id_factory=id_factory,
            session_id=session_id,
            cwd=cwd,
            lazy=lazy,
        )

    @overload
    def compact(
        self,
        summarize: Callable[[_core.SummaryRequest], Awaitable[str]],
        settings: _core.CompactionSettings | Mapping[str, Any] | None = None,
        custom_instructions: str | None = None,
    ) -> Coroutine[Any, Any, CompactionResult | None]: ...
    @overload
    def compact(
        self,
        summarize: Callable[[_core.SummaryRequest], str],
        settings: _core.CompactionSettings | Mapping[str, Any] | None = None,
        custom_instructions: str | None = None,
    ) -> CompactionResult | None: ...
    @overload
    def compact(
        self,
        summarize: Callable[[_core.SummaryRequest], str | Awaitable[str]],
        settings: _core.CompactionSettings | Mapping[str, Any] | None = None,
        custom_instructions: str | None = None,
    ) -> CompactionResult | Coroutine[Any, Any, CompactionResult | None] | None: ...
    def compact(
        self,
        summarize: Callable[[_core.SummaryRequest], str | Awaitable[str]],
        settings: _core.CompactionSettings | Mapping[str, Any] | None = None,
        custom_instructions: str | None = None,
    ) -> CompactionResult | Coroutine[Any, Any, CompactionResult | None] | None:
        """Compacts the current branch (pi compaction.ts, ``compact``) with ``summarize``, the
        caller's summarizer (sync or async), and appends pi's compaction entry: see
        :func:`clawctx.history.compaction.compact_session`, which this calls.

        When the plan has nothing to summarize (no messages before the cut and no split-turn
        prefix, e.g. right after a compaction), ``summarize`` is not called and nothing is
        appended: this returns ``None`` (a coroutine resolving to ``None`` for an ``async``
        summarizer). pi-mono 0.58.3 would ask for a summary of an empty conversation and
        append it; clawctx does not spend a model call on that.
        """
        preparation = _core.prepare_compaction(self, settings)
        if (
            preparation is not None
            and not preparation.messages_to_summarize
            and not preparation.turn_prefix_messages
        ):
            return _nothing() if _is_async_callable(summarize) else None
        return compact_session(self, summarize, settings, custom_instructions)


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
