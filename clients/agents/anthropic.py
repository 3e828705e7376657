"""An agent backed by the Anthropic Messages API with native tool use.

Same loop as the OpenAI agent: model call, ``tool_use`` blocks run in parallel, ``tool_result`` blocks
back, until the model ends its turn without tools or an episode limit is reached. Messages are logged to
the record in the OpenAI chat format so every record exports alike, with the tool input exactly as the
model sent it (a non-object input is recorded as the JSON it was, e.g. ``"acc-001"``). What goes back to
the API is normalised so it accepts it: unique ``tool_use`` ids, object inputs (a malformed one wrapped
under ``"_invalid_arguments"``), no empty text blocks. Key from ``ANTHROPIC_API_KEY``, endpoint from
``ANTHROPIC_BASE_URL`` (default https://api.anthropic.com).
"""

from __future__ import annotations

import json
import logging
import os
import random
from dataclasses import dataclass
from typing import Any, Literal

from clients.agents._calls import CallIds, PendingCall, pending_call, run_tool_calls
from clients.agents._provider import ProviderClient, token_count
from clients.agents.base import AgentResult, AgentSession
from clients.agents.keys import KeySource, check_endpoint
from clients.agents.timing import Backoff, Sleep
from clients.errors import AgentSpecError, ProviderError

__all__ = ["AnthropicAgent", "ANTHROPIC_VERSION", "DEFAULT_ANTHROPIC_BASE_URL", "read_message"]

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_ANTHROPIC_BASE_URL = "https://api.anthropic.com"

log = logging.getLogger("toolgym.agents")


@dataclass(frozen=True)
class Message:
    """What one Messages answer holds, checked: its blocks, their text, token usage (None when unknown)."""

    blocks: list[dict[str, Any]]
    text: str | None
    usage: dict[str, int] | None


def _usage(data: dict[str, Any], url: str) -> dict[str, int] | None:
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return None
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")
    counts = {key: token_count(usage.get(key)) if usage.get(key) is not None else 0 for key in keys}
    if any(value is None for value in counts.values()):
        log.warning("%s answered usage that is not token counts (%s); this turn's tokens are not counted", url, json.dumps(usage)[:120])
        return None
    prompt = sum(counts[key] or 0 for key in keys[:3])
    completion = counts["output_tokens"] or 0
    return {"prompt": prompt, "completion": completion, "total": prompt + completion}


def read_message(data: dict[str, Any], url: str) -> Message:
    """Check a Messages answer's shape.

    Raises:
        ProviderError: ``content`` is not a list of blocks (objects), or a text block holds no string.
    """
    blocks = data.get("content")
    if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
        raise ProviderError(f"{url} answered without a content list of blocks: {json.dumps(data)[:200]}")
    texts = [b.get("text") for b in blocks if b.get("type") == "text"]
    if not all(isinstance(t, str) for t in texts):
        raise ProviderError(f"{url} answered a text block without text: {json.dumps(blocks)[:200]}")
    return Message(blocks=blocks, text="".join(texts) or None, usage=_usage(data, url))  # type: ignore[arg-type]


def _wire_blocks(blocks: list[dict[str, Any]], calls: list[PendingCall]) -> list[dict[str, Any]]:
    """The assistant turn as it goes back: tool_use blocks normalised, empty text dropped, the rest unchanged."""
    wire: list[dict[str, Any]] = []
    uses = iter(calls)
    for block in blocks:
        kind = block.get("type")
        if kind == "tool_use":
            call = next(uses)
            wire.append({"type": "tool_use", "id": call.id, "name": call.wire_name, "input": call.wire_input()})
        elif kind == "text":
            if block.get("text"):
                wire.append(block)
        else:  # thinking and other blocks go back untouched (signed ones must)
            wire.append(block)
    return wire


