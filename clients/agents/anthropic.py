"""An agent backed by the Anthropic Messages API with native tool use.

Same loop as the OpenAI agent: model call, ``tool_use`` blocks run in parallel, ``tool_result`` blocks
back, until the model ends its turn without tools or the turn limit is reached. Messages are logged to the
record in the OpenAI chat format so every record exports alike. Key from ``ANTHROPIC_API_KEY``, endpoint
from ``ANTHROPIC_BASE_URL`` (default https://api.anthropic.com).
"""

from __future__ import annotations

import json
import os
from typing import Any, Literal

from clients.agents._provider import Backoff, PendingCall, ProviderClient, Sleep, run_tool_calls
from clients.agents.base import AgentResult, AgentSession
from clients.errors import AgentSpecError, ProviderError

__all__ = ["AnthropicAgent", "ANTHROPIC_VERSION", "DEFAULT_ANTHROPIC_BASE_URL"]

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_ANTHROPIC_BASE_URL = "https://api.anthropic.com"


class AnthropicAgent:
    """Messages-API tool loop over one reused ``httpx.AsyncClient``.

    Args:
        model: e.g. ``claude-sonnet-4-5`` (else ``TOOLGYM_MODEL``).
        base_url: API root (else ``ANTHROPIC_BASE_URL``, else the public API).
        api_key: else ``ANTHROPIC_API_KEY``.
        temperature: omitted from requests when None.
        max_tokens: output cap per model call (the API requires one).
        system_prompt: replaces the server's instructions as the system prompt.
        backoff, sleep: retry pacing.
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
        self.provider = ProviderClient(headers=headers, backoff=backoff, sleep=sleep)

    async def run(self, session: AgentSession) -> AgentResult:
        """Loop model ↔ tools until the model ends its turn without tool use or the turn limit is reached."""
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
        while True:
            if session.turns_left == 0:
                return AgentResult(stop_reason="max_turns")
            body: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, "messages": messages}
            if system:
                body["system"] = system
            if tools:
                body["tools"] = tools
            if self.temperature is not None:
                body["temperature"] = self.temperature
            session.count_turn()
            data = await self.provider.post_json(url, body, session.limits)
            blocks = data.get("content")
            if not isinstance(blocks, list):
                raise ProviderError(f"{url} answered without a content list: {json.dumps(data)[:200]}")
            usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
            tokens = None
            if usage:
                prompt = sum(int(usage.get(k) or 0) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
                completion = int(usage.get("output_tokens") or 0)
                tokens = {"prompt": prompt, "completion": completion, "total": prompt + completion}
            text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text") or None
            calls: list[PendingCall] = []
            for index, block in enumerate(b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"):
                call_id = str(block.get("id") or f"toolu_{session.turns}_{index}")
                arguments = block.get("input")
                if isinstance(arguments, dict):
                    calls.append(PendingCall(id=call_id, name=str(block.get("name", "")), arguments=arguments))
                else:
                    problem = f"tool input must be a JSON object, not {type(arguments).__name__}"
                    calls.append(PendingCall(id=call_id, name=str(block.get("name", "")), arguments=None, problem=problem))
            messages.append({"role": "assistant", "content": blocks})
            wire_calls = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments if c.arguments is not None else {})}}
                for c in calls
            ]
            session.log_message("assistant", text, tool_calls=wire_calls or None, usage=tokens)
            if not calls:
                return AgentResult(stop_reason="done")
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
