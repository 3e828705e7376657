"""Admission control for memory: refuse a new world the process cannot hold, rather than crash holding it.

Every episode holds a world: an in-memory SQLite database the size of its fixture when it is a whole copy
(finance: 8.5 MB; 1.1-1.5× that once written), under 1 MB when it is a copy-on-write view of a shared image.
A server under a memory limit it does not know about accepts creates until an allocation fails somewhere —
in the socket reader, in a session's task, in SQLite — and then answers 500s, drops sessions or aborts
(measured under ``ulimit -v 3G``: SIGABRT, or 206 creates answered 500 and 277 sessions dropped). So the
server knows its budget and what a world costs, and a create that would not fit is refused up front with
:class:`MemoryLimitReached` (HTTP 503 ``memory_limit``, ``/mcp``: JSON-RPC -32005) naming the limit and the
figures; live episodes keep their memory and keep working.

The budget (``serve --max-memory``) is, by default, the tightest limit the process is under:

- the cgroup's ``memory.max`` (a container's limit; what the OOM killer enforces), measured against the
  cgroup's ``memory.current`` less its inactive page cache (the working set, as container runtimes count it);
- the soft ``RLIMIT_AS`` (``ulimit -v``), measured against the process's address space (``VmSize``);
- else none: the server admits as many episodes as ``--max-episodes`` allows.

An explicit ``--max-memory`` is measured against the process's resident memory, with the shared template
images of copy-on-write worlds (``fixtures/cow.py``) counted once: RSS counts a shared page once per world
that maps it, which would refuse creates with memory to spare. What a create needs is the world's expected
size — what it will really use (:meth:`fixtures.fixture.Fixture.world_bytes`: :data:`WORLD_GROWTH` × the
fixture for a whole copy, its connection and written pages for a copy-on-write world) — plus a reserve for
everything else a busy server allocates (connections, sessions, requests, threads): :data:`RESERVE_FRACTION`
of the budget, at least :data:`MIN_RESERVE`. Usage is measured at each create (a ``/proc`` read,
microseconds); before a refusal freed heap memory is trimmed back to the system once (``servers/malloc.py``),
so memory that is free but not yet returned never refuses a create.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fixtures import cow
from fixtures.errors import EpisodeLimitReached
from fixtures.fixture import WORLD_GROWTH
from servers import malloc

__all__ = [
    "MemoryBudget",
    "MemoryLimitReached",
    "detect_memory_limit",
    "parse_size",
    "format_mb",
    "WORLD_GROWTH",
    "RESERVE_FRACTION",
    "MIN_RESERVE",
]

RESERVE_FRACTION = 0.15
"""Share of the budget kept for what is not a world: connections, sessions, requests, worker threads."""

MIN_RESERVE = 48 * 2**20
"""The reserve's floor in bytes."""

TRIM_INTERVAL = 1.0
"""Seconds between two trims made by refusals (a trim walks the heaps: ~10-20 ms)."""

CGROUP = Path("/sys/fs/cgroup")
_UNLIMITED_V1 = 1 << 60  # cgroup v1 writes "no limit" as a number near 2**63


class MemoryLimitReached(EpisodeLimitReached):
    """A new world would not fit in the server's memory budget (the create is refused; nothing else changes)."""


def parse_size(text: str) -> int:
    """``"512M"``, ``"2G"``, ``"1.5GiB"``, ``"1073741824"`` → bytes (binary units; ValueError on anything else)."""
    units = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    raw = text.strip().upper().removesuffix("B").removesuffix("I")
    number, unit = (raw[:-1], raw[-1]) if raw and raw[-1] in units else (raw, "")
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"{text!r} is not a size; give bytes or a number with K, M, G or T (e.g. 2G)") from None
    if not 0 < value < float("inf"):
        raise ValueError(f"a memory size must be positive, got {text!r}")
    return int(value * units[unit])


def format_mb(size: float) -> str:
    """Bytes as whole megabytes (``"1,536 MB"``)."""
    return f"{size / 2**20:,.0f} MB"


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _own_cgroup() -> Path | None:
    """This process's cgroup v2 folder (``/proc/self/cgroup``'s ``0::/path``), if it has one."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                folder = CGROUP / line[3:].lstrip("/")
                return folder if folder.is_dir() else CGROUP
    except OSError:
        pass
    return None


def _cgroup_limit() -> tuple[int, Callable[[], int]] | None:
    """The cgroup's memory limit and how to measure its working set, when a limit is set (v2, then v1)."""
    folder = _own_cgroup()
    for candidate in [folder, CGROUP] if folder is not None else [CGROUP]:
        limit = _read_int(candidate / "memory.max")  # "max" (no limit) reads as None
        if limit is not None and (candidate / "memory.current").exists():
            return limit, _working_set(candidate / "memory.current", candidate / "memory.stat", "inactive_file")
    v1 = CGROUP / "memory"
    limit = _read_int(v1 / "memory.limit_in_bytes")
    if limit is not None and limit < _UNLIMITED_V1 and (v1 / "memory.usage_in_bytes").exists():
        return limit, _working_set(v1 / "memory.usage_in_bytes", v1 / "memory.stat", "total_inactive_file")
    return None


