"""Helpers for the finance tests: a real in-memory MCP session on a fresh episode, and assertions.

Every call goes through a real ``mcp.Client`` connected to the episode (``servers.connect_in_memory``);
the helpers only read the world directly to pick test data and to check what a call changed.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from envs.finance import environment
from fixtures.changes import RowChange
from tests.envs.session import ToolSession, episode_session

__all__ = ["Session", "finance_session", "changed_keys"]


def changed_keys(diff: list[RowChange]) -> set[tuple[str, str, tuple[Any, ...]]]:
    """(table, op, key) of every net change: what a test compares against what an action should touch."""
    return {(c.table, c.op, tuple(c.key)) for c in diff}


@dataclass
class Session(ToolSession):
    """A finance episode and an MCP client bound to it."""

    def touched(self) -> set[tuple[str, str, tuple[Any, ...]]]:
        """(table, op, key) of every row the latest call wrote."""
        return {(c.table, c.op, tuple(c.key)) for c in self.last_event().changes}

    def next_ids(self, table: str, column: str, count: int) -> list[str]:
        """The next ``count`` ids of ``table``."""
        first = self.next_id(table, column)
        prefix, number = first.split("-")
        return [f"{prefix}-{int(number) + i:0{len(number)}d}" for i in range(count)]

    async def verify(self, customer_id: str) -> None:
        """Verify a customer's identity with the right answers (the test plays the customer)."""
        row = self.one("SELECT id_last4, postcode FROM customers WHERE customer_id = ?", (customer_id,))
        result = await self.ok("verify_identity", customer_id=customer_id, id_last4=row["id_last4"], postcode=row["postcode"])
        assert result["verified"] is True


def finance_session(seed: int = 0, **client_options: Any) -> AbstractAsyncContextManager[Session]:
    """A fresh free-play finance episode on fixture ``seed`` with a connected client; released on exit."""
    return episode_session(Session, environment, seed=seed, **client_options)
