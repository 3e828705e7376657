"""A real HTTP server process under resource limits (``ulimit -v``, ``ulimit -n``), for the exhaustion tests."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
import httpx

from tests.faults.processes import REPO, TOKEN, HttpServer, _collect

__all__ = ["LimitedServer", "limited_server", "cpu_seconds"]

# Sets the limits, then becomes the server: what `ulimit -v N; exec python -m ...` does in a shell.
_EXEC = """
import os, resource, sys
for name, value in {limits!r}.items():
    resource.setrlimit(getattr(resource, name), (value, value))
os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
"""


@dataclass
class LimitedServer(HttpServer):
    """A ``serve --transport http`` child process under rlimits."""

    async def health(self, http: httpx.AsyncClient) -> httpx.Response:
        """``GET /control/health``."""
        return await http.get(f"{self.url}/control/health", headers=self.headers)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used so far (``/proc/PID/stat``)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@asynccontextmanager
async def limited_server(module: str, *args: str, limits: dict[str, int]) -> AsyncIterator[LimitedServer]:
    """``python -m MODULE serve --transport http --port 0 ARGS`` under ``limits`` (``{"RLIMIT_AS": bytes}``)."""
    command = [
        sys.executable, "-c", _EXEC.format(limits=limits),
        "-m", module, "serve", "--transport", "http", "--port", "0", *args,
    ]
    environment = {**os.environ, "TOOLGYM_TOKEN": TOKEN}
    async with await anyio.open_process(command, cwd=REPO, env=environment) as process:
        lines: list[str] = []
        ready = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(_collect, process.stderr, lines, ready, "Claude Code:")
            with anyio.fail_after(90):
                await ready.wait()
            url = next((line.split(": ", 1)[1].strip().removesuffix("/mcp") for line in lines if "MCP (one episode per session):" in line), None)
            if url is None:
                tg.cancel_scope.cancel()
                raise AssertionError("the server did not start:\n" + "\n".join(lines))
            server = LimitedServer(url=url, process=process, stderr=lines)
            try:
                yield server
            finally:
                if process.returncode is None:
                    process.send_signal(signal.SIGINT)
                    with anyio.move_on_after(15):
                        await process.wait()
                    if process.returncode is None:
                        process.kill()
                tg.cancel_scope.cancel()
