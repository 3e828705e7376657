"""Helpers for the support tests: a real in-memory MCP session on a fresh episode, and assertions.

Every call goes through a real ``mcp.Client`` connected to the episode (``servers.connect_in_memory``);
the helpers only read the world directly to pick test data and to check what a call changed.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from envs.support import environment
from fixtures.persona import Persona, Terms, plant_persona
from tests.envs.session import ToolSession, episode_session

__all__ = ["Session", "support_session", "task_session"]


@dataclass
class Session(ToolSession):
    """A support episode and an MCP client bound to it."""

    def touched(self) -> set[tuple[str, str, tuple[Any, ...]]]:
        """(table, op, key) of every row the latest call wrote, audit log aside."""
        return {(c.table, c.op, tuple(c.key)) for c in self.last_event().changes if c.table != "audit_log"}

    def audited(self) -> list[str]:
        """Actions of the audit rows the latest call wrote."""
        return [c.after["action"] for c in self.last_event().changes if c.table == "audit_log" and c.after]

    def plant(self, persona: Persona) -> None:
        """Put a customer on the line (as a task's setup would)."""
        plant_persona(self.world, persona)

    async def verify(self, customer_id: str) -> None:
        """Verify a customer's identity with the right answers (the test plays the customer)."""
        row = self.one("SELECT email, date_of_birth FROM customers WHERE customer_id = ?", (customer_id,))
        result = await self.ok("verify_identity", customer_id=customer_id, email=row["email"], date_of_birth=row["date_of_birth"])
        assert result["verified"] is True


def support_session(seed: int = 0, **client_options: Any) -> AbstractAsyncContextManager[Session]:
    """A fresh free-play support episode on fixture ``seed`` with a connected client; released on exit."""
    return episode_session(Session, environment, seed=seed, **client_options)


def task_session(template_id: str, seed: int = 0) -> AbstractAsyncContextManager[Session]:
    """A fresh task episode (its setup applied, its customer on the line) with a connected client."""
    return episode_session(Session, environment, task=template_id, seed=seed)


def persona(name: str = "Test Customer", **facts: str) -> Persona:
    """A persona that knows ``facts`` and agrees to a refund to the card but not to store credit."""
    return Persona(name=name, wants="help", facts=facts, terms={
        "refund_original_payment": Terms(agrees=True, reply="Yes please."),
        "refund_store_credit": Terms(agrees=False, reply="No thanks."),
        "partial_refund": Terms(agrees=True, reply="If it's at least 20.", min_amount="20.00"),
    })


__all__ += ["persona"]
