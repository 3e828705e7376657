"""A private event loop in a daemon thread, for calling toolgym's async client from TRL's synchronous hooks.

TRL calls an environment's ``reset``, tools and ``get_reward`` from its training loop (plain functions); the
toolgym client is async and its HTTP connections belong to the loop that made them. One loop per process runs
every call, so connections are reused across rollouts and never cross loops.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run"]

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _running_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="toolgym-trl", daemon=True).start()
            _loop = loop
        return _loop


def run(coroutine: Coroutine[Any, Any, T], timeout: float | None = 600.0) -> T:
    """Run ``coroutine`` on the private loop and return its result (its exception is raised here).

    Raises:
        RuntimeError: called from the private loop itself (it would wait on itself forever).
    """
    loop = _running_loop()
    try:
        current: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        current = None
    if current is loop:
        coroutine.close()
        raise RuntimeError("toolgym_trl.portal.run called from its own event loop")
    return asyncio.run_coroutine_threadsafe(coroutine, loop).result(timeout)
