"""Process limits of a long-running server: open files, and what running out of them logs.

Every HTTP connection is a file descriptor. asyncio logs "socket.accept() out of system resource" with a
full traceback each time ``accept`` fails with EMFILE/ENFILE, and under load that repeats many times a
second (measured: 0.8 MB of log in 4 s, 29 MB a minute). The server raises its soft limit to the hard one
at startup, and a filter turns the flood into one line per ``FD_LOG_INTERVAL`` seconds with a count.
"""

from __future__ import annotations

import logging
import resource
import threading
import time

__all__ = ["raise_open_files_limit", "install_accept_log_filter", "AcceptErrorFilter", "FD_LOG_INTERVAL", "MAX_SECONDS", "seconds_problem"]

FD_LOG_INTERVAL = 10.0
"""Seconds between two log lines about running out of file descriptors."""

MAX_SECONDS = 365 * 24 * 3600.0
"""The longest duration any command-line flag takes (a year): ``inf``, ``nan`` and ``1e308`` are mistakes, and
an absurd value overflows where it lands (a socket timeout: "timeout doesn't fit into C timeval")."""


def seconds_problem(value: float) -> str | None:
    """Why ``value`` is no usable number of seconds for a flag (None when it is): the one rule every
    duration flag of ``serve`` and ``run`` shares."""
    if value != value or not 0 < value <= MAX_SECONDS:  # NaN compares unequal to itself
        return f"must be a number of seconds > 0 and at most {MAX_SECONDS:.0f} (a year)"
    return None

_ACCEPT_FAILURE = "socket.accept() out of system resource"


def raise_open_files_limit() -> int:
    """Raise this process's soft ``RLIMIT_NOFILE`` to its hard limit; returns the soft limit now in force."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY:
            hard = max(soft, 1 << 20)
        if soft < hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            return hard
        return soft
    except (ValueError, OSError):  # not allowed here (containers, sandboxes): keep what we have
        return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class AcceptErrorFilter(logging.Filter):
    """Lets one "out of file descriptors" record through per interval, rewritten as one line with a count."""

    def __init__(self, interval: float = FD_LOG_INTERVAL) -> None:
        super().__init__()
        self.interval = interval
        self._last = float("-inf")
        self._suppressed = 0
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep other records untouched; throttle and shorten accept failures."""
        if _ACCEPT_FAILURE not in str(record.msg):
            return True
        with self._lock:
            now = time.monotonic()
            if now - self._last < self.interval:
                self._suppressed += 1
                return False
            suppressed, self._suppressed, self._last = self._suppressed, 0, now
        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        more = f" ({suppressed} more since the last report)" if suppressed else ""
        record.msg = (
            f"out of file descriptors (limit {limit}): new connections wait until clients close theirs{more}; "
            "raise the limit (ulimit -n) or lower the clients' concurrency"
        )
        record.args = ()
        record.exc_info = None
        record.exc_text = None
        return True


_installed: AcceptErrorFilter | None = None


def install_accept_log_filter() -> AcceptErrorFilter:
    """Attach the throttling filter to the ``asyncio`` logger (once per process)."""
    global _installed
    if _installed is None:
        _installed = AcceptErrorFilter()
        logging.getLogger("asyncio").addFilter(_installed)
    return _installed
