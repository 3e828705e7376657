"""The answer tool every environment gives its agents: the final answer, a declared outcome, the figures asked for.

Graders read the agent's answer from this tool's arguments (``graders/outcome.py``): ``answer`` (free text,
never credited on its own), ``outcome`` (one of the environment's outcomes), ``reason_code`` (with refused or
escalated: the policy rule's code) and ``values`` (named figures). Declared once here, so every environment
offers the same protocol and the graders can rely on its names; an environment supplies its choices, its
receipt model and its wording (:func:`answer_tool`).

No ``from __future__ import annotations`` here: the tool's annotations must be real objects, built from the
environment's choices when :func:`answer_tool` runs.
"""

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field

from servers.tools import ToolContext, ToolFn, tool

__all__ = ["answer_tool"]

_ValueName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")]
_Value = Annotated[str, Field(max_length=200)]


def _none_as_empty(values: Any) -> Any:
    """``null`` means no values, as an empty object does (clients of the older ``anyOf`` schema send it)."""
    return {} if values is None else values


_Values = Annotated[dict[_ValueName, _Value], BeforeValidator(_none_as_empty)]
"""Declared a plain object with a default of ``{}``, not ``anyOf [object, null]``: simple clients (MCP Inspector
0.15's form) cannot send an ``anyOf``, and graders read a missing, empty or null ``values`` alike."""

OUTCOME_HELP = (
    "completed: you did what was asked (or answered the question) and escalated nothing; refused: the policy does "
    "not allow it; escalated: you handed the case, or part of it, to another team with an escalation tool, even "
    "if you also did the rest"
)
"""One rule for every environment: an episode that escalates declares ``escalated`` (``rubric_lint`` holds
every template to it), so an agent never has to guess which of two honest labels a grader wants."""
REASON_CODE_HELP = "With refused or escalated: the policy rule's code (the code a tool refuses with)"


def answer_tool(
    *,
    outcomes: Sequence[str],
    reason_codes: Sequence[str],
    receipt: type[BaseModel],
    now: Callable[[ToolContext], str],
    answer_help: str,
    values_help: str,
    description: str,
) -> ToolFn:
    """The ``submit_answer`` tool of an environment.

    Args:
        outcomes, reason_codes: the policy's choices (the schema the agent reads lists them; graders accept
            exactly these, ``Environment.outcomes`` / ``reason_codes``).
        receipt: the model returned, with fields ``received``, ``submitted_at`` and ``value_names``.
        now: the world's time as the receipt shows it.
        answer_help, values_help, description: the wording of the ``answer`` and ``values`` arguments and of
            the tool, in the environment's terms.
    """
    outcome_type: Any = Literal[tuple(outcomes)]
    reason_code_type: Any = Literal[tuple(reason_codes)]

    async def submit_answer(
        ctx: ToolContext,
        answer: Annotated[str, Field(min_length=1, max_length=4000, description=answer_help)],
        outcome: Annotated[outcome_type, Field(description=OUTCOME_HELP)],
        reason_code: Annotated[reason_code_type | None, Field(description=REASON_CODE_HELP)] = None,
        values: Annotated[_Values, Field(max_length=20, description=values_help)] = {},  # noqa: B006 - pydantic copies it
    ) -> receipt:  # type: ignore[valid-type]
        # deliberately writes nothing: the record keeps the arguments, so an answer never shows in the world's diff
        return receipt(received=True, submitted_at=now(ctx), value_names=sorted(values or {}))

    submit_answer.__doc__ = description
    submit_answer.__qualname__ = "submit_answer"
    return tool(answer=True, title="Submit answer")(submit_answer)
