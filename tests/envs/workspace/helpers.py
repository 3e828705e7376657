"""Helpers for the workspace tests: a real in-memory MCP session on a fresh episode, and assertions.

Every call goes through a real ``mcp.Client`` connected to the episode (``servers.connect_in_memory``); the helpers
only read the world directly to pick test data and to check what a call changed.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from envs.workspace import environment
from fixtures.persona import Persona, Terms, plant_persona
from tests.envs.session import ToolSession, episode_session

__all__ = ["Session", "colleague", "task_session", "workspace_session"]


@dataclass
class Session(ToolSession):
    """A workspace episode and an MCP client bound to it."""

    def touched(self) -> set[tuple[str, str, tuple[Any, ...]]]:
        """(table, op, key) of every row the latest call wrote, audit log aside."""
        return {(c.table, c.op, tuple(c.key)) for c in self.last_event().changes if c.table != "audit_log"}

    def tables(self) -> set[str]:
        """Tables the latest call wrote, audit log aside."""
        return {t for t, _, _ in self.touched()}

    def audited(self) -> list[str]:
        """Actions of the audit rows the latest call wrote."""
        return [c.after["action"] for c in self.last_event().changes if c.table == "audit_log" and c.after]

    def plant(self, persona: Persona) -> None:
        """Put a colleague in chat (as a task's setup would)."""
        plant_persona(self.world, persona)


def workspace_session(seed: int = 0, **client_options: Any) -> AbstractAsyncContextManager[Session]:
    """A fresh free-play workspace episode on fixture ``seed`` with a connected client; released on exit."""
    return episode_session(Session, environment, seed=seed, **client_options)


def task_session(template_id: str, seed: int = 0) -> AbstractAsyncContextManager[Session]:
    """A fresh task episode (its setup applied, its colleague in chat) with a connected client."""
    return episode_session(Session, environment, task=template_id, seed=seed)


def colleague(name: str = "Test Colleague", **facts: str) -> Persona:
    """A colleague who knows ``facts``, confirms closing an issue and declines cancelling a meeting."""
    return Persona(name=name, wants="help", facts=facts, terms={
        "close_issue": Terms(agrees=True, reply="Yes, close it."),
        "cancel_meeting": Terms(agrees=False, reply="No, keep it."),
    })