class AnthropicAgent:
    """Messages-API tool loop over one reused ``httpx.AsyncClient``.

    Args:
        model: e.g. ``claude-sonnet-4-5`` (else ``TOOLGYM_MODEL``).
        base_url: API root (else ``ANTHROPIC_BASE_URL``, else the public API).
        api_key: else ``ANTHROPIC_API_KEY``.
        temperature: omitted from requests when None.
        max_tokens: output cap per model call (the API requires one).
        system_prompt: replaces the server's instructions as the system prompt.
        backoff, sleep, rng: retry pacing.
    """

    transport: Literal["memory"] = "memory"
    needs_instance = False
    needs_tools = True

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        system_prompt: str | None = None,
        backoff: Backoff | None = None,
        sleep: Sleep | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.model = model or os.environ.get("TOOLGYM_MODEL") or ""
        if not self.model:
            raise AgentSpecError("anthropic agent needs a model: --agent anthropic:MODEL (or set TOOLGYM_MODEL)")
        self.spec = f"anthropic:{self.model}"
        self.base_url = (base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_ANTHROPIC_BASE_URL).rstrip("/")
        key = api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY")
        headers = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
        if key:
            headers["x-api-key"] = key
        self.temperature = temperature
        self.max_tokens = max_tokens or 4096
        self.system_prompt = system_prompt
        self.key = key or None
        self.key_source = KeySource(
            agent=self.spec, variable="ANTHROPIC_API_KEY", base_url=self.base_url, public_url=DEFAULT_ANTHROPIC_BASE_URL, base_variable="ANTHROPIC_BASE_URL"
        )
        self.provider = ProviderClient(headers=headers, backoff=backoff, sleep=sleep, rng=rng, key_source=self.key_source)

    async def preflight(self) -> None:
        """Before the first episode: a key where one is needed, and one the endpoint accepts (``clients.agents.keys``).

        Raises:
            RunError: no key for the public endpoint, or an endpoint that cannot be reached.
            KeyRefused: the endpoint refused the key.
        """
        await check_endpoint(self.key_source, self.key, self.provider.http, f"{self.base_url}/v1/models")

    async def run(self, session: AgentSession) -> AgentResult:
        """Loop model ↔ tools until the model ends its turn without tool use or an episode limit is reached."""
        tools = [
            {"name": t.name, "description": t.description or "", "input_schema": t.input_schema or {"type": "object"}}
            for t in session.tools
        ]
        system = self.system_prompt or session.instructions
        if system:
            session.log_message("system", system)
        messages: list[dict[str, Any]] = [{"role": "user", "content": session.prompt}]
        session.log_message("user", session.prompt)
        url = f"{self.base_url}/v1/messages"
        ids = CallIds("toolu")
        while True:
            if session.turns_left == 0:
                return AgentResult(stop_reason="max_turns", detail=f"{session.limits.max_turns} model calls, the episode's limit")
            if session.tool_calls_left == 0:
                return AgentResult(stop_reason="max_tool_calls", detail=f"{session.limits.max_tool_calls} tool calls, the episode's limit")
            body: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, "messages": messages}
            if system:
                body["system"] = system
            if tools:
                body["tools"] = tools
            if self.temperature is not None:
                body["temperature"] = self.temperature
            session.count_turn()
            answer = read_message(await self.provider.post_json(url, body, session), url)
            uses = [b for b in answer.blocks if b.get("type") == "tool_use"]
            calls = [
                pending_call(session, ids, index, block.get("id"), block.get("name"), block.get("input"), parsed=True)
                for index, block in enumerate(uses)
            ]
            session.log_message("assistant", answer.text, tool_calls=[c.recorded() for c in calls] or None, usage=answer.usage)
            if not calls:
                return AgentResult(stop_reason="done")
            messages.append({"role": "assistant", "content": _wire_blocks(answer.blocks, calls)})
            results = await run_tool_calls(session, calls)
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": c.id, "content": r.text, "is_error": r.is_error}
                        for c, r in zip(calls, results)
                    ],
                }
            )
            for call, result in zip(calls, results):
                session.log_message("tool", result.text, tool_call_id=call.id)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self.provider.aclose()
