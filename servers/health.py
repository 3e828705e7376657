"""Health that answers whatever the load: a listener in a process of its own, fed by the event loop's heartbeat.

``GET /control/health`` is served by the event loop, like every MCP request; under hundreds of busy sessions
that loop is seconds behind (measured: 4.6-12.4 s at 500-1,000 sessions), so a liveness probe with a short
timeout would restart a healthy server and lose every episode. A thread of its own is not enough either:
it shares the interpreter lock, which the server's garbage collection holds for hundreds of milliseconds
at a time (measured: 690 ms at 500 sessions). So :class:`HealthProcess` runs the listener as a small child
process (``servers/health_server.py``, standard library only) on ``serve --health-port``: it shares
nothing with the server but a pipe, and answers within milliseconds.

What it answers is fed to it: :class:`Heartbeat` is a task on the loop that beats every ``INTERVAL`` and, at
each beat, sends the health snapshot (``Control.health``: counters only) down the pipe. A loop that is busy
sends late snapshots (``loop.lag_ms`` grows); a loop that has not beaten for ``STALL_AFTER`` seconds makes
the listener answer ``status: stalled`` with HTTP 503 — so a probe restarts a server whose loop is stuck,
never one that is merely busy. The child gets the SHA-256 of the control token, never the token, and exits
when the server does (its end of the pipe closes).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

__all__ = ["STALL_AFTER", "HealthProcess", "Heartbeat"]

log = logging.getLogger("toolgym.health")

STALL_AFTER = 30.0
"""Seconds without a heartbeat after which the loop counts as stalled (health answers 503)."""

_SERVER = Path(__file__).with_name("health_server.py")


class Heartbeat:
    """The event loop's pulse: how late its last beats were, readable from any thread.

    Args:
        on_beat: called on the loop after every beat (the HTTP server sends health to its listener there).
    """

    INTERVAL = 0.1
    """Seconds between two beats (ten wake-ups a second: nothing next to a server's work)."""

    def __init__(self, on_beat: Callable[[], None] | None = None) -> None:
        self.last = time.monotonic()
        """``time.monotonic()`` of the latest beat."""
        self.lag = 0.0
        """Seconds the latest beat came late."""
        self.on_beat = on_beat

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

    def state(self) -> dict[str, Any]:
        """``{"lag_ms", "stalled"}``: the loop's lateness now (a loop blocked right now counts as late) and
        whether it has not beaten for ``STALL_AFTER`` seconds."""
        silent = time.monotonic() - self.last
        lag = max(self.lag, silent - self.INTERVAL)
        return {"lag_ms": round(lag * 1000, 1), "stalled": silent > STALL_AFTER}


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
        os.write(self._write, json.dumps(settings).encode() + b"\n")
        assert self._child.stdout is not None
        first = self._child.stdout.readline().strip()
        if not first.isdigit():
            self.stop()
            reason = self._child.stderr.read().decode(errors="replace").strip().splitlines() if self._child.stderr else []
            raise OSError(f"the health listener could not serve {host}:{port}: {reason[-1] if reason else 'it exited'}")
        os.set_blocking(self._write, False)  # the loop never waits on the listener
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{int(first)}/health"
        """Where health is served."""
        self._broken = False

    def publish(self, snapshot: dict[str, Any]) -> None:
        """Send the latest health to the listener (dropped when the pipe is full: the next beat sends again)."""
        if self._broken:
            return
        try:
            os.write(self._write, json.dumps(snapshot, separators=(",", ":")).encode() + b"\n")
        except BlockingIOError:
            pass
        except OSError as exc:  # the listener is gone
            self._broken = True
            log.warning("the health listener stopped (%s); %s no longer answers", exc, self.url)

    def stop(self) -> None:
        """Close the pipe (the child exits at its end) and reap the child; idempotent."""
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
