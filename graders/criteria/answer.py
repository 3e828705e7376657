"""Answer checks: what the agent answered through the environment's answer tool.

The answer is read from the arguments of the last successful call of the answer tool (the tool marked
``@tool(answer=True)``), so an agent that answers several times is judged on its final word. Values are
compared with matchers: exact values, numbers as Decimals with a tolerance (money is never a float),
case/whitespace-insensitive text, all-of / any-of facts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from fixtures.errors import GradingError
from graders.criteria.base import CriterionBase, CriterionResult, tool_argument_names
from graders.criteria.matchers import MatcherField, lookup, short
from graders.criteria.transcript import render_call

if TYPE_CHECKING:
    from graders.context import GradingContext
    from servers.environment import Environment

__all__ = ["AnswerCheck", "answer_tool_of"]


def answer_tool_of(environment: Environment, tool: str | None) -> str:
    """The answer tool to read: ``tool`` when given, else the environment's only answer tool.

    Raises:
        GradingError: ``tool`` is None and the environment has no answer tool, or several.
    """
    if tool is not None:
        return tool
    tools = environment.answer_tools
    if len(tools) != 1:
        raise GradingError(
            f"environment {environment.name!r} has {len(tools)} answer tools ({', '.join(tools) or 'none'}); "
            "name one with AnswerCheck(tool=...)"
        )
    return tools[0]


class AnswerCheck(CriterionBase):
    """The answer's ``field`` (an argument name, dotted paths allowed) matches ``expect``."""

    kind: Literal["answer"] = "answer"
    field: str
    expect: MatcherField
    tool: str | None = None
    """The answer tool (default: the environment's only ``answer=True`` tool)."""
    use: Literal["last", "any"] = "last"
    """Judge the last successful answer (default), or pass if any answer matches."""

    def describe(self) -> str:
        """``answer.values.amount`` (the expected value stays in the evidence, never in the name)."""
        return f"answer.{self.field}"

    def lint(self, environment: Environment) -> list[str]:
        """The answer tool must exist and take ``field``."""
        try:
            tool = answer_tool_of(environment, self.tool)
        except GradingError as exc:
            return [str(exc)]
        names = tool_argument_names(environment, tool)
        if names is None:
            return [f"answer check names tool {tool!r}, which environment {environment.name!r} does not have"]
        if self.field.split(".")[0] not in names:
            return [f"answer check reads {self.field!r}, but {tool!r} takes only {', '.join(sorted(names))}"]
        return []

    def evaluate(self, ctx: GradingContext) -> CriterionResult:
        """Find the answer and match the field."""
        tool = answer_tool_of(ctx.environment, self.tool)
        answers = [e for e in ctx.calls if e.tool == tool and e.error is None]
        if not answers:
            failed = sum(1 for e in ctx.calls if e.tool == tool)
            extra = f" ({failed} failed attempt(s))" if failed else ""
            return self.result(False, f"no successful call of {tool}: the agent gave no answer{extra}")
        candidates = answers[-1:] if self.use == "last" else answers
        why = ""
        for event in reversed(candidates):
            value = lookup(event.arguments, self.field)
            ok, why = self.expect.check(value)
            if ok:
                return self.result(True, f"{render_call(event)}: {self.field} {why}")
        last = candidates[-1]
        return self.result(False, f"{render_call(last)}: {self.field} = {short(lookup(last.arguments, self.field))}: {why}")
