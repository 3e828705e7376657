"""Memory that comes back: how the process allocator is set up for worlds, and giving freed memory back.

A world is one fixture-sized SQLite buffer (8 MB for finance). glibc's malloc serves requests above a
*dynamic* mmap threshold from its heaps instead of fresh mappings; the threshold climbs to the size of the
largest mapping freed, so after the first released world every world lands in the heaps, where the buffer
SQLite doubles on its first growth fragments them and freed worlds are never returned (measured: 1.7× the
fixture per written world, 1.5 GB resident after releasing 200 worlds). A fixed threshold keeps every
world buffer in a mapping of its own, freed to the system on release (1.13× the fixture per written world);
:func:`trim` then returns what small allocations left in the heaps. Elsewhere than glibc both are no-ops.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import threading

__all__ = ["configure", "trim", "MMAP_THRESHOLD"]

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
