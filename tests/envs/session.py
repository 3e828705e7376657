"""What every environment's tool tests share: a real in-memory MCP session on a fresh episode, and assertions.

Every call goes through a real ``mcp.Client`` connected to the episode (``servers.connect_in_memory``); the
helpers only read the world directly to pick test data and to check what a call changed. An environment's
``helpers.py`` subclasses :class:`ToolSession` with what is its own (how a customer is verified, which
writes count as touched).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp import Client
from mcp_types import CallToolResult

from graders.grade import Grade
from graders.grading import grade_episode
from graders.play import CallLike, PlayedCall, play
from servers import Environment, Episode, EpisodeManager, ToolCallEvent, connect_in_memory

__all__ = ["ToolSession", "episode_session", "play_graded"]

S = TypeVar("S", bound="ToolSession")


@dataclass
class ToolSession:
    """An episode and an MCP client bound to it."""

    episode: Episode
    client: Client

    @property
    def world(self) -> Any:
        """The episode's world (for choosing test data and checking effects)."""
        return self.episode.world

    def one(self, sql: str, params: tuple[Any, ...] = ()) -> dict[str, Any]:
        """The first row of a query on the world; fails the test when there is none."""
        rows = self.world.query(sql, params)
        assert rows, f"the fixture has no row for: {sql} {params}"
        return rows[0]

    def last_event(self) -> ToolCallEvent:
        """The record's latest tool call."""
        return self.episode.record.tool_calls[-1]

    def next_id(self, table: str, column: str) -> str:
        """The id the next row of ``table`` will get (ids continue each table's fixed-width sequence)."""
        last = self.one(f"SELECT max({column}) AS m FROM {table}")["m"]
        prefix, number = last.split("-")
        return f"{prefix}-{int(number) + 1:0{len(number)}d}"

    async def call(self, name: str, /, **arguments: Any) -> CallToolResult:
        """Call a tool as an MCP client would."""
        return await self.client.call_tool(name, arguments)

    async def ok(self, name: str, /, **arguments: Any) -> dict[str, Any]:
        """Call a tool that must succeed; returns its structured result."""
        result = await self.call(name, **arguments)
        assert not result.is_error, f"{name} failed: {result.content[0].text}"  # type: ignore[union-attr]
        assert result.structured_content is not None
        return result.structured_content

    async def error(self, name: str, code: str, /, **arguments: Any) -> dict[str, Any]:
        """Call a tool that must fail with ``code`` and write nothing; returns the error payload."""
        diff, content = self.world.diff(), self.world.hash()
        result = await self.call(name, **arguments)
        text = result.content[0].text  # type: ignore[union-attr]
        assert result.is_error, f"{name} should have failed with {code}, got {text}"
        payload = json.loads(text)
        assert payload["error"] == code, f"{name}: expected {code}, got {payload}"
        assert payload["message"], "every refusal explains itself"
        assert self.world.diff() == diff and self.world.hash() == content, f"{name} refused with {code} but changed the world"
        assert self.last_event().changes == []
        return payload

    async def refused(self, name: str, code: str, /, **arguments: Any) -> str:
        """A business-rule refusal (error class ``refused``); returns its message."""
        payload = await self.error(name, code, **arguments)
        assert self.last_event().error is not None and self.last_event().error.error_class == "refused"  # type: ignore[union-attr]
        return str(payload["message"])

    async def invalid(self, name: str, /, **arguments: Any) -> str:
        """A call refused by argument validation (``invalid_arguments``); returns its message."""
        payload = await self.error(name, "invalid_arguments", **arguments)
        return str(payload["message"])


@asynccontextmanager
async def episode_session(
    session: type[S], environment: Environment, *, task: str | None = None, seed: int = 0, **client_options: Any
) -> AsyncIterator[S]:
    """A fresh episode of ``environment`` (free play, or ``task``'s with its setup applied) with a connected
    client, as a ``session``; released on exit."""
    manager = EpisodeManager(environment)
    episode = manager.create(task=task, seed=seed)
    try:
        async with connect_in_memory(episode, **client_options) as client:
            yield session(episode, client)
    finally:
        manager.close_all()


async def play_graded(environment: Environment, template_id: str, seed: int, calls: Sequence[CallLike], *,
                      judge_from_env: bool = True) -> tuple[Grade, list[PlayedCall]]:
    """Play ``calls`` (none: the no-op) in a fresh episode of (template, seed) through the real MCP path, close it,
    and grade it: the grade and each played call. The task tests' one way to score a trajectory."""
    manager = EpisodeManager(environment)
    try:
        episode = manager.create(task=template_id, seed=seed)
        played = await play(episode, calls) if calls else []
        manager.close(episode.id)
        return await grade_episode(episode, judge_from_env=judge_from_env), played
    finally:
        manager.close_all()
