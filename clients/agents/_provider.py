"""Shared by the LLM agents: one reused HTTP client, requests bounded end to end, retries, and who is to blame.

A request is bounded as a whole — connect, first byte and the entire body within ``Limits.request_timeout``
— so a body that trickles in cannot outlast it. Retries cover what is transient at a provider (408, 409,
425, 429, 5xx, timeouts, dropped connections), each after a jittered backoff or the provider's own
Retry-After. The whole exchange counts as a wait on the provider (:class:`~clients.agents.timing.EpisodeClock`):
never against the agent's time, against the episode's provider budget instead.

What still fails is blamed where it belongs (the model in :mod:`clients.blame`):

- a refusal that retrying cannot fix and that the *model* caused ends the episode as the agent's failure
  (:class:`~clients.errors.AgentStop`): the conversation outgrew the model's context (``context_overflow``),
  or the provider refuses, *for what the model produced* (its message points into the conversation's
  messages, tool calls or arguments), a conversation carrying the model's malformed output
  (``model_output_rejected``). A refusal about anything else (a key, a parameter) is never the model's,
  whatever the model did earlier;
- a context overflow on the episode's first request is no one's doing but the run's configuration (the
  prompt and tools alone do not fit, or ``--max-tokens`` leaves no room): errored, not re-run, with what to
  change;
- any other refusal (a bad key, an unknown model, a bad parameter) is a provider error that re-running will
  not fix (``retryable=False``);
- retries exhausted, a body that is not a JSON object, a Retry-After beyond ``Backoff.max_wait`` are
  provider errors; a wait beyond the episode's provider budget is a ``provider_timeout``.
"""

from __future__ import annotations

import json
import logging
import random
import re
from typing import Any

import anyio
import httpx

from clients.agents._calls import PendingCall, invalid_arguments_text, run_tool_calls
from clients.agents.base import AgentSession
from clients.agents.keys import KeyRefused, KeySource
from clients.agents.timing import Backoff, Sleep, retry_after_seconds
from clients.errors import AgentStop, ProviderError, ProviderTimeout
from servers.text import escape_value

__all__ = [
    "Backoff",
    "ProviderClient",
    "retry_after_seconds",
    "PendingCall",
    "run_tool_calls",
    "invalid_arguments_text",
    "is_context_overflow",
    "token_count",
    "Sleep",
]

log = logging.getLogger("toolgym.agents")

RETRYABLE_STATUSES = frozenset({408, 409, 425, 429})
"""Statuses below 500 worth retrying; every 5xx is retried too."""

_OVERFLOW_CODES = frozenset({"context_length_exceeded", "request_too_large", "string_above_max_length"})
_OVERFLOW = re.compile(
    r"context[ _-]?(length|window|size|limit)|maximum context|prompt is too long|too many (input )?tokens"
    r"|exceeds? the (model'?s? )?(max|context)|input length and .?max_tokens.? exceed|request too large",
    re.IGNORECASE,
)


def is_context_overflow(status: int, message: str, code: str | None = None) -> bool:
    """Whether a refusal says the conversation no longer fits the model (OpenAI, Anthropic, vLLM, llama.cpp wordings)."""
    if status == 413 or code in _OVERFLOW_CODES:
        return True
    return status in (400, 422) and _OVERFLOW.search(message) is not None


_ABOUT_OUTPUT = re.compile(
    r"messages?\s*[\[.]\s*\d|tool[ _-]?calls?|tool_use|tool_result|arguments?",
    re.IGNORECASE,
)
"""Wording of a refusal that points into the conversation (its messages, tool calls, arguments), where the
model's output is; not into the request's own settings or tool definitions (``tools[0].function...``)."""
_ABOUT_ACCESS = re.compile(
    r"api[ _-]?key|x-api-key|authenticat|authori[sz]|credential|permission|billing|quota|organi[sz]ation", re.IGNORECASE
)
"""Wording of a refusal about the caller's access: never the model's, whatever else it names."""
_MAX_TOKENS = re.compile(r"max_tokens|max_completion_tokens|max_new_tokens|max_output_tokens", re.IGNORECASE)


