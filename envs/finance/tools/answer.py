"""The answer tool: how the agent hands in its final answer (graders read it from the call's arguments)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from envs.finance import models as m
from envs.finance.rules import now_iso
from servers.tools import ToolContext, tool

__all__ = ["submit_answer"]

_ValueName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")]
_Value = Annotated[str, Field(max_length=200)]


@tool(answer=True, title="Submit answer")
async def submit_answer(
    ctx: ToolContext,
    answer: Annotated[str, Field(min_length=1, max_length=4000, description="Your final answer to the task, in plain words")],
    values: Annotated[
        dict[_ValueName, _Value],
        Field(max_length=20, description='Named figures of the answer, e.g. {"balance": "1234.56", "currency": "USD"}'),
    ] | None = None,
) -> m.AnswerReceipt:
    """Give your final answer when the task is done (or cannot be done, saying why). Put figures the task
    asks for in `values` as decimal strings. This changes nothing in the bank's systems."""
    # deliberately writes nothing: the record keeps the arguments, so an answer never shows in the world's diff
    return m.AnswerReceipt(received=True, submitted_at=now_iso(ctx), value_names=sorted(values or {}))
