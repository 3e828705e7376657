"""An LLM agent's key, checked before the first episode, and a refused key stopping the run at once.

Without this a run with no key (or a revoked one) looks busy and says little: every episode makes its
requests, each is refused or fails to resolve, and the run writes one identical error line per episode.
A key problem is the run's, not an episode's, so it is a :class:`~clients.errors.RunError` — one line,
exit status 2, no results written for it:

- **No key for the public endpoint.** ``openai:`` against ``api.openai.com`` and ``anthropic:`` against
  ``api.anthropic.com`` need one; without it the run stops before any request. (A custom ``--base-url`` —
  vLLM, Ollama, llama.cpp, a gateway — may need none, so there the endpoint is asked.)
- **The endpoint refuses the key** (HTTP 401 or 403) to the one request made before the first episode
  (``GET <base>/models``, which OpenAI-compatible servers and Anthropic answer without spending tokens), or
  to any request later in the run (:class:`KeyRefused`, raised by the provider client).
- **The endpoint cannot be reached at all** (no such host, connection refused) before the first episode.

Anything else the probe gets back (404 from a server without ``/models``, a slow answer) proves nothing
about the key, and the run goes on.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from clients.errors import RunError

__all__ = ["KeyRefused", "KeySource", "check_key", "check_endpoint", "preflight", "PROBE_TIMEOUT"]

PROBE_TIMEOUT = 10.0
"""Seconds the request made before the first episode may take; slower means "cannot tell", not an error."""


class KeyRefused(RunError):
    """The LLM endpoint refused the API key (HTTP 401 or 403): no episode can succeed, so the run stops."""


@dataclass(frozen=True)
class KeySource:
    """Where an agent's key and endpoint come from, for the messages that name them."""

    agent: str
    """The agent spec (``openai:gpt-4.1``)."""
    variable: str
    """The environment variable the key is read from (``OPENAI_API_KEY``)."""
    base_url: str
    """The endpoint the agent talks to."""
    public_url: str
    """The provider's own endpoint, where a key is always needed."""
    base_variable: str
    """The environment variable the endpoint is read from (``OPENAI_BASE_URL``)."""

    def missing(self) -> str:
        """The message for a key that is not set."""
        return (
            f"{self.agent} needs an API key for {self.base_url}: set {self.variable} or pass --api-key "
            f"(for a local or self-hosted endpoint, set {self.base_variable} or pass --base-url)"
        )

    def refused(self, status: int, message: str) -> str:
        """The message for a key the endpoint refused."""
        detail = f": {message}" if message else ""
        return (
            f"{self.base_url} refused the API key of {self.agent} (HTTP {status}{detail}); "
            f"check {self.variable} or --api-key — every episode would fail the same way"
        )


def check_key(source: KeySource, key: str | None) -> None:
    """Stop before any request when the public endpoint is used without a key.

    Raises:
        RunError: no key, and ``source.base_url`` is the provider's public endpoint.
    """
    if not key and source.base_url.rstrip("/") == source.public_url.rstrip("/"):
        raise RunError(source.missing())


async def preflight(agent: object) -> None:
    """Run an agent's own check before the first episode, when it has one (the LLM agents do).

    Raises:
        RunError: the agent cannot work as configured (see :func:`check_endpoint`).
    """
    check = getattr(agent, "preflight", None)
    if check is not None:
        await check()


async def check_endpoint(source: KeySource, key: str | None, client: httpx.AsyncClient, models_url: str) -> None:
    """Check the key before the first episode: present where it must be, and accepted by the endpoint.

    Raises:
        RunError: a key missing for the public endpoint, an endpoint that cannot be reached at all.
        KeyRefused: the endpoint answered 401 or 403.
    """
    check_key(source, key)
    try:
        response = await client.get(models_url, timeout=PROBE_TIMEOUT)
    except httpx.TimeoutException:
        return  # slow is not refused: the episodes' own retries and budgets deal with it
    except httpx.TransportError as exc:
        raise RunError(f"{source.agent}: cannot reach {source.base_url} ({type(exc).__name__}: {exc}); check {source.base_variable} or --base-url") from None
    if response.status_code in (401, 403):
        raise KeyRefused(source.refused(response.status_code, _message(response)))


def _message(response: httpx.Response) -> str:
    """The error message an endpoint gave, cut short, whatever the body's shape."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:200]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error.get("type") or "")[:200]
    if isinstance(error, str):
        return error[:200]
    return ""
