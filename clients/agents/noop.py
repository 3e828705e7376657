"""The no-op agent: reads nothing, calls nothing. Every task must fail it (a grader that passes it is broken)."""

from __future__ import annotations

from typing import Literal

from clients.agents.base import AgentResult, AgentSession

__all__ = ["NoopAgent"]


class NoopAgent:
    """Does nothing and stops: the floor every rubric must reject."""

    spec = "noop"
    transport: Literal["memory"] = "memory"
    needs_instance = False
    needs_tools = False

    async def run(self, session: AgentSession) -> AgentResult:
        """End the episode without acting."""
        return AgentResult(stop_reason="done")

    async def aclose(self) -> None:
        """Nothing to release."""
