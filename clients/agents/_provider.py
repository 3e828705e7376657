"""Shared by the LLM agents: one reused HTTP client, bounded retries with backoff, parallel tool calls.

Retries cover what is transient at a provider — 429 and 5xx (honoring ``retry-after-ms`` / ``Retry-After``),
timeouts and dropped connections — with exponential backoff bounded by ``Backoff.cap``. Other 4xx
(bad key, bad request) fail at once. Whatever still fails becomes a ProviderError: an infrastructure error
the runner retries as a whole episode and never scores.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

import anyio
import httpx

from clients.agents.base import AgentSession, Limits, ToolResult
from clients.errors import ProviderError

__all__ = ["Backoff", "ProviderClient", "retry_after_seconds", "PendingCall", "run_tool_calls", "invalid_arguments_text"]

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class Backoff:
    """Delays between retries of one provider request: ``base * factor**attempt``, at most ``cap`` seconds.

    A wait the provider asks for (Retry-After) is honored as is, up to ``max_wait`` seconds.
    """

    base: float = 0.5
    factor: float = 2.0
    cap: float = 30.0
    max_wait: float = 120.0

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        return min(self.cap, self.base * self.factor**attempt)


def retry_after_seconds(headers: httpx.Headers, *, now: datetime | None = None) -> float | None:
    """The wait a provider asked for: ``retry-after-ms`` (OpenAI), else ``Retry-After`` (seconds or HTTP date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    # An HTTP date is wall-clock by definition (this is the machine talking to a provider, not a world).
    reference = now or datetime.now(timezone.utc)
    return max(0.0, (when - reference).total_seconds())


def _error_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:300]
        if isinstance(error, str):
            return error[:300]
    return json.dumps(body)[:300]


class ProviderClient:
    """One ``httpx.AsyncClient`` for every request of an agent (creating one costs tens of ms), with retries."""

    def __init__(self, *, headers: dict[str, str], backoff: Backoff | None = None, sleep: Sleep | None = None) -> None:
        self.headers = headers
        self.backoff = backoff or Backoff()
        self.sleep: Sleep = sleep or anyio.sleep
        self._client: httpx.AsyncClient | None = None
        self.requests = 0
        """Requests sent (retries included)."""

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(headers=self.headers, limits=httpx.Limits(max_connections=256, max_keepalive_connections=64))
        return self._client

    async def post_json(self, url: str, body: dict[str, Any], limits: Limits) -> dict[str, Any]:
        """POST ``body`` and return the JSON object answered, retrying transient failures.

        Raises:
            ProviderError: a non-retryable status, an answer that is not a JSON object, or retries exhausted.
        """
        client = self._http()
        last = "no attempt made"
        for attempt in range(limits.max_retries + 1):
            wait: float | None = None
            self.requests += 1
            try:
                response = await client.post(url, json=body, timeout=limits.request_timeout)
            except httpx.TimeoutException:
                last = f"no answer within {limits.request_timeout:g}s"
            except httpx.TransportError as exc:
                last = f"connection failed: {type(exc).__name__}: {exc}"
            else:
                status = response.status_code
                if status < 300:
                    try:
                        data = response.json()
                    except ValueError:
                        raise ProviderError(f"{url} answered {status} with a body that is not JSON", status=status) from None
                    if not isinstance(data, dict):
                        raise ProviderError(f"{url} answered a JSON {type(data).__name__}, not an object", status=status)
                    return data
                message = _error_message(response)
                if status != 429 and status < 500:
                    raise ProviderError(f"{url} refused the request: HTTP {status}: {message}", status=status)
                last = f"HTTP {status}: {message}"
                wait = retry_after_seconds(response.headers)
            if attempt == limits.max_retries:
                break
            delay = self.backoff.delay(attempt) if wait is None else min(wait, self.backoff.max_wait)
            await self.sleep(delay)
        raise ProviderError(f"{url} failed after {limits.max_retries + 1} attempts; last: {last}")

    async def aclose(self) -> None:
        """Close the HTTP client; idempotent."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None


@dataclass(frozen=True)
class PendingCall:
    """A tool call a model asked for: parsed arguments, or why they could not be parsed."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    problem: str | None = None


def invalid_arguments_text(problem: str) -> str:
    """The tool result a model gets for arguments that never reached the tool (same shape as server errors)."""
    return json.dumps({"error": "invalid_arguments", "message": problem})


async def run_tool_calls(session: AgentSession, calls: list[PendingCall]) -> list[ToolResult]:
    """Run a model's tool calls concurrently; results come back in the calls' order.

    Calls whose arguments did not parse are answered with an ``invalid_arguments`` error without touching
    the episode, so the model can correct itself.
    """
    results: list[ToolResult | None] = [None] * len(calls)

    async def one(index: int, call: PendingCall) -> None:
        if call.problem is not None or call.arguments is None:
            results[index] = ToolResult(text=invalid_arguments_text(call.problem or "no arguments"), is_error=True)
            return
        results[index] = await session.call_tool(call.name, call.arguments)

    if len(calls) == 1:
        await one(0, calls[0])
    else:
        async with anyio.create_task_group() as group:
            for index, call in enumerate(calls):
                group.start_soon(one, index, call)
    return [r for r in results if r is not None]
