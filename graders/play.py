"""Playing a fixed sequence of tool calls into an episode over a real MCP client.

Oracles and negatives are scripts of :class:`~graders.tasks.ToolCall`; meta-evaluation, the pytest plugin
and replay-style agents play them exactly as an agent would — through ``mcp.Client.call_tool`` — so what
gets graded went through the same validation, dispatch and record as any external agent's calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mcp import Client
from mcp_types import CallToolResult, TextContent

from graders.tasks import ToolCall
from servers.dispatch import call_tool
from servers.episodes import Episode, EpisodeManager
from servers.memory import connect_in_memory

__all__ = ["PlayedCall", "play", "play_direct", "play_new", "as_tool_call"]

CallLike = ToolCall | tuple[str, dict[str, Any]] | dict[str, Any]
"""A ``ToolCall``, a ``(tool, arguments)`` pair, or ``{"tool": ..., "arguments": ...}``."""


@dataclass(frozen=True)
class PlayedCall:
    """One played call and what the server answered."""

    call: ToolCall
    result: CallToolResult

    @property
    def ok(self) -> bool:
        """Whether the tool call succeeded."""
        return not self.result.is_error

    @property
    def data(self) -> Any:
        """The structured result of a successful call, or the error payload ``{"error", "message"}``."""
        if self.result.structured_content is not None:
            return self.result.structured_content
        texts = [c.text for c in self.result.content if isinstance(c, TextContent)]
        if len(texts) == 1:
            try:
                return json.loads(texts[0])
            except json.JSONDecodeError:
                return texts[0]
        return texts

    @property
    def error_code(self) -> str | None:
        """The error code of a failed call (``invalid_arguments``, a domain code...), else None."""
        if self.ok:
            return None
        data = self.data
        return data.get("error") if isinstance(data, dict) else "error"


def as_tool_call(value: CallLike) -> ToolCall:
    """Normalise the accepted call spellings into a :class:`ToolCall`."""
    if isinstance(value, ToolCall):
        return value
    if isinstance(value, tuple) and len(value) == 2:
        return ToolCall(tool=value[0], arguments=dict(value[1]))
    if isinstance(value, dict):
        return ToolCall.model_validate(value)
    raise TypeError(f"cannot play {value!r}: give a ToolCall, a (tool, arguments) pair or a dict")


async def play(
    episode: Episode,
    calls: Iterable[CallLike],
    *,
    client: Client | None = None,
    stop_on_error: bool = False,
) -> list[PlayedCall]:
    """Call each tool of ``calls`` in order on ``episode`` over MCP and return what each returned.

    Args:
        episode: a live episode.
        calls: the script to play.
        client: an open client bound to the episode; by default a fresh in-memory client is opened and closed.
        stop_on_error: stop after the first call that returns an error (default: play everything, as a
            negative trajectory must be played in full to be graded).
    """
    script: Sequence[ToolCall] = [as_tool_call(c) for c in calls]
    if client is None:
        async with connect_in_memory(episode) as own:
            return await _play(own, script, stop_on_error)
    return await _play(client, script, stop_on_error)


async def _play(client: Client, script: Sequence[ToolCall], stop_on_error: bool) -> list[PlayedCall]:
    played: list[PlayedCall] = []
    for step in script:
        result = await client.call_tool(step.tool, step.arguments)
        played.append(PlayedCall(call=step, result=result))
        if stop_on_error and result.is_error:
            break
    return played


async def play_direct(episode: Episode, calls: Iterable[CallLike]) -> None:
    """Call each tool of ``calls`` in order on ``episode`` through dispatch, without an MCP client.

    Why: ``toolgym check`` plays a hundred trajectories per instance; the MCP round trip (client and server
    machinery, output-schema validation) was a third of its cost and adds nothing to a grade — the server's
    handler is this same dispatch, so the record, the world and the grade are identical. The check keeps one
    full MCP pass per instance (the oracle) for protocol coverage.
    """
    for step in (as_tool_call(c) for c in calls):
        await call_tool(episode, step.tool, step.arguments)


async def play_new(manager: EpisodeManager, template_id: str, seed: int, calls: Iterable[CallLike]) -> Episode:
    """A new episode of the instance (``template_id``, ``seed``) with ``calls`` played through dispatch.

    Why: the check's trajectories on one instance mostly share their first calls (the oracle's work, then
    another answer). The episode starts from a world that already played the longest such prefix
    (``EpisodeManager.create``'s ``prefix``: the same world, events and ids as playing it again) and only
    the rest is dispatched.
    """
    steps = [as_tool_call(c) for c in calls]
    episode = manager.create(task=template_id, seed=seed, prefix=[(s.tool, s.arguments) for s in steps])
    await play_direct(episode, steps[episode.seq:])
    return episode
