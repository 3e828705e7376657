"""The answer tool: how the agent hands in its final answer (graders read it from the call's arguments).

Its ``outcome`` and ``reason_code`` choices are the policy's (``rules.OUTCOMES`` / ``rules.REASON_CODES``):
the schema the agent reads lists them, and graders accept exactly these (``Environment.outcomes``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from envs.support import models as m
from envs.support.rules import OUTCOMES, REASON_CODES, now_iso
from servers.tools import ToolContext, tool

__all__ = ["submit_answer"]

Outcome = Literal[OUTCOMES]  # type: ignore[valid-type]
ReasonCode = Literal[REASON_CODES]  # type: ignore[valid-type]
_ValueName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")]
_Value = Annotated[str, Field(max_length=200)]


@tool(answer=True, title="Submit answer")
async def submit_answer(
    ctx: ToolContext,
    answer: Annotated[str, Field(min_length=1, max_length=4000, description="Your final answer, in plain words")],
    outcome: Annotated[
        Outcome,
        Field(description="completed: you did what was asked (or answered the question); refused: the policy does not allow "
                          "it; escalated: you handed it to the team that must decide"),
    ],
    reason_code: Annotated[
        ReasonCode | None,
        Field(description="With refused or escalated: the policy rule's code (the code a tool refuses with)"),
    ] = None,
    values: Annotated[
        dict[_ValueName, _Value],
        Field(max_length=20, description='Named figures the task asks for, as strings, e.g. {"refund": "42.50"}'),
    ] | None = None,
) -> m.AnswerReceipt:
    """Give your final answer when the case is done, or cannot be done under the policy. Declare the outcome (and,
    when refusing or escalating, the reason code of the rule); put the figures the task asks for in `values`, and
    nothing else there. Call it once, last: it changes nothing in the shop's systems."""
    # deliberately writes nothing: the record keeps the arguments, so an answer never shows in the world's diff
    return m.AnswerReceipt(received=True, submitted_at=now_iso(ctx), value_names=sorted(values or {}))
