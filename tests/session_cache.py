"""What one test session builds once and every pytest-xdist worker shares: folders built under a file lock.

The suite runs on several workers (``-n auto``, pyproject's ``addopts``). Each worker is its own process with
its own ``tmp_path_factory`` base (``<session>/popen-gwN``), so a session-scoped fixture would otherwise be
built once per worker. :func:`build_once` builds a folder once per session in the folder all workers share
(``<session>``), under an exclusive ``flock`` — the first worker builds, the others wait and reuse it. A
build that fails leaves nothing behind, so the next worker tries again and reports its own error.

Caches that outlive the session (the adapters' virtual environments, npm tools, sample databases) use the
same lock pattern in their own folders (``tests/integrations/venvs.py``, ``tests/new/sample_dbs.py``).
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

__all__ = ["build_once", "session_root", "worker_id"]


def worker_id() -> str:
    """This process's xdist worker name (``gw0``, ``gw1``, ...), or ``main`` when the suite runs in one process."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def session_root(factory: pytest.TempPathFactory) -> Path:
    """The temporary folder every worker of this session shares (a worker's own base folder is inside it)."""
    base = factory.getbasetemp()
    return base.parent if "PYTEST_XDIST_WORKER" in os.environ else base


def build_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]) -> Path:
    """The folder ``<session>/shared/name``, made by ``build(folder)`` the first time any worker asks for it.

    ``build`` receives an empty folder and fills it; it runs once per session (per ``name``), whichever worker
    asks first, while the others wait on the lock. ``name`` must say everything the content depends on.
    """
    shared = session_root(factory) / "shared"
    shared.mkdir(parents=True, exist_ok=True)
    folder = shared / name
    ready = shared / f"{name}.ready"  # beside the folder, never in it: the folder holds only what build() made
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if ready.exists():
            return folder
        shutil.rmtree(folder, ignore_errors=True)  # a build that failed half-way is never reused
        folder.mkdir()
        try:
            build(folder)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        ready.write_text(worker_id())
        return folder
