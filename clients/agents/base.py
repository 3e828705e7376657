"""What an agent is and what the runner hands it: the ``Agent`` protocol and the ``AgentSession``.

An agent gets one :class:`AgentSession` per episode: the prompt, a connected ``mcp.Client`` bound to the
episode (in memory or over HTTP) or, for agents that run outside this process, the episode's MCP URL; the
tools listing; its limits and clock; :meth:`AgentSession.log_message` to put its conversation into the
episode's record, and :meth:`AgentSession.reject_call` for a model's call that the agent answers itself.
Messages are logged in the OpenAI chat format (``role``, ``content``, ``tool_calls`` as
``[{id, type: "function", function: {name, arguments}}]``, ``tool_call_id``) whatever the provider, so
records of every agent export alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import mcp_types as types
from mcp import Client

from clients.agents.timing import EpisodeClock
from clients.errors import AgentStop
from clients.results import Tokens
from servers.record import CallError, MessageEvent, RejectedCallEvent

if TYPE_CHECKING:
    from graders.tasks import TaskInstance

__all__ = [
    "Agent",
    "AgentSession",
    "AgentResult",
    "Limits",
    "ToolResult",
    "Transport",
    "openai_tool",
    "result_text",
    "error_text",
    "RAW_ARGUMENTS_CAP",
]

RAW_ARGUMENTS_CAP = 4096
"""Characters of a rejected call's raw arguments kept in the record (the conversation keeps them whole)."""

Transport = Literal["memory", "http"]
"""``memory``: the agent drives the session's ``mcp.Client`` (any transport works); ``http``: the agent is
another process and needs the episode reachable at an HTTP MCP URL."""


@dataclass(frozen=True)
class Limits:
    """Bounds of one episode. The agent's own limits end it graded; the provider's, errored (see clients.blame)."""

    max_turns: int = 30
    """Model calls an LLM agent may make; then it stops with ``max_turns``."""
    max_tool_calls: int = 200
    """Tool calls that may reach the episode; further ones are refused and the agent stops with ``max_tool_calls``."""
    episode_timeout: float = 600.0
    """Seconds of the agent's own time (waits on the LLM provider excluded); then it stops with ``timeout``.
    An external (``cmd:``) agent's waits cannot be told apart: for it this is wall-clock time."""
    provider_timeout: float = 1800.0
    """Seconds an episode may spend waiting on the LLM provider (requests, retries, backoff, Retry-After);
    then it errors with ``provider_timeout`` (never scored)."""
    request_timeout: float = 120.0
    """Seconds for one request to an LLM provider, end to end: connect, first byte and the whole body."""
    max_retries: int = 4
    """Retries of one provider request after 429 / 5xx / timeout / connection errors."""


@dataclass(frozen=True)
class AgentResult:
    """How an agent's episode ended, from the agent's side."""

    stop_reason: str = "done"
    """done, max_turns, timeout, exit:N ..."""
    detail: str | None = None


@dataclass(frozen=True)
class ToolResult:
    """A tool call's outcome as an agent sees it: the text the model reads, and whether it is an error."""

    text: str
    is_error: bool
    structured: Any = None


def error_text(code: str, message: str) -> str:
    """The text of an error tool result, the same shape as the server's: ``{"error": code, "message": ...}``."""
    return json.dumps({"error": code, "message": message})


def result_text(result: types.CallToolResult) -> str:
    """The text content of a tool result (what a model is shown), blocks joined by newlines."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        else:
            parts.append(json.dumps(block.model_dump(mode="json", by_alias=True, exclude_none=True)))
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def openai_tool(tool: types.Tool) -> dict[str, Any]:
    """An MCP tool as an OpenAI chat-completions function tool (the input schema passes through as is)."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description or "",
            "parameters": tool.input_schema or {"type": "object", "properties": {}},
        },
    }


