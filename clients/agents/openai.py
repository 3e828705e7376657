"""An agent backed by any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp...).

The episode's MCP tools become function tools; the agent loops — model call, tool calls (run in parallel),
tool results back — until the model answers without tool calls or an episode limit is reached. The model's
malformed calls (arguments that are not a JSON object, no function name, repeated or missing ids) go back
to it as error tool results and into the record as rejected calls (:mod:`clients.agents._calls`). An answer
that is not a chat completion is the provider's fault (:class:`~clients.errors.ProviderError`), never a
crash of ours. Configuration comes from arguments, else ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` /
``TOOLGYM_MODEL``.
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
from clients.agents.base import AgentResult, AgentSession, openai_tool
from clients.agents.keys import KeySource, check_endpoint
from clients.agents.timing import Backoff, Sleep
from clients.errors import AgentSpecError, ProviderError

__all__ = ["OpenAIAgent", "DEFAULT_OPENAI_BASE_URL", "Completion", "read_completion"]

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"

log = logging.getLogger("toolgym.agents")


@dataclass(frozen=True)
class Completion:
    """What one chat completion holds, checked: text, the raw tool calls, token usage (None when unknown)."""

    content: str | None
    raw_calls: list[dict[str, Any]]
    usage: dict[str, int] | None


def _content(value: Any, url: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts: keep the text ones
        texts = [p.get("text") for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(texts) or None
    raise ProviderError(f"{url} answered choices[0].message.content as a {type(value).__name__}: {json.dumps(value)[:120]}")


def _usage(data: dict[str, Any], url: str) -> dict[str, int] | None:
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return None
    fields = (("prompt", "prompt_tokens"), ("completion", "completion_tokens"), ("total", "total_tokens"))
    counts = {name: token_count(usage.get(key)) for name, key in fields}
    if counts["prompt"] is None or counts["completion"] is None:
        log.warning("%s answered usage that is not token counts (%s); this turn's tokens are not counted", url, json.dumps(usage)[:120])
        return None
    prompt, completion = counts["prompt"], counts["completion"]
    return {"prompt": prompt, "completion": completion, "total": counts["total"] if counts["total"] is not None else prompt + completion}


def read_completion(data: dict[str, Any], url: str) -> Completion:
    """Check a chat-completions answer's shape.

    Raises:
        ProviderError: no ``choices[0].message`` object, content or tool calls of an impossible shape.
    """
    choices = data.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        shape = "without choices" if choice is None else f"with choices[0].message as {type(message).__name__}"
        raise ProviderError(f"{url} answered {shape}, not a chat completion: {json.dumps(data)[:200]}")
    raw_calls = message.get("tool_calls")
    if raw_calls is None:
        raw_calls = []
    elif isinstance(raw_calls, dict):  # one call sent as an object, not a list of one
        raw_calls = [raw_calls]
    if not isinstance(raw_calls, list) or not all(isinstance(c, dict) for c in raw_calls):
        raise ProviderError(f"{url} answered tool_calls that are not a list of objects: {json.dumps(raw_calls)[:200]}")
    return Completion(content=_content(message.get("content"), url), raw_calls=raw_calls, usage=_usage(data, url))


def _call(session: AgentSession, ids: CallIds, index: int, raw: dict[str, Any]) -> PendingCall:
    function = raw.get("function")
    function = function if isinstance(function, dict) else {}
    return pending_call(session, ids, index, raw.get("id"), function.get("name"), function.get("arguments"))


class OpenAIAgent:
    """Chat-completions tool loop over one reused ``httpx.AsyncClient``.

    Args:
        model: model name sent to the endpoint (else ``TOOLGYM_MODEL``).
        base_url: endpoint root, e.g. ``http://127.0.0.1:8000/v1`` for vLLM (else ``OPENAI_BASE_URL``).
        api_key: bearer key (else ``OPENAI_API_KEY``; local servers usually need none).
        temperature: sampling temperature; omitted from requests when None (the server's default).
        max_tokens: completion cap per model call; omitted when None.
        system_prompt: replaces the server's instructions as the system message.
        backoff, sleep, rng: retry pacing (tests inject ``sleep`` to observe the waits without spending them).
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
        self.key = key or None
        self.key_source = KeySource(
            agent=self.spec, variable="OPENAI_API_KEY", base_url=self.base_url, public_url=DEFAULT_OPENAI_BASE_URL, base_variable="OPENAI_BASE_URL"
        )
        self.provider = ProviderClient(headers=headers, backoff=backoff, sleep=sleep, rng=rng, key_source=self.key_source)

    async def preflight(self) -> None:
        """Before the first episode: a key where one is needed, and one the endpoint accepts (``clients.agents.keys``).

        Raises:
            RunError: no key for the public endpoint, or an endpoint that cannot be reached.
            KeyRefused: the endpoint refused the key.
        """
        await check_endpoint(self.key_source, self.key, self.provider.http, f"{self.base_url}/models")

    def _body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    async def run(self, session: AgentSession) -> AgentResult:
        """Loop model ↔ tools until the model stops calling tools or an episode limit is reached."""
        tools = [openai_tool(t) for t in session.tools]
        messages: list[dict[str, Any]] = []
        system = self.system_prompt or session.instructions
        if system:
            messages.append({"role": "system", "content": system})
            session.log_message("system", system)
        messages.append({"role": "user", "content": session.prompt})
        session.log_message("user", session.prompt)
        url = f"{self.base_url}/chat/completions"
        ids = CallIds("call")
        while True:
            if session.turns_left == 0:
                return AgentResult(stop_reason="max_turns", detail=f"{session.limits.max_turns} model calls, the episode's limit")
            if session.tool_calls_left == 0:
                return AgentResult(stop_reason="max_tool_calls", detail=f"{session.limits.max_tool_calls} tool calls, the episode's limit")
            session.count_turn()
            completion = read_completion(await self.provider.post_json(url, self._body(messages, tools), session), url)
            calls = [_call(session, ids, index, raw) for index, raw in enumerate(completion.raw_calls)]
            assistant: dict[str, Any] = {"role": "assistant", "content": completion.content}
            if calls:
                assistant["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.wire_name, "arguments": c.wire_arguments()}} for c in calls
                ]
            messages.append(assistant)
            session.log_message("assistant", completion.content, tool_calls=[c.recorded() for c in calls] or None, usage=completion.usage)
            if not calls:
                return AgentResult(stop_reason="done")
            results = await run_tool_calls(session, calls)
            for call, result in zip(calls, results):
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result.text})
                session.log_message("tool", result.text, tool_call_id=call.id)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self.provider.aclose()
