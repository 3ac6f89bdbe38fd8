"""Which behaviour clawctx follows: its safe default, or a recorded upstream release exactly.

By default every entry point that produces what is sent to a model returns a request the
provider accepts, for every history (the request guard, ``_core.guard_request``): where the
recorded release's output is already valid that output is returned unchanged, otherwise the
history is repaired as later OpenClaw releases do. Under :func:`compat` every function behaves
exactly as the named release does, invalid requests included, which is what the conformance
suites check.

The setting is a :class:`contextvars.ContextVar`: it holds for the current thread or asyncio
task and what they start (``asyncio.to_thread`` and tasks copy the context), never for other
threads running at the same time.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final, Literal

#: The upstream releases clawctx reproduces exactly: OpenClaw 2026.3.13 with pi-mono 0.58.3.
KNOWN_RELEASES: Final = ("openclaw-2026.3.13",)

#: A name of :data:`KNOWN_RELEASES`.
Release = Literal["openclaw-2026.3.13"]

_active: ContextVar[str | None] = ContextVar("clawctx_compat", default=None)


def check_release(release: str | None) -> str | None:
    """``release`` when it is ``None`` or a known release; raises :class:`ValueError` naming the
    known ones otherwise."""
    if release is not None and release not in KNOWN_RELEASES:
        known = ", ".join(repr(r) for r in KNOWN_RELEASES)
        raise ValueError(f"unknown compat release {release!r}; known releases: {known}")
    return release


@contextmanager
def compat(release: str | None) -> Iterator[None]:
    """Within the block, every clawctx function behaves exactly as ``release`` does
    (``"openclaw-2026.3.13"``: OpenClaw 2026.3.13 with pi-mono 0.58.3), including the requests
    a provider rejects. ``None`` restores the safe default inside an outer block. Per-call
    options (``safe=...``, ``provider_safe=...``) still override it. Also usable as a
    decorator. Raises :class:`ValueError` for an unknown release, listing the known ones.

    >>> import clawctx
    >>> with clawctx.compat("openclaw-2026.3.13"):
    ...     clawctx.current_compat()
    'openclaw-2026.3.13'
    """
    token = _active.set(check_release(release))
    try:
        yield
    finally:
        _active.reset(token)


def current_compat() -> str | None:
    """The release in force (:func:`compat`), or ``None`` for the safe default."""
    return _active.get()


def resolve_safe(safe: bool | None) -> bool:
    """Whether the request guard runs: ``safe`` when given, else unless a :func:`compat`
    release is in force."""
    if safe is not None:
        return safe
    return _active.get() is None
