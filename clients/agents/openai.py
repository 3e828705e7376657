"""An agent backed by any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp...).

The episode's MCP tools become function tools; the agent loops — model call, tool calls (run in parallel),
tool results back — until the model answers without tool calls or the turn limit is reached. Arguments
that are not valid JSON go back to the model as an error tool result. Configuration comes from arguments,
else ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` / ``TOOLGYM_MODEL``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Literal

from clients.agents._provider import Backoff, PendingCall, ProviderClient, Sleep, run_tool_calls
from clients.agents.base import AgentResult, AgentSession, openai_tool
from clients.errors import AgentSpecError, ProviderError

__all__ = ["OpenAIAgent", "DEFAULT_OPENAI_BASE_URL"]

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"


def _parse_call(raw: Any, fallback_id: str) -> PendingCall:
    call_id = str(raw.get("id") or fallback_id) if isinstance(raw, dict) else fallback_id
    function = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(function, dict) or not function.get("name"):
        return PendingCall(id=call_id, name="", arguments=None, problem="tool call without a function name")
    name = str(function["name"])
    arguments = function.get("arguments")
    if isinstance(arguments, dict):
        return PendingCall(id=call_id, name=name, arguments=arguments)
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return PendingCall(id=call_id, name=name, arguments={})
    try:
        parsed = json.loads(arguments)
    except (json.JSONDecodeError, TypeError) as exc:
        return PendingCall(id=call_id, name=name, arguments=None, problem=f"arguments are not valid JSON ({exc}); send a JSON object")
    if not isinstance(parsed, dict):
        return PendingCall(id=call_id, name=name, arguments=None, problem=f"arguments must be a JSON object, not {type(parsed).__name__}")
    return PendingCall(id=call_id, name=name, arguments=parsed)


def _wire_call(call: PendingCall, raw: Any) -> dict[str, Any]:
    """The tool call as it goes back into the conversation (arguments kept exactly as the model wrote them)."""
    function = raw.get("function") if isinstance(raw, dict) else None
    arguments = function.get("arguments") if isinstance(function, dict) else None
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {})
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}}


class OpenAIAgent:
    """Chat-completions tool loop over one reused ``httpx.AsyncClient``.

    Args:
        model: model name sent to the endpoint (else ``TOOLGYM_MODEL``).
        base_url: endpoint root, e.g. ``http://127.0.0.1:8000/v1`` for vLLM (else ``OPENAI_BASE_URL``).
        api_key: bearer key (else ``OPENAI_API_KEY``; local servers usually need none).
        temperature: sampling temperature; omitted from requests when None (the server's default).
        max_tokens: completion cap per model call; omitted when None.
        system_prompt: replaces the server's instructions as the system message.
        backoff, sleep: retry pacing (tests inject ``sleep`` to observe the waits without spending them).
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
            raise AgentSpecError("openai agent needs a model: --agent openai:MODEL (or set TOOLGYM_MODEL)")
        self.spec = f"openai:{self.model}"
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_BASE_URL).rstrip("/")
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        headers = {"content-type": "application/json"}
        if key:
            headers["authorization"] = f"Bearer {key}"
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.system_prompt = system_prompt
        self.provider = ProviderClient(headers=headers, backoff=backoff, sleep=sleep)

    async def run(self, session: AgentSession) -> AgentResult:
        """Loop model ↔ tools until the model stops calling tools or the turn limit is reached."""
        tools = [openai_tool(t) for t in session.tools]
        messages: list[dict[str, Any]] = []
        system = self.system_prompt or session.instructions
        if system:
            messages.append({"role": "system", "content": system})
            session.log_message("system", system)
        messages.append({"role": "user", "content": session.prompt})
        session.log_message("user", session.prompt)
        url = f"{self.base_url}/chat/completions"
        while True:
            if session.turns_left == 0:
                return AgentResult(stop_reason="max_turns")
            body: dict[str, Any] = {"model": self.model, "messages": messages}
            if tools:
                body["tools"] = tools
            if self.temperature is not None:
                body["temperature"] = self.temperature
            if self.max_tokens is not None:
                body["max_tokens"] = self.max_tokens
            session.count_turn()
            data = await self.provider.post_json(url, body, session.limits)
            try:
                message = data["choices"][0]["message"]
            except (KeyError, IndexError, TypeError):
                raise ProviderError(f"{url} answered without choices[0].message: {json.dumps(data)[:200]}") from None
            usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
            tokens = None
            if usage:
                tokens = {
                    "prompt": int(usage.get("prompt_tokens") or 0),
                    "completion": int(usage.get("completion_tokens") or 0),
                    "total": int(usage.get("total_tokens") or 0),
                }
            content = message.get("content")
            raw_calls = message.get("tool_calls") or []
            calls = [_parse_call(raw, f"call_{session.turns}_{i}") for i, raw in enumerate(raw_calls)]
            wire_calls = [_wire_call(call, raw) for call, raw in zip(calls, raw_calls)]
            assistant: dict[str, Any] = {"role": "assistant", "content": content}
            if wire_calls:
                assistant["tool_calls"] = wire_calls
            messages.append(assistant)
            session.log_message("assistant", content, tool_calls=wire_calls or None, usage=tokens)
            if not calls:
                return AgentResult(stop_reason="done")
            results = await run_tool_calls(session, calls)
            for call, result in zip(calls, results):
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result.text})
                session.log_message("tool", result.text, tool_call_id=call.id)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self.provider.aclose()