@dataclass
class AgentSession:
    """One episode as an agent sees it. Built by the runner (or :mod:`clients.rl`); agents only read it."""

    episode_id: str
    env: str
    task: str | None
    seed: int
    prompt: str
    limits: Limits
    trial: int = 0
    name: str = ""
    """The run's file-safe name for the episode (stem of its record and log files); the id when empty."""
    client: Client | None = None
    """Connected to this episode for ``memory`` agents; None for ``http`` agents (they get ``mcp_url``)."""
    tools: list[types.Tool] = field(default_factory=list)
    instructions: str | None = None
    """The server's instructions (how to use the environment), when it gives any."""
    mcp_url: str | None = None
    """The episode's streamable-HTTP MCP endpoint, when it is served over HTTP."""
    instance: TaskInstance | None = None
    """The task instance (oracle included): for the oracle agent only; never shown to a model."""
    sink: Callable[[MessageEvent | RejectedCallEvent, int], None] | None = None
    """Where logged messages and rejected calls go, with the number of tool calls that had reached the
    episode by then (their place among the record's tool calls)."""
    tokens: Tokens = field(default_factory=Tokens)
    turns: int = 0
    calls_done: int = 0
    """Tool calls that reached the episode."""
    calls_rejected: int = 0
    """Tool calls the model issued that the agent answered itself (see :meth:`reject_call`)."""
    model_faults: list[str] = field(default_factory=list)
    """Malformed output of the model the agent had to normalise before sending the conversation back
    (unparsable arguments, a tool name no provider takes ...): a provider refusing such a conversation *for
    what the model produced* refuses the model's doing (:mod:`clients.agents._provider`)."""
    id_fixes: list[str] = field(default_factory=list)
    """Tool-call ids the agent made unique (repeated or missing): the serving stack's doing, never the model's."""
    clock: EpisodeClock = field(init=False)
    """The episode's time budgets, from ``limits``: the agent's own time apart from waits on the provider."""

    def __post_init__(self) -> None:
        self.clock = EpisodeClock(self.limits.episode_timeout, self.limits.provider_timeout)

    def log_message(
        self,
        role: str,
        content: Any = None,
        *,
        tool_calls: list[dict[str, Any]] | None = None,
        tool_call_id: str | None = None,
        usage: dict[str, int] | None = None,
    ) -> None:
        """Put one conversation message into the episode's record (and add its token usage to the totals)."""
        if usage:
            prompt = int(usage.get("prompt", 0))
            completion = int(usage.get("completion", 0))
            total = int(usage.get("total", prompt + completion))
            usage = {"prompt": prompt, "completion": completion, "total": total}
            self.tokens = Tokens(
                prompt=self.tokens.prompt + prompt,
                completion=self.tokens.completion + completion,
                total=self.tokens.total + total,
            )
        event = MessageEvent(role=role, content=content, tool_calls=tool_calls, tool_call_id=tool_call_id, usage=usage)
        if self.sink is not None:
            self.sink(event, self.calls_done)

    def reject_call(self, call_id: str, tool: str, raw_arguments: str, error: CallError) -> ToolResult:
        """Record a model's call that never reaches the episode, and return the error result the model gets.

        The record keeps the raw arguments cut to :data:`RAW_ARGUMENTS_CAP` characters (the assistant message
        already holds them whole), so a refused megabyte is not stored twice.
        """
        event = RejectedCallEvent(
            call_id=call_id, tool=tool, raw_arguments=raw_arguments[:RAW_ARGUMENTS_CAP], raw_size=len(raw_arguments), error=error
        )
        self.calls_rejected += 1
        if self.sink is not None:
            self.sink(event, self.calls_done)
        return ToolResult(text=error_text(error.code, error.message), is_error=True)

    def count_turn(self) -> None:
        """Count one model call against ``limits.max_turns``."""
        self.turns += 1

    @property
    def turns_left(self) -> int:
        """Model calls still allowed."""
        return max(0, self.limits.max_turns - self.turns)

    @property
    def tool_calls_left(self) -> int:
        """Tool calls that may still reach the episode."""
        return max(0, self.limits.max_tool_calls - self.calls_done)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None) -> ToolResult:
        """Call a tool of the episode through its MCP client.

        Raises:
            AgentStop: ``max_tool_calls`` calls already reached the episode.
            RuntimeError: the session has no client (an ``http`` agent must connect by itself).
        """
        if self.client is None:
            raise RuntimeError("this session has no MCP client (the agent runs out of process; use mcp_url)")
        if self.tool_calls_left == 0:
            raise AgentStop("max_tool_calls", f"{self.limits.max_tool_calls} tool calls reached the episode, its limit")
        try:
            result = await self.client.call_tool(name, arguments or {})
        finally:
            self.calls_done += 1
        return ToolResult(text=result_text(result), is_error=bool(result.is_error), structured=result.structured_content)


@runtime_checkable
class Agent(Protocol):
    """Something that plays episodes. One agent object serves every episode of a run, concurrently."""

    spec: str
    """The spec string it was made from (goes into results lines)."""
    transport: Transport
    needs_instance: bool
    """The runner must fill ``session.instance`` (the oracle); never true for agents that face a model."""
    needs_tools: bool
    """The runner must list the episode's tools into ``session.tools`` (a model needs them; a script does not)."""

    async def run(self, session: AgentSession) -> AgentResult:
        """Play one episode; return how it ended. Raise InfrastructureError for failures that are not the agent's."""
        ...

    async def aclose(self) -> None:
        """Release what the agent holds across episodes (HTTP clients); idempotent."""
        ...
