"""The control API of a toolgym server (``/control``), sealed by a bearer token.

The token is the operator's: whoever holds it can create, play and grade any episode, so it is read from
an environment variable (``TOOLGYM_TOKEN`` by default) or given by the caller, and never handed to an
agent. Only the episode's MCP URL goes to the agent.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import httpx

__all__ = ["ControlClient", "CreatedEpisode", "RemoteError", "TOKEN_VARIABLE", "list_tasks"]

TOKEN_VARIABLE = "TOOLGYM_TOKEN"
"""Environment variable the control token is read from by default."""


class RemoteError(Exception):
    """The toolgym server refused a request (its error code and message), or could not be reached."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass(frozen=True)
class CreatedEpisode:
    """An episode the server just opened."""

    id: str
    mcp_url: str
    """The episode's own MCP endpoint: the only thing an agent is given."""
    prompt: str
    task: str | None
    seed: int
    oracle: list[dict[str, Any]] | None = None
    """The task's reference tool calls, when asked for (``oracle=True``): for oracle runs and tests only."""


class ControlClient:
    """Async client of one toolgym server's control API. Use as ``async with ControlClient(url) as c:``.

    Args:
        url: the server's base URL (``http://127.0.0.1:8000``), without ``/control``.
        token: the control token; default: the ``token_variable`` environment variable.
        token_variable: where to read the token from when ``token`` is not given.
        client: an ``httpx.AsyncClient`` to share (not closed here); one is made otherwise.
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        token_variable: str = TOKEN_VARIABLE,
        client: httpx.AsyncClient | None = None,
        timeout: float = 120.0,
    ) -> None:
        self.url = url.rstrip("/")
        token = token if token is not None else os.environ.get(token_variable)
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._own = client is None
        self._client = client if client is not None else httpx.AsyncClient(timeout=timeout)

    async def __aenter__(self) -> ControlClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client if this object made it."""
        if self._own:
            await self._client.aclose()

    async def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        url = f"{self.url}/control{path}"
        try:
            response = await self._client.request(method, url, json=body, headers=self._headers)
        except httpx.HTTPError as exc:
            raise RemoteError(f"toolgym server at {self.url} is unreachable: {type(exc).__name__}: {exc}") from exc
        if response.status_code >= 400:
            try:
                payload = response.json()
            except ValueError:
                payload = {}
            code = payload.get("error") if isinstance(payload, dict) else None
            message = payload.get("message") if isinstance(payload, dict) else None
            hint = " (set the control token: $TOOLGYM_TOKEN)" if response.status_code == 401 else ""
            raise RemoteError(
                f"{method} {url}: {response.status_code} {code or ''} {message or response.text[:200]}{hint}".strip(),
                status=response.status_code,
                code=code,
            )
        return response.json()

    async def environment(self) -> dict[str, Any]:
        """The served environment: name, description, tools, answer tools, task count."""
        return await self._request("GET", "/environment")

    async def tasks(self) -> list[dict[str, Any]]:
        """Task templates' metadata (id, difficulty, category, split, tags, tools, description)."""
        return (await self._request("GET", "/tasks"))["tasks"]

    async def create(self, task: str | None, seed: int = 0, *, oracle: bool = False) -> CreatedEpisode:
        """Open an episode of ``task`` (None: free play) with ``seed``."""
        body: dict[str, Any] = {"task": task, "seed": seed}
        if oracle:
            body["oracle"] = True
        data = await self._request("POST", "/episodes", body)
        return CreatedEpisode(
            id=data["id"], mcp_url=data["mcp_url"], prompt=data.get("prompt") or "", task=data.get("task"),
            seed=int(data.get("seed", seed)), oracle=data.get("oracle"),
        )

    async def finish(
        self, episode_id: str, *, reason: str = "closed", grade: bool = True, record: bool = False, release: bool = True
    ) -> dict[str, Any]:
        """Close the episode, grade it and release it in one request: ``{"grade": {...}, ...}``.

        A grade that cannot be given comes back in ``grade_error`` rather than raised.
        """
        body = {"reason": reason, "grade": grade, "record": record, "release": release}
        return await self._request("POST", f"/episodes/{episode_id}/finish", body)

    async def release(self, episode_id: str) -> bool:
        """Free the episode's world; False when it was already released (not an error)."""
        try:
            await self._request("DELETE", f"/episodes/{episode_id}")
        except RemoteError as exc:
            if exc.status == 404:
                return False
            raise
        return True


def list_tasks(url: str, token: str | None = None, *, token_variable: str = TOKEN_VARIABLE, timeout: float = 60.0) -> list[dict[str, Any]]:
    """``ControlClient.tasks()`` from synchronous code (a dataset loader called inside a running event loop).

    Raises:
        RemoteError: the server refused the request or cannot be reached.
    """
    token = token if token is not None else os.environ.get(token_variable)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    endpoint = f"{url.rstrip('/')}/control/tasks"
    try:
        response = httpx.get(endpoint, headers=headers, timeout=timeout)
    except httpx.HTTPError as exc:
        raise RemoteError(f"toolgym server at {url} is unreachable: {type(exc).__name__}: {exc}") from exc
    if response.status_code >= 400:
        hint = " (set the control token: $TOOLGYM_TOKEN)" if response.status_code == 401 else ""
        raise RemoteError(f"GET {endpoint}: {response.status_code} {response.text[:200]}{hint}", status=response.status_code)
    return response.json()["tasks"]