def about_model_output(message: str) -> bool:
    """Whether a refusal's message is about what the model produced (its tool calls), not about the request."""
    return _ABOUT_OUTPUT.search(message) is not None and _ABOUT_ACCESS.search(message) is None


def encode_body(body: dict[str, Any]) -> bytes:
    """A request body as strict UTF-8 JSON, whatever the conversation holds.

    A model's lone surrogate (``"\\ud800"``) sits in the history sent back; UTF-8 cannot carry it, so it goes
    out escaped (``servers.text``) instead of crashing the request.
    """
    try:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        pass
    try:
        return json.dumps(escape_value(body), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # deeper than escape_value walks: JSON's own \udXXX escapes, ASCII throughout
        return json.dumps(body, separators=(",", ":")).encode("ascii")


def token_count(value: Any) -> int | None:
    """A usage figure as an int, or None when the provider sent something that is not a count."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return max(0, value)
    if isinstance(value, float) and value.is_integer():
        return max(0, int(value))
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _error_detail(response: httpx.Response) -> tuple[str, str | None]:
    """(message, code) of an error answer, whatever its shape."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:300], None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            code = error.get("code") or error.get("type")
            message = error.get("message") or json.dumps(error)
            return str(message)[:300], str(code) if code is not None else None
        if isinstance(error, str):
            return error[:300], None
        if isinstance(body.get("message"), str):
            return body["message"][:300], None
    return json.dumps(body)[:300], None


def _what_to_change(message: str) -> str:
    """The one change that lets a run whose first request cannot fit go through."""
    if _MAX_TOKENS.search(message):
        return "lower --max-tokens (the completion cap per model call) so the prompt and the completion fit the model's context"
    return (
        "the prompt and tools alone exceed the model's context: serve the model with a longer context "
        "(vLLM: --max-model-len), pick a model with a longer one, or run tasks with fewer tools"
    )


class ProviderClient:
    """One ``httpx.AsyncClient`` for every request of an agent (creating one costs tens of ms), with retries.

    Args:
        headers: sent with every request (key, API version).
        backoff: retry pacing.
        sleep: how to wait (tests pass one that records the waits instead of spending them).
        rng: the jitter's random source (tests seed it).
    """

    def __init__(
        self,
        *,
        headers: dict[str, str],
        backoff: Backoff | None = None,
        sleep: Sleep | None = None,
        rng: random.Random | None = None,
        key_source: KeySource | None = None,
    ) -> None:
        self.headers = headers
        self.key_source = key_source
        """Whose key the headers carry: a 401 or 403 then stops the run (:class:`~clients.agents.keys.KeyRefused`)."""
        self.backoff = backoff or Backoff()
        self.sleep: Sleep = sleep or anyio.sleep
        self.rng = rng or random.Random()
        self._client: httpx.AsyncClient | None = None
        self.requests = 0
        """Requests sent (retries included)."""

    @property
    def http(self) -> httpx.AsyncClient:
        """The shared HTTP client, for a request outside the retry loop (the key check before the first episode)."""
        return self._http()

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(headers=self.headers, limits=httpx.Limits(max_connections=256, max_keepalive_connections=64))
        return self._client

    async def post_json(self, url: str, body: dict[str, Any], session: AgentSession) -> dict[str, Any]:
        """POST ``body`` and return the JSON object answered, retrying transient failures.

        The whole exchange is a wait on the provider for ``session``'s clock.

        Raises:
            AgentStop: a refusal the model caused (context overflow, its malformed output refused).
            ProviderError: any other refusal, an answer that is not a JSON object, or retries exhausted.
            ProviderTimeout: the wait needed exceeds what is left of the episode's provider budget.
        """
        with session.clock.waiting_on_provider():
            return await self._post(url, body, session)

    async def _post(self, url: str, body: dict[str, Any], session: AgentSession) -> dict[str, Any]:
        limits = session.limits
        timeout = limits.request_timeout
        client = self._http()
        last = "no attempt made"
        for attempt in range(limits.max_retries + 1):
            asked: float | None = None
            self.requests += 1
            try:
                # httpx's timeouts bound each read; this bounds the whole exchange (a trickling body too).
                with anyio.fail_after(timeout):
                    response = await client.post(
                        url, content=encode_body(body), headers={"content-type": "application/json"}, timeout=timeout
                    )
            except (TimeoutError, httpx.TimeoutException):
                last = f"no complete answer within {timeout:g}s"
            except httpx.TransportError as exc:
                last = f"connection failed: {type(exc).__name__}: {exc}"
            else:
                status = response.status_code
                if status < 300:
                    return self._object(url, response)
                message, code = _error_detail(response)
                if status in (401, 403) and self.key_source is not None:  # the run's key: no episode can succeed
                    raise KeyRefused(self.key_source.refused(status, message))
                if status < 500 and status not in RETRYABLE_STATUSES:
                    raise self._refusal(url, status, message, code, session)
                last = f"HTTP {status}: {message}"
                asked = retry_after_seconds(response.headers)
                if asked is not None and asked > self.backoff.max_wait:
                    wanted = f"asked to retry after {asked:g}s, more than the {self.backoff.max_wait:g}s we wait"
                    raise ProviderError(f"{url} {wanted}; last: {last}", status=status)
            if attempt == limits.max_retries:
                break
            delay = self.backoff.pause(attempt, asked, self.rng)
            left = session.clock.provider_left()
            if delay > left:
                raise ProviderTimeout(
                    f"{url}: a retry in {delay:.1f}s would outlast the episode's provider budget ({left:.1f}s of "
                    f"{limits.provider_timeout:g}s left); last: {last}"
                )
            await self.sleep(delay)
        raise ProviderError(f"{url} failed after {limits.max_retries + 1} attempts; last: {last}")

    @staticmethod
    def _object(url: str, response: httpx.Response) -> dict[str, Any]:
        try:
            data = response.json()
        except (ValueError, RecursionError):  # RecursionError: a body nested past what json decodes
            raise ProviderError(f"{url} answered {response.status_code} with a body that is not JSON: {response.text[:120]!r}") from None
        if not isinstance(data, dict):
            raise ProviderError(f"{url} answered a JSON {type(data).__name__}, not an object: {json.dumps(data)[:120]}")
        return data

    @staticmethod
    def _refusal(url: str, status: int, message: str, code: str | None, session: AgentSession) -> Exception:
        """Who a refusal blames: the model (an AgentStop) or the request as configured (a ProviderError)."""
        refused = f"HTTP {status}: {' '.join(message.split())}"  # one line, whatever the provider wrapped
        if is_context_overflow(status, message, code):
            if session.turns <= 1:  # nothing of the model's is in it yet: the run as configured cannot fit
                return ProviderError(f"{url} refused the first request of the episode: {refused}; {_what_to_change(message)}", status=status, retryable=False)
            return AgentStop("context_overflow", f"the conversation no longer fits the model: {refused}")
        if status in (400, 422) and session.model_faults and about_model_output(message):
            faults = "; ".join(session.model_faults[:3])
            why = f"the provider refused a conversation carrying the model's malformed output ({faults})"
            return AgentStop("model_output_rejected", f"{why}: {refused}")
        hint = f"; {_what_to_change(message)}" if _MAX_TOKENS.search(message) else ""
        return ProviderError(f"{url} refused the request: {refused}{hint}", status=status, retryable=False)

    async def aclose(self) -> None:
        """Close the HTTP client; idempotent."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None