def _working_set(usage: Path, stat: Path, inactive: str) -> Callable[[], int]:
    """The cgroup's usage less its inactive page cache (what the kernel reclaims before any OOM kill), as
    container runtimes count it: a container that read many files is not full."""

    def measure() -> int:
        used = _read_int(usage)
        if used is None:
            return resident()
        try:
            for line in stat.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == inactive and value.strip().isdigit():
                    return max(0, used - int(value))
        except OSError:
            pass
        return used

    return measure


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _statm(field: int) -> int:
    """Field ``field`` of ``/proc/self/statm`` in bytes (0: address space, 1: resident); 0 where unknown."""
    try:
        return int(Path("/proc/self/statm").read_text().split()[field]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def address_space() -> int:
    """Bytes of this process's address space (what ``RLIMIT_AS`` limits)."""
    return _statm(0)


def resident() -> int:
    """Bytes of this process's resident memory, each shared template image counted once (not once per world)."""
    shared = cow.shared_bytes()
    if not shared:
        return _statm(1)
    fields: dict[str, int] = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(("RssAnon:", "RssFile:", "RssShmem:")):
                key, value = line.split(":", 1)
                fields[key] = int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return _statm(1)
    if len(fields) < 3:
        return _statm(1)
    return fields["RssAnon"] + fields["RssFile"] + min(fields["RssShmem"], shared)


def detect_memory_limit() -> tuple[int, str, Callable[[], int]] | None:
    """The tightest memory limit this process is under: (bytes, what it is, how to measure usage), or None."""
    found: list[tuple[int, str, Callable[[], int]]] = []
    cgroup = _cgroup_limit()
    if cgroup is not None:
        limit, measure = cgroup
        found.append((limit, f"the cgroup's memory.max ({format_mb(limit)})", measure))
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft != resource.RLIM_INFINITY and soft > 0:
        found.append((soft, f"the address-space limit RLIMIT_AS (ulimit -v, {format_mb(soft)})", address_space))
    return min(found, key=lambda item: item[0]) if found else None


@dataclass
class MemoryBudget:
    """How much memory the server's worlds may take, and the check every create passes first."""

    limit: int
    """Bytes the measured usage may reach."""
    source: str
    """What set the limit, for messages (``--max-memory``, the cgroup's memory.max, RLIMIT_AS)."""
    measure: Callable[[], int]
    """Usage now, in bytes, as the limit counts it."""
    world_bytes: int = 0
    """Expected bytes of one more world (set from the fixture by :meth:`size_worlds`)."""
    refused: int = 0
    """Creates refused since start."""
    _trimmed_at: float = float("-inf")

    @classmethod
    def resolve(cls, max_memory: int | None) -> MemoryBudget | None:
        """The budget for ``--max-memory`` (bytes; None: automatic from the cgroup or RLIMIT_AS)."""
        if max_memory is not None:
            return cls(limit=max_memory, source=f"--max-memory ({format_mb(max_memory)})", measure=resident)
        detected = detect_memory_limit()
        return cls(*detected) if detected is not None else None

    @property
    def reserve(self) -> int:
        """Bytes kept free for everything that is not a world."""
        return max(MIN_RESERVE, int(self.limit * RESERVE_FRACTION))

    def size_worlds(self, fixture_bytes: int) -> None:
        """Learn what a world costs from its fixture's size, for worlds that are whole copies (the largest seen wins)."""
        self.cost_worlds(int(fixture_bytes * WORLD_GROWTH))

    def cost_worlds(self, world_bytes: int) -> None:
        """Learn what a world costs (``Fixture.world_bytes``: what it will really use; the largest seen wins)."""
        self.world_bytes = max(self.world_bytes, world_bytes)

    def admit(self, pending: int = 0) -> None:
        """Check there is room for one more world, besides ``pending`` worlds being made now.

        Raises:
            MemoryLimitReached: the world would not fit; the message names the limit and the figures.
        """
        need = self.world_bytes * (pending + 1) + self.reserve
        used = self.measure()
        if used + need <= self.limit:
            return
        now = time.monotonic()
        if now - self._trimmed_at >= TRIM_INTERVAL:  # freed memory not yet returned must not refuse anyone
            self._trimmed_at = now
            malloc.trim()
            used = self.measure()
            if used + need <= self.limit:
                return
        self.refused += 1
        raise MemoryLimitReached(
            f"memory limit reached: {format_mb(used)} in use of {self.source}; a new world needs about "
            f"{format_mb(self.world_bytes)}{f' (and {pending} more are being made)' if pending else ''}, with "
            f"{format_mb(self.reserve)} kept in reserve for the episodes already running; close or grade episodes "
            "(DELETE /control/episodes/ID), retry later, or give the server more memory (serve --max-memory)"
        )

    def snapshot(self) -> dict[str, int | str]:
        """Figures for ``/control/health``."""
        return {
            "used_bytes": self.measure(),
            "max_bytes": self.limit,
            "source": self.source,
            "world_bytes": self.world_bytes,
            "reserve_bytes": self.reserve,
            "refused": self.refused,
        }
