"""Memory that comes back: how the process allocator is set up for worlds, and giving freed memory back.

A world that is a whole copy of its template (where copy-on-write worlds are off: ``fixtures/cow.py``) is one
fixture-sized SQLite buffer (8 MB for finance). glibc's malloc serves requests above a
*dynamic* mmap threshold from its heaps instead of fresh mappings; the threshold climbs to the size of the
largest mapping freed, so after the first released world every world lands in the heaps, where the buffer
SQLite doubles on its first growth fragments them and freed worlds are never returned (measured: 1.7× the
fixture per written world, 1.5 GB resident after releasing 200 worlds). A fixed threshold keeps every
world buffer in a mapping of its own, freed to the system on release (1.13× the fixture per written world);
:func:`trim` then returns what small allocations left in the heaps. Elsewhere than glibc both are no-ops.

Python's own object allocator (pymalloc) is the other half. It carves small objects out of 1 MiB arenas and
returns an arena only when every object in it is gone; a burst of 500 episodes opens a hundred more, and a
few thousand objects that outlive the burst (kept records, caches, sessions) pin most of them: measured
after releasing 500 episodes, 66 MB of live objects held 132 arenas where the idle server's same 66 MB held
65, so the server stayed at 1.6-1.8× its idle size. With ``PYTHONMALLOC=malloc`` those objects live in
glibc's heaps instead, which :func:`trim` returns page by page: 1.1-1.2× idle. It costs the server 3-14% more
CPU per episode (``bench/allocator.py``), so it is what a long-lived HTTP server runs with
(:func:`use_system_allocator`, ``serve --allocator system``, the default), and a throughput-bound one can
keep pymalloc (``--allocator python``). The variable only takes effect at interpreter start, hence the re-exec.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import os
import sys
import threading
from collections.abc import Mapping, Sequence

__all__ = ["configure", "trim", "collect_and_trim", "use_system_allocator", "system_allocator", "MMAP_THRESHOLD"]

log = logging.getLogger("toolgym.malloc")

MMAP_THRESHOLD = 1 << 20
"""Allocations of at least this many bytes get a mapping of their own (glibc ``M_MMAP_THRESHOLD``)."""

ARENAS = 2
"""glibc malloc arenas (``M_ARENA_MAX``): the event loop's and the worker threads' — few threads allocate here,
and every extra arena is a heap of its own to fragment."""

_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
_lock = threading.Lock()
_libc: ctypes.CDLL | None = None
_configured = False


def _glibc() -> ctypes.CDLL | None:
    global _libc
    if _libc is None:
        name = ctypes.util.find_library("c")
        try:
            libc = ctypes.CDLL(name or "libc.so.6")
            libc.malloc_trim  # noqa: B018 - glibc only: musl and macOS have no malloc_trim
            libc.mallopt  # noqa: B018
        except (OSError, AttributeError):
            return None
        _libc = libc
    return _libc


def configure(*, arenas: bool = False) -> bool:
    """Fix glibc's mmap threshold (once per process); returns whether the allocator is glibc.

    Fixing it also turns off glibc's dynamic threshold, which is what lets freed worlds stay in the heaps.

    Args:
        arenas: also cap glibc's arenas at :data:`ARENAS`. Only a process that is a toolgym server should
            ask for it (``serve``): a library user — an RL trainer with many threads — keeps its own.
    """
    global _configured
    with _lock:
        libc = _glibc()
        if libc is None:
            return False
        if not _configured:
            if not libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD):
                log.warning("mallopt failed; freed worlds may stay resident")
            _configured = True
        if arenas and not libc.mallopt(_M_ARENA_MAX, ARENAS):
            log.warning("mallopt(M_ARENA_MAX) failed")
        return True


def trim() -> bool:
    """Return free heap memory to the system (glibc ``malloc_trim``); returns whether anything was released.

    It walks every arena (~10-20 ms after a large release): call it from a worker thread on a server.
    """
    libc = _glibc()
    if libc is None:
        return False
    return bool(libc.malloc_trim(0))


def collect_and_trim() -> bool:
    """A full garbage collection, then :func:`trim`; returns whether memory went back to the system.

    Why: sessions and tasks of finished episodes die in reference cycles (exceptions, task groups) that
    only a full collection frees, and a full one runs rarely on its own; measured after releasing 500
    episodes: 24 MB of such garbage. It blocks the caller for a full collection (tens of ms): run it when
    many episodes were released, not per episode.
    """
    gc.collect()
    return trim()


def system_allocator() -> bool:
    """Whether Python objects are allocated by the C library's malloc (``PYTHONMALLOC=malloc``) in this process."""
    return os.environ.get("PYTHONMALLOC", "").startswith("malloc")


def use_system_allocator(argv: Sequence[str] | None = None, environment: Mapping[str, str] | None = None) -> None:
    """Run this process again — same pid, interpreter and arguments — with ``PYTHONMALLOC=malloc``.

    Returns without doing anything when ``PYTHONMALLOC`` is already set (to anything: the operator's choice
    stands), when the allocator is not glibc's (nothing would trim), or when the command line cannot be
    replayed. Call it before the process has done anything it would not redo: it never returns otherwise.

    Args:
        argv: the command line to replay (default ``sys.orig_argv``); the caller may drop a secret from it.
        environment: the new image's environment (default ``os.environ``); inheritable descriptors are kept.
    """
    if os.environ.get("PYTHONMALLOC") or not sys.platform.startswith("linux") or _glibc() is None:
        return
    argv = list(argv if argv is not None else getattr(sys, "orig_argv", []) or [])
    if not argv or not sys.executable:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    base = os.environ if environment is None else environment
    os.execve(sys.executable, [sys.executable, *argv[1:]], {**base, "PYTHONMALLOC": "malloc"})
