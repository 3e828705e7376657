"""The health listener's process: answers ``GET /health`` from the latest snapshot its server sent.

Started by ``servers/health.py`` as ``python -I servers/health_server.py --host H --port P`` (a file, not a
module of the ``servers`` package, so it imports the standard library only and starts in tens of
milliseconds). Its stdin is a pipe from the server: the first line is its settings (the SHA-256 of the
control token — never the token itself — allowed ``Host`` values, the beat interval and when a silent loop
counts as stalled), every later line a health snapshot, sent by the server's event loop at each heartbeat.
End of input (the server exited) ends this process. Its first line on stdout is the port it serves.

Why a process: a thread in the server shares its interpreter lock, which a busy server's garbage
collection holds for hundreds of milliseconds (measured: 690 ms at 500 sessions); this process shares
nothing but the pipe, so it answers within milliseconds whatever the server is doing; where it may (root,
``CAP_SYS_NICE``) it also raises its scheduling priority, so a server saturating every core does not delay it.
A snapshot older than the stall bound means the loop has stopped beating: ``status: stalled``, HTTP 503.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROOM = 16
"""Connections served at once; more are closed at once, never queued behind a silent client."""

TIMEOUT = 2.0
"""Seconds a connection may take to send its request."""


class _State:
    """Settings and the latest snapshot (written by the stdin reader, read by the request threads)."""

    def __init__(self) -> None:
        self.token_sha256: str | None = None
        self.allowed_hosts: list[str] | None = None
        self.interval = 0.1
        self.stall_after = 30.0
        self.snapshot: dict[str, Any] = {"status": "starting"}
        self.received = time.monotonic()
        self.ready = threading.Event()


def _matches(value: str | None, allowed: list[str]) -> bool:
    if not value:
        return False
    return any(value == entry or (entry.endswith(":*") and value.startswith(entry[:-1])) for entry in allowed)


def _answer_body(state: _State) -> tuple[int, dict[str, Any]]:
    """The health answer: the latest snapshot, with the loop's lateness as seen from here."""
    body = dict(state.snapshot)
    silent = time.monotonic() - state.received
    loop = dict(body.get("loop") or {})
    loop["lag_ms"] = round(max(float(loop.get("lag_ms", 0.0)), (silent - state.interval) * 1000, 0.0), 1)
    loop["stalled"] = bool(loop.get("stalled")) or silent > state.stall_after
    body["loop"] = loop
    if loop["stalled"]:
        body["status"] = "stalled"
    return (200 if body.get("status") == "ok" else 503), body


def _handler(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "toolgym-health"
        timeout = TIMEOUT

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: dict[str, Any], **headers: str) -> None:
            data = json.dumps(body, separators=(",", ":")).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True

        def do_GET(self) -> None:
            host = self.headers.get("Host")
            if state.allowed_hosts is not None and not _matches(host, state.allowed_hosts):
                self._send(421, {"error": "invalid_host", "message": f"Host {host!r} is not served here"})
                return
            if self.path.split("?", 1)[0] not in ("/health", "/control/health"):
                self._send(404, {"error": "not_found", "message": "this port serves GET /health only"})
                return
            if state.token_sha256 is not None:
                scheme, _, given = self.headers.get("Authorization", "").partition(" ")
                digest = hashlib.sha256(given.strip().encode("latin-1", "replace")).hexdigest()
                if scheme.lower() != "bearer" or not hmac.compare_digest(digest, state.token_sha256):
                    self._send(401, {"error": "unauthorized", "message": "health needs 'Authorization: Bearer <token>'"},
                               **{"WWW-Authenticate": "Bearer"})
                    return
            self._send(*_answer_body(state))

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.slots = threading.BoundedSemaphore(ROOM)
        super().__init__(address, handler)

    def server_bind(self) -> None:
        self.socket.bind(self.server_address)  # no getfqdn(): slow and useless here
        self.server_address = self.socket.getsockname()[:2]

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


def _read_stdin(state: _State, server: _Server) -> None:
    """Settings, then snapshots, until the server's end of the pipe closes; then stop serving."""
    try:
        for number, line in enumerate(sys.stdin.buffer):
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if number == 0:
                state.token_sha256 = message.get("token_sha256")
                state.allowed_hosts = message.get("allowed_hosts")
                state.interval = float(message.get("interval", state.interval))
                state.stall_after = float(message.get("stall_after", state.stall_after))
                state.ready.set()
                continue
            state.snapshot = message
            state.received = time.monotonic()
    finally:
        threading.Thread(target=server.shutdown, daemon=True).start()


def main() -> None:
    """Bind, say the port, serve until stdin ends."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    try:
        os.nice(-10)  # ahead of a saturated server for the CPU, where allowed (root, CAP_SYS_NICE); else as is
    except OSError:
        pass
    state = _State()
    try:
        server = _Server((args.host, args.port), _handler(state))
    except OSError as exc:  # one line for the server to show (e.g. the port is taken), never a traceback
        sys.stderr.write(f"{exc.strerror or exc}\n")
        raise SystemExit(2) from None
    threading.Thread(target=_read_stdin, args=(state, server), daemon=True).start()
    state.ready.wait(timeout=30)
    sys.stdout.write(f"{server.server_address[1]}\n")
    sys.stdout.flush()
    server.serve_forever(poll_interval=0.5)


if __name__ == "__main__":
    main()
