"""Stopping a local Ray cluster this process started, with no worker left behind.

``ray.shutdown()`` stops the local raylet, which normally takes its workers with it. An actor that Ray was
restarting (``max_restarts``) as the cluster went down can outlive it: its process is reparented to init, idle,
holding its memory (~150 MB for an environment actor) until someone kills it by hand. Every worker carries its
raylet's pid in its environment (``RAY_RAYLET_PID``), so the ones of this cluster are found exactly — never a
worker of another cluster on the same machine.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from pathlib import Path

__all__ = ["leftover_workers", "shutdown_local"]

log = logging.getLogger("toolgym.ray")

_GRACE = 1.0
"""Seconds a worker of the stopped cluster gets to exit on its own before it is killed."""


def _raylet_pid() -> int | None:
    """The pid of the raylet this process started (None: not started here, or Ray's internals moved)."""
    import ray  # here, not at the top: this module is importable without the ray extra

    try:
        node = ray._private.worker._global_node  # noqa: SLF001 - the only handle on the local node's processes
        return int(node.all_processes["raylet"][0].process.pid)
    except (AttributeError, KeyError, IndexError, TypeError, ValueError):
        return None


def leftover_workers(raylet: int) -> list[int]:
    """Pids of this user's processes whose environment names ``raylet`` as their raylet (Linux ``/proc``)."""
    marker = f"RAY_RAYLET_PID={raylet}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:  # gone meanwhile, or another user's
            continue
    return found


def shutdown_local() -> None:
    """``ray.shutdown()``, then kill any worker of the local cluster this process started that outlived it."""
    import ray

    raylet = _raylet_pid()
    ray.shutdown()
    if raylet is None or not Path("/proc").is_dir():
        return
    for pid in _left_after(raylet, _GRACE):
        log.warning("a Ray worker (pid %d) outlived its local cluster; killing it", pid)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    _left_after(raylet, _GRACE)  # until the killed ones are gone (a dead process's environment reads empty)


def _left_after(raylet: int, seconds: float) -> list[int]:
    """The workers of ``raylet`` still running once none is, or once ``seconds`` have passed."""
    deadline = time.monotonic() + seconds
    while (left := leftover_workers(raylet)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left
