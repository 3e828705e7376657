"""Before an adapter starts: the toolgym server answers, is one, and takes the control token — or one line why not.

An adapter that starts against a server it cannot use fails later, once per episode, with a traceback; the
user wants to hear it at once and in their words: the server is unreachable, it needs a token and none is
set, it refused the token that is set, or it is not a toolgym server.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import httpx

from toolgym_remote._control import TOKEN_VARIABLE, RemoteError

__all__ = ["ServerInfo", "check_server"]


@dataclass(frozen=True)
class ServerInfo:
    """What a usable server serves."""

    url: str
    env: str
    """The environment's name (``finance``)."""
    tasks: list[dict[str, Any]]
    """Task templates' metadata (``GET /control/tasks``)."""


def check_server(url: str, *, token_variable: str = TOKEN_VARIABLE, timeout: float = 10.0) -> ServerInfo:
    """Ask the server at ``url`` for its environment and tasks, with the token from ``token_variable``.

    Raises:
        RemoteError: one line saying what to fix (unreachable, token missing or refused, not a toolgym server).
    """
    base = url.rstrip("/")
    token = os.environ.get(token_variable)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    bodies: list[Any] = []
    for path in ("/control/environment", "/control/tasks"):
        try:
            response = httpx.get(base + path, headers=headers, timeout=timeout)
        except httpx.HTTPError as exc:
            raise RemoteError(
                f"cannot reach a toolgym server at {base} ({type(exc).__name__}: {exc}); start one "
                "(toolgym serve ENV --transport http) or fix the server URL"
            ) from None
        if response.status_code == 401:
            if token:
                raise RemoteError(
                    f"the toolgym server at {base} refused the control token in ${token_variable}: it is not the "
                    "server's (use the one its startup banner printed, or the TOOLGYM_TOKEN it was started with)",
                    status=401,
                )
            raise RemoteError(
                f"the toolgym server at {base} needs a control token: set ${token_variable} to it (its startup "
                "banner prints it)",
                status=401,
            )
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code != 200 or not isinstance(body, dict):
            raise RemoteError(f"{base} is not a toolgym server (GET {path} answered HTTP {response.status_code})", status=response.status_code)
        bodies.append(body)
    environment, tasks = bodies
    return ServerInfo(url=base, env=str(environment.get("name") or environment.get("env") or "?"), tasks=list(tasks.get("tasks") or []))
