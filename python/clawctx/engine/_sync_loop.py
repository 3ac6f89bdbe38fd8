"""The event loop each thread's synchronous entry points run their coroutines on
(``ContextPipeline.prepare`` / ``record_turn``, ``HookRunner.*_sync``), kept from call to call.

``asyncio.run`` makes a loop (a socket pair, a selector) on every call, shuts the default
executor down (a thread started and joined), and on the main thread swaps the SIGINT handler in
and out; putting the old handler back has ``signal`` try it as an enum member, which formats a
``repr`` of the finished task and so of its whole result. On a warm ``prepare`` of a 10 MB
session that was about a third of the wall time (``benches/README.md``).

Layer: ``clawctx.engine`` (private).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import selectors
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_on_thread_loop"]

_T = TypeVar("_T")


class _SyncLoop:
    """One thread's kept loop, closed when this holder is collected (its thread ended)."""

    def __init__(self) -> None:
        # poll(2) rather than epoll: an epoll instance is shared with a forked child, and the
        # child closing its copy of the loop would unregister the parent's self-pipe from it
        # (the parent's loop would then miss every wake-up from another thread). poll keeps
        # its registrations in the process.
        if hasattr(selectors, "PollSelector"):
            self.loop: asyncio.AbstractEventLoop = asyncio.SelectorEventLoop(
                selectors.PollSelector()
            )
        else:
            self.loop = asyncio.new_event_loop()
        self.pid = os.getpid()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.loop.close()

    def __del__(self) -> None:
        self.close()


class _ThreadLoops(threading.local):
    holder: _SyncLoop | None = None


_THREAD_LOOP = _ThreadLoops()


def _thread_loop() -> asyncio.AbstractEventLoop:
    """This thread's kept loop, made on first use, after a close, and in a forked child."""
    holder = _THREAD_LOOP.holder
    if holder is None or holder.pid != os.getpid() or holder.loop.is_closed():
        if holder is not None:
            holder.close()  # a forked child's copy: closing it touches only the child's fds
        holder = _THREAD_LOOP.holder = _SyncLoop()
    return holder.loop


def _close_thread_loop() -> None:
    holder, _THREAD_LOOP.holder = _THREAD_LOOP.holder, None
    if holder is not None:
        holder.close()


# The main thread's loop is closed at exit (other threads' when they end).
atexit.register(_close_thread_loop)


def run_on_thread_loop(awaitable: Coroutine[Any, Any, _T]) -> _T:
    """Runs ``awaitable`` to completion on this thread's kept loop, as ``asyncio.run`` would:
    what it leaves running is cancelled and async generators are closed afterwards. A run
    stopped by ``KeyboardInterrupt`` or ``SystemExit`` closes the loop (the next call makes
    another). The caller checks that no loop is running in this thread."""
    loop = _thread_loop()
    try:
        return loop.run_until_complete(awaitable)
    except Exception:
        raise
    except BaseException:
        _cancel_left_over_tasks(loop)
        _close_thread_loop()
        raise
    finally:
        if not loop.is_closed():
            _cancel_left_over_tasks(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())


def _cancel_left_over_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """Cancels and awaits the tasks a run left on ``loop`` (``asyncio.run``'s clean-up)."""
    left = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not left:
        return
    for task in left:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
