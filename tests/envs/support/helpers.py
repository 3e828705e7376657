"""Helpers for the support tests: a real in-memory MCP session on a fresh episode, and assertions.

Every call goes through a real ``mcp.Client`` connected to the episode (``servers.connect_in_memory``);
the helpers only read the world directly to pick test data and to check what a call changed.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from mcp import Client
from mcp_types import CallToolResult

from envs.support import environment
from fixtures.persona import Persona, Terms, plant_persona
from servers import Episode, EpisodeManager, ToolCallEvent, connect_in_memory

__all__ = ["Session", "support_session", "task_session"]


@dataclass
class Session:
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

    def touched(self) -> set[tuple[str, str, tuple[Any, ...]]]:
        """(table, op, key) of every row the latest call wrote, audit log aside."""
        return {(c.table, c.op, tuple(c.key)) for c in self.last_event().changes if c.table != "audit_log"}

    def audited(self) -> list[str]:
        """Actions of the audit rows the latest call wrote."""
        return [c.after["action"] for c in self.last_event().changes if c.table == "audit_log" and c.after]

    def next_id(self, table: str, column: str) -> str:
        """The id the next row of ``table`` will get (ids continue each table's fixed-width sequence)."""
        last = self.one(f"SELECT max({column}) AS m FROM {table}")["m"]
        prefix, number = last.split("-")
        return f"{prefix}-{int(number) + 1:0{len(number)}d}"

    def plant(self, persona: Persona) -> None:
        """Put a customer on the line (as a task's setup would)."""
        plant_persona(self.world, persona)

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
        before = self.world.hash()
        result = await self.call(name, **arguments)
        text = result.content[0].text  # type: ignore[union-attr]
        assert result.is_error, f"{name} should have failed with {code}, got {text}"
        payload = json.loads(text)
        assert payload["error"] == code, f"{name}: expected {code}, got {payload}"
        assert payload["message"], "every refusal explains itself"
        assert self.world.hash() == before, f"{name} refused with {code} but changed the world"
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

    async def verify(self, customer_id: str) -> None:
        """Verify a customer's identity with the right answers (the test plays the customer)."""
        row = self.one("SELECT email, date_of_birth FROM customers WHERE customer_id = ?", (customer_id,))
        result = await self.ok("verify_identity", customer_id=customer_id, email=row["email"], date_of_birth=row["date_of_birth"])
        assert result["verified"] is True


@asynccontextmanager
async def support_session(seed: int = 0, **client_options: Any) -> AsyncIterator[Session]:
    """A fresh free-play support episode on fixture ``seed`` with a connected client; released on exit."""
    manager = EpisodeManager(environment)
    episode = manager.create(seed=seed)
    try:
        async with connect_in_memory(episode, **client_options) as client:
            yield Session(episode, client)
    finally:
        manager.close_all()


@asynccontextmanager
async def task_session(template_id: str, seed: int = 0) -> AsyncIterator[Session]:
    """A fresh task episode (its setup applied, its customer on the line) with a connected client."""
    manager = EpisodeManager(environment)
    episode = manager.create(task=template_id, seed=seed)
    try:
        async with connect_in_memory(episode) as client:
            yield Session(episode, client)
    finally:
        manager.close_all()


def persona(name: str = "Test Customer", **facts: str) -> Persona:
    """A persona that knows ``facts`` and agrees to a refund to the card but not to store credit."""
    return Persona(name=name, wants="help", facts=facts, terms={
        "refund_original_payment": Terms(agrees=True, reply="Yes please."),
        "refund_store_credit": Terms(agrees=False, reply="No thanks."),
        "partial_refund": Terms(agrees=True, reply="If it's at least 20.", min_amount="20.00"),
    })


__all__ += ["persona"]
