"""An event loop on a daemon thread, for synchronous APIs (Gymnasium) over toolgym's async core.

Why a thread of our own: a Gymnasium ``Env`` is called synchronously, often from a thread that already
runs an event loop (notebooks, async trainers), so ``asyncio.run`` per call is not an option; and the
in-memory MCP client keeps a task group open for the environment's life, which must be entered and left
by one task. anyio's :class:`BlockingPortal` gives both (``call`` and ``wrap_async_context_manager``);
the thread is a daemon so an environment nobody closed never keeps the interpreter from exiting.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import Any, TypeVar

import anyio
from anyio.from_thread import BlockingPortal

__all__ = ["LoopThread"]

T = TypeVar("T")


class LoopThread:
    """A running event loop on a daemon thread; call coroutines and hold async contexts from sync code."""

    def __init__(self, name: str = "toolgym-loop") -> None:
        ready: Future[BlockingPortal] = Future()

        async def serve() -> None:
            async with BlockingPortal() as portal:
                ready.set_result(portal)
                await portal.sleep_until_stopped()

        def main() -> None:
            try:
                anyio.run(serve)
            except BaseException as exc:  # noqa: BLE001 - delivered to the constructor, never lost
                if not ready.done():
                    ready.set_exception(exc)

        self._thread = threading.Thread(target=main, name=name, daemon=True)
        self._thread.start()
        self._portal = ready.result()

    def call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run ``fn(*args)`` on the loop and return its result (exceptions propagate)."""
        return self._portal.call(fn, *args)

    def hold(self, manager: AbstractAsyncContextManager[T]) -> AbstractContextManager[T]:
        """``manager`` as a synchronous context manager, entered and exited by one task of the loop."""
        return self._portal.wrap_async_context_manager(manager)

    def stop(self) -> None:
        """Stop the loop and join its thread (idempotent)."""
        if self._thread.is_alive():
            self._portal.call(self._portal.stop)
            self._thread.join()
