"""Health that answers whatever the load: a listener in a process of its own, fed by the event loop's heartbeat.

``GET /control/health`` is served by the event loop, like every MCP request; under hundreds of busy sessions
that loop is seconds behind (measured: 4.6-12.4 s at 500-1,000 sessions), so a liveness probe with a short
timeout would restart a healthy server and lose every episode. A thread of its own is not enough either:
it shares the interpreter lock, which the server's garbage collection holds for hundreds of milliseconds
at a time (measured: 690 ms at 500 sessions). So :class:`HealthProcess` runs the listener as a small child
process (``servers/health_server.py``, standard library only) on ``serve --health-port``: it shares
nothing with the server but a pipe, and answers within milliseconds.

What it answers is fed to it: :class:`Heartbeat` is a task on the loop that beats every ``INTERVAL`` and, at
each beat, sends the health snapshot (``Control.health``: counters only) down the pipe. A loop starved of CPU
beats late — one pass of its loop over hundreds of sessions' callbacks took ~30 s on 2 busy cores, and a
listener that took a late beat for a stuck loop answered 503 ``stalled`` to 78 of 835 probes: a liveness probe
would have restarted a server that was only slow. So late beats are not enough to call a loop stalled:

- :class:`LoopWatch`, a thread of the server, sends the snapshot itself whenever the beats are late, so the
  listener keeps hearing from a slow server, with ``loop.lag_ms`` telling how slow;
- :data:`PROGRESS` counts the loop's work (every request started and answered, ``servers/dropped.py``);
  ``stalled`` (HTTP 503) means no beat *and* no progress for ``stall_after`` seconds (``serve
  --stall-after``, default :data:`STALL_AFTER`): a loop stuck in one callback, or a process that does not run
  at all (the listener hears nothing from it). A slow loop that still answers requests is ``ok`` with its lag.

The child gets the SHA-256 of the control token, never the token, and exits when the server does (its end of
the pipe closes).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

__all__ = ["STALL_AFTER", "PROGRESS", "Progress", "HealthProcess", "Heartbeat", "LoopWatch"]

log = logging.getLogger("toolgym.health")

STALL_AFTER = 30.0
"""Seconds without a heartbeat after which the loop counts as stalled (health answers 503)."""

_SERVER = Path(__file__).with_name("health_server.py")


class Progress:
    """A count of the work the event loop did, ticked on the loop and read from any thread."""

    def __init__(self) -> None:
        self.value = 0

    def tick(self) -> None:
        """One more unit of work done (a request started or answered)."""
        self.value += 1


PROGRESS = Progress()
"""This process's loop progress (``servers/dropped.py`` ticks it for every HTTP request, at start and end)."""


class Heartbeat:
    """The event loop's pulse: how late its last beats were, and whether it still makes progress, from any thread.

    Args:
        on_beat: called on the loop after every beat (the HTTP server sends health to its listener there).
        stall_after: seconds without a beat and without progress after which the loop counts as stalled.
        progress: the loop's work counter.
    """

    INTERVAL = 0.1
    """Seconds between two beats (ten wake-ups a second: nothing next to a server's work)."""

    def __init__(
        self, on_beat: Callable[[], None] | None = None, *, stall_after: float = STALL_AFTER, progress: Progress = PROGRESS
    ) -> None:
        self.last = time.monotonic()
        """``time.monotonic()`` of the latest beat."""
        self.lag = 0.0
        """Seconds the latest beat came late."""
        self.on_beat = on_beat
        self.stall_after = stall_after
        self.progress = progress
        self._seen = (progress.value, self.last)
        """The progress count last seen, and when it was first seen at that value."""

    async def run(self) -> None:
        """Beat until cancelled (a task of the server's lifespan)."""
        while True:
            asked = time.monotonic()
            await anyio.sleep(self.INTERVAL)
            now = time.monotonic()
            self.lag = max(0.0, now - asked - self.INTERVAL)
            self.last = now
            if self.on_beat is not None:
                try:
                    self.on_beat()
                except Exception:  # health must never take the loop down
                    log.exception("sending health failed")

    def idle(self, now: float | None = None) -> float:
        """Seconds since the loop last made progress (a beat or a request), as far as anyone looked."""
        now = time.monotonic() if now is None else now
        value, since = self._seen
        if self.progress.value != value:
            since = now
            self._seen = (self.progress.value, since)
        return min(now - since, now - self.last)

    def state(self) -> dict[str, Any]:
        """``{"lag_ms", "stalled", "no_progress_ms"}``: the loop's lateness now (a loop blocked right now counts
        as late), how long it has made no progress, and whether that is longer than ``stall_after``: a loop
        that beats late but still serves requests is slow, not stalled."""
        now = time.monotonic()
        silent = now - self.last
        lag = max(self.lag, silent - self.INTERVAL)
        idle = self.idle(now)
        return {"lag_ms": round(lag * 1000, 1), "no_progress_ms": round(idle * 1000, 1), "stalled": idle > self.stall_after}


