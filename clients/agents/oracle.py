"""The oracle agent: plays the task instance's reference tool calls over MCP, in order.

It goes through the same MCP client any agent uses, so an oracle run checks the whole path (transport,
dispatch, record, grading), not just the grader. A call that fails is still played through (the record
shows it); an oracle whose calls fail is a broken task, which the grade then reports. It logs no
messages: the record's tool calls are its whole conversation (``toolgym export sft`` synthesizes the chat).
"""

from __future__ import annotations

from typing import Literal

from clients.agents.base import AgentResult, AgentSession

__all__ = ["OracleAgent"]


class OracleAgent:
    """Plays ``session.instance.oracle``; free-play episodes (no task) have no oracle and end at once."""

    spec = "oracle"
    transport: Literal["memory"] = "memory"
    needs_instance = True
    needs_tools = False

    async def run(self, session: AgentSession) -> AgentResult:
        """Call every oracle tool call in order."""
        if session.instance is None:
            return AgentResult(stop_reason="done", detail="no task instance: nothing to play")
        for call in session.instance.oracle:
            await session.call_tool(call.tool, dict(call.arguments))
        return AgentResult(stop_reason="done")

    async def aclose(self) -> None:
        """Nothing to release."""
