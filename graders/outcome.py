"""Declared outcomes: what a task expects the final answer to declare, and how final answers are read.

Free text cannot be graded honestly: a substring check cannot see negation ("I could not send the wire"
mentions "send the wire") and an RL policy learns to stuff keywords. So an environment's answer tool
(the one tool marked ``@tool(answer=True)``) takes, besides free text for people and judges:

* ``outcome`` — one of the environment's outcomes, a ``Literal`` in the tool's signature, e.g.
  ``completed`` (the request was carried out or the question answered), ``refused`` (declined under the
  policy), ``escalated`` (handed to someone with the authority to decide);
* ``reason_code`` — when refusing or escalating, one of the policy's own codes (a ``Literal``: the same
  codes its tools refuse with, such as ``insufficient_funds``);
* ``values`` — named figures as strings (``{"balance": "1234.56"}``).

A task declares the outcome it expects (:class:`ExpectedOutcome`); graders check the declaration exactly
(``graders.criteria.outcome``) and check it against the world and the record (``graders.criteria.claims``).
The answer that counts is the last successful call of the answer tool.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

if TYPE_CHECKING:
    from servers.environment import Environment
    from servers.record import ToolCallEvent

__all__ = ["ExpectedOutcome", "completed", "refused", "escalated", "Answer", "answers_of", "answer_text_field", "COMPLETED"]

COMPLETED = "completed"
"""The outcome of a task carried out as asked; every other outcome declares that it was not."""


class ExpectedOutcome(BaseModel):
    """The outcome a task's final answer must declare, and the reason codes accepted with it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    outcome: str = Field(min_length=1)
    """E.g. ``completed``, ``refused``, ``escalated`` (one of the environment's outcomes)."""
    reason_codes: list[str] = Field(default_factory=list)
    """Accepted ``reason_code`` values (any one of them); required for every outcome but ``completed``."""

    @model_validator(mode="after")
    def _codes(self) -> ExpectedOutcome:
        if self.outcome != COMPLETED and not self.reason_codes:
            raise ValueError(f"outcome {self.outcome!r} needs the reason code(s) that justify it")
        if self.outcome == COMPLETED and self.reason_codes:
            raise ValueError("a completed outcome takes no reason code")
        return self

    def lint(self, environment: Environment) -> list[str]:
        """The outcome and codes must be ones the environment's answer tool accepts."""
        problems = []
        outcomes, codes = environment.outcomes, environment.reason_codes
        if not outcomes:
            problems.append(f"the task declares an outcome, but the answer tool of {environment.name!r} has no 'outcome' choices")
        elif self.outcome not in outcomes:
            problems.append(f"outcome {self.outcome!r} is not one of the answer tool's outcomes ({', '.join(outcomes)})")
        unknown = [c for c in self.reason_codes if c not in codes]
        if unknown:
            problems.append(f"reason code(s) {', '.join(unknown)} are not among the answer tool's reason codes")
        return problems

    def describe(self) -> str:
        """``refused (same_approver)``."""
        return self.outcome + (f" ({' | '.join(self.reason_codes)})" if self.reason_codes else "")


def completed() -> ExpectedOutcome:
    """The task must be carried out (or the question answered) and the answer must say so."""
    return ExpectedOutcome(outcome=COMPLETED)


def refused(*reason_codes: str) -> ExpectedOutcome:
    """The policy forbids the request: the answer must declare ``refused`` with one of ``reason_codes``."""
    return ExpectedOutcome(outcome="refused", reason_codes=list(reason_codes))


def escalated(*reason_codes: str) -> ExpectedOutcome:
    """The case must be handed on: the answer must declare ``escalated`` with one of ``reason_codes``."""
    return ExpectedOutcome(outcome="escalated", reason_codes=list(reason_codes))


@dataclass(frozen=True)
class Answer:
    """One successful call of the answer tool, read the way graders read it."""

    event: ToolCallEvent
    index: int
    """Position of the call among the episode's tool calls (0-based)."""

    @property
    def outcome(self) -> Any:
        """The declared outcome (None when the tool has no such argument or it was not given)."""
        return self.event.arguments.get("outcome")

    @property
    def reason_code(self) -> Any:
        """The declared reason code, if any."""
        return self.event.arguments.get("reason_code")

    @property
    def values(self) -> dict[str, Any]:
        """The declared values (an empty dict when none were given)."""
        values = self.event.arguments.get("values")
        return values if isinstance(values, dict) else {}

    def asserted(self, text_field: str | None = None) -> dict[str, Any]:
        """What this answer asserts: every argument but the free text.

        Why every argument: an environment's answer tool may report a figure in its own argument (``amount``)
        rather than in ``values``; two answers disagreeing on any of them are a hedge.
        """
        return {k: v for k, v in self.event.arguments.items() if k != text_field}

    def claims(self, text_field: str | None = None) -> str:
        """:meth:`asserted` as a canonical string, comparable between answers (never raises: an answer too
        deep or too odd to render is compared by its ``repr``, so a hostile answer is a claim like any other)."""
        asserted = self.asserted(text_field)
        try:
            return json.dumps(asserted, sort_keys=True, default=str)
        except (TypeError, ValueError, RecursionError):
            try:
                return repr(sorted(asserted.items(), key=lambda item: str(item[0])))
            except (RecursionError, ValueError):
                return f"<unrenderable answer #{self.event.seq}>"


def answers_of(calls: list[ToolCallEvent], tool: str) -> list[Answer]:
    """The successful calls of the answer tool ``tool``, in order."""
    return [Answer(event=e, index=i) for i, e in enumerate(calls) if e.tool == tool and e.error is None]


def answer_text_field(environment: Environment, tool: str) -> tuple[str | None, int]:
    """The answer tool's free-text argument (a plain string that is not outcome, reason_code or values) and
    its max length: the part of an answer that is for people, never graded as a claim."""
    schema = environment.tool_specs[tool].input_schema
    required = set(schema.get("required", []))
    best: tuple[str | None, int] = (None, 0)
    for name, prop in schema.get("properties", {}).items():
        if name in ("outcome", "reason_code", "values") or prop.get("type") != "string" or "enum" in prop or "pattern" in prop:
            continue
        limit = int(prop.get("maxLength", 2000))
        if best[0] is None or name in required:
            best = (name, limit)
    return best