class LoopWatch:
    """A thread that sends health for the loop while the loop beats late (``servers/health.py``'s docstring).

    Args:
        heartbeat: the loop's heartbeat.
        send: sends the current snapshot to the listener (callable from this thread).
    """

    INTERVAL = 0.25
    """Seconds between two looks at the loop."""

    LATE = 0.5
    """A beat this many seconds overdue, and this thread sends health in the loop's stead."""

    def __init__(self, heartbeat: Heartbeat, send: Callable[[], None]) -> None:
        self.heartbeat = heartbeat
        self.send = send
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="toolgym-loop-watch", daemon=True)

    def start(self) -> None:
        """Start watching."""
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (and wait for the thread)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self.INTERVAL):
            heartbeat = self.heartbeat
            heartbeat.idle()  # note progress as it happens, not only when someone asks
            if time.monotonic() - heartbeat.last > heartbeat.INTERVAL + self.LATE:
                try:
                    self.send()
                except Exception:  # noqa: BLE001 - a counter read mid-change: the next look sends again
                    log.debug("health from the watch thread failed", exc_info=True)


class HealthProcess:
    """``GET /health`` (and ``/control/health``) on a port served by a child process.

    Args:
        host: the interface (the server's).
        port: the port (0: any free one; ``url`` says which).
        token: the control token requests must carry (None: none); the child only gets its SHA-256.
        allowed_hosts: ``Host`` values served (entries ending in ``:*`` allow any port); None: any.
        stall_after: seconds without a snapshot after which the listener answers ``stalled`` (503).

    Raises:
        OSError: the child could not start or bind its port (its reason is in the message).
    """

    def __init__(
        self, host: str, port: int, *, token: str | None, allowed_hosts: list[str] | None = None, stall_after: float = STALL_AFTER
    ) -> None:
        read, self._write = os.pipe()
        try:
            self._child = subprocess.Popen(
                [sys.executable, "-I", str(_SERVER), "--host", host, "--port", str(port)],
                stdin=read,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                close_fds=True,
            )
        finally:
            os.close(read)
        settings = {
            "token_sha256": hashlib.sha256(token.encode()).hexdigest() if token is not None else None,
            "allowed_hosts": allowed_hosts,
            "interval": Heartbeat.INTERVAL,
            "stall_after": stall_after,
        }
        try:
            os.write(self._write, json.dumps(settings).encode() + b"\n")
        except BrokenPipeError:
            pass  # the child has already exited (its port was taken): its reason is on its stderr
        assert self._child.stdout is not None and self._child.stderr is not None
        first = self._child.stdout.readline().strip()
        if not first.isdigit():
            # Read the child's one line before closing its streams (closed first, reading them raised
            # "ValueError: read of closed file" instead of saying that the port is taken).
            reason = self._child.stderr.read().decode(errors="replace").strip().splitlines()
            self.stop()
            raise OSError(f"the health listener cannot serve {host}:{port}: {reason[-1] if reason else 'it exited'}")
        os.set_blocking(self._write, False)  # the loop never waits on the listener
        self._lock = threading.Lock()  # the loop and the watch thread both send (servers/health.py: LoopWatch)
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{int(first)}/health"
        """Where health is served."""
        self._broken = False

    def publish(self, snapshot: dict[str, Any]) -> None:
        """Send the latest health to the listener (dropped when the pipe is full: the next beat sends again)."""
        if self._broken:
            return
        line = json.dumps(snapshot, separators=(",", ":")).encode() + b"\n"
        with self._lock:
            if self._write < 0:
                return
            try:
                os.write(self._write, line)
            except BlockingIOError:
                pass
            except OSError as exc:  # the listener is gone
                self._broken = True
                log.warning("the health listener stopped (%s); %s no longer answers", exc, self.url)

    def stop(self) -> None:
        """Close the pipe (the child exits at its end) and reap the child; idempotent."""
        lock = getattr(self, "_lock", None)
        with lock if lock is not None else threading.Lock():
            if self._write >= 0:
                os.close(self._write)
                self._write = -1
        try:
            self._child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._child.kill()
            self._child.wait()
        for stream in (self._child.stdout, self._child.stderr):
            if stream is not None:
                stream.close()
