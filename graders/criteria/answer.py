"""Answer checks: what the agent answered through the environment's answer tool.

The answer is read from the arguments of the last successful call of the answer tool (the tool marked
``@tool(answer=True)``), so an agent that answers several times is judged on its final word. Values are
compared with matchers: exact values, numbers as Decimals with a tolerance (money is never a float),
case/whitespace-insensitive text, all-of / any-of facts.

What an answer says is read as a careful person would read it, no more leniently:

* a plain string expectation is compared without surrounding whitespace; when it is an **enumerated
  value** — lower-case ASCII words joined by ``_`` (``pending_approval``, ``in_transit``: a status or a
  choice, the kit's vocabulary) — letter case does not matter either (``PENDING_APPROVAL`` is the same
  status). Anything else (an identifier such as ``TCK-01028``, a date, a name) stays exact: ids are
  case-sensitive, and free text has its own matchers (``text``, ``facts``);
* a figure is in the currency the task asks for: the matcher's ``currency`` when the rubric gives it, else
  the one the oracle's own answer gives that figure in (``"62481.02 USD is available"``), else the
  environment's own (``Environment.currency``: a shop in US dollars). A figure labelled with another
  currency fails; an unlabelled one is read as it stands.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from fixtures.errors import GradingError
from graders.criteria.base import CriterionBase, CriterionResult, tool_argument_names
from graders.criteria.matchers import Eq, MatcherField, Number, lookup, short
from graders.criteria.numbers import SYMBOL_CURRENCIES, read_number
from graders.criteria.transcript import render_call

if TYPE_CHECKING:
    from graders.context import GradingContext
    from graders.tasks import TaskInstance
    from servers.environment import Environment

__all__ = ["AnswerCheck", "answer_tool_of", "asked_currency", "is_enumerated", "match_answer"]

_ENUMERATED = re.compile(r"[a-z]+(?:_[a-z]+)*")


def is_enumerated(value: str) -> bool:
    """Whether ``value`` is an enumerated value (``pending_approval``): lower-case ASCII words joined by ``_``."""
    return _ENUMERATED.fullmatch(value) is not None


def match_answer(expect: Any, actual: Any) -> tuple[bool, str]:
    """``expect.check(actual)``, reading a plain-string expectation as the module docstring says."""
    if not (isinstance(expect, Eq) and isinstance(expect.value, str) and isinstance(actual, str)):
        return expect.check(actual)
    wanted, given = expect.value, actual.strip()
    if given == wanted:
        return True, f"= {short(wanted)}"
    if is_enumerated(wanted) and given.isascii() and given.lower() == wanted:
        return True, f"= {short(wanted)} (letter case aside)"
    return False, f"expected {short(wanted)}, got {short(actual)}"


def _currency_near(figure: str, text: str) -> str | None:
    """The currency written next to ``figure`` in ``text`` (``"62481.02 USD"``, ``"USD 62481.02"``, ``"€5"``)."""
    escaped = re.escape(figure)
    after = re.search(rf"(?<![0-9.,]){escaped}(?![0-9])[ ]?([A-Z]{{3}})\b", text)
    if after:
        return after.group(1)
    before = re.search(rf"\b([A-Z]{{3}})[ ]?{escaped}(?![0-9])", text)
    if before:
        return before.group(1)
    symbol = re.search(rf"([{''.join(SYMBOL_CURRENCIES)}])[ ]?{escaped}(?![0-9])", text)
    if symbol and len(SYMBOL_CURRENCIES[symbol.group(1)]) == 1:
        return next(iter(SYMBOL_CURRENCIES[symbol.group(1)]))
    return None


def asked_currency(instance: TaskInstance, tool: str, field: str) -> str | None:
    """The currency the task asks the figure ``field`` in, as its oracle's final answer gives it (or None).

    The label on the oracle's own value wins; else the currency written next to that figure in the oracle's
    answer text (an oracle reports "62481.02 USD is available" with ``values.available = "62481.02"``).
    """
    final = next((step for step in reversed(instance.oracle) if step.tool == tool), None)
    if final is None:
        return None
    value = lookup(final.arguments, field)
    read = read_number(value)
    if read.value is None or not isinstance(value, str):
        return None
    if read.currency is not None:
        return read.currency
    if read.symbol is not None and len(SYMBOL_CURRENCIES[read.symbol]) == 1:
        return next(iter(SYMBOL_CURRENCIES[read.symbol]))
    for name, text in sorted(final.arguments.items()):
        if isinstance(text, str) and name != field:
            found = _currency_near(value.strip(), text)
            if found is not None:
                return found
    return None


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
        expect = self.expect
        if isinstance(expect, Number) and expect.currency is None:
            currency = asked_currency(ctx.instance, tool, self.field) or ctx.environment.currency
            if currency is not None:
                expect = expect.model_copy(update={"currency": currency})
        why = ""
        for event in reversed(candidates):
            value = lookup(event.arguments, self.field)
            ok, why = match_answer(expect, value)
            if ok:
                return self.result(True, f"{render_call(event)}: {self.field} {why}")
        last = candidates[-1]
        return self.result(False, f"{render_call(last)}: {self.field} = {short(lookup(last.arguments, self.field))}: {why}")
