"""Rubric criteria, one module per kind, joined into one serialisable discriminated union ``Criterion``.

| kind              | model           | reads                                        |
|-------------------|-----------------|----------------------------------------------|
| ``state``         | StateCheck      | a read query over the end world              |
| ``change_set``    | ChangeSetMatch  | the episode's net diff vs the oracle's       |
| ``no_collateral`` | NoCollateral    | the net diff vs the task's allowed changes   |
| ``tool_called``   | ToolCalled      | the record's tool calls                      |
| ``any_tool_called`` | AnyToolCalled | the record's tool calls (one of several)    |
| ``tool_not_called`` | ToolNotCalled | the record's tool calls                      |
| ``call_order``    | CallOrder       | the record's tool calls, in order            |
| ``call_budget``   | CallBudget      | call and agent-error counts                  |
| ``seen``          | Seen            | rows and fields the calls' results showed, before the decision |
| ``agreements``    | Agreements      | proposals a counterpart accepted vs the task's |
| ``before_writes`` | BeforeWrites    | a call that must precede every write         |
| ``answer``        | AnswerCheck     | the answer tool's arguments                  |
| ``answer_omits``  | AnswerOmits     | every answer call, normalised: no protected value said |
| ``outcome``       | DeclaredOutcome | the final answer's declared outcome and code |
| ``claims``        | ClaimsConsistent | the final answer against the record and world |
| ``judge``         | LLMJudge        | an OpenAI-compatible judge endpoint          |
| ``custom``        | CustomCheck     | a ``@criterion`` Python function             |
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from graders.criteria.agreement import Agreements, BeforeWrites, agreement_terms
from graders.criteria.answer import AnswerCheck
from graders.criteria.base import CriterionBase, CriterionResult
from graders.criteria.changes import ChangeSetMatch
from graders.criteria.claims import ClaimsConsistent
from graders.criteria.collateral import AllowedChange, NoCollateral, allow
from graders.criteria.custom import CustomCheck, criterion
from graders.criteria.disclosure import AnswerOmits, address_secrets
from graders.criteria.judge import JudgeClient, LLMJudge
from graders.criteria.matchers import absent, facts, number, number_range, one_of, present, regex, text
from graders.criteria.outcome import DeclaredOutcome
from graders.criteria.seen import Fact, Seen, fact, seen
from graders.criteria.state import StateCheck, state
from graders.criteria.transcript import AnyToolCalled, CallBudget, CallOrder, CallPattern, ToolCalled, ToolNotCalled

__all__ = [
    "Criterion",
    "CriterionBase",
    "CriterionResult",
    "StateCheck",
    "ChangeSetMatch",
    "NoCollateral",
    "AllowedChange",
    "ToolCalled",
    "AnyToolCalled",
    "ToolNotCalled",
    "CallOrder",
    "CallBudget",
    "CallPattern",
    "Seen",
    "Fact",
    "seen",
    "fact",
    "Agreements",
    "BeforeWrites",
    "agreement_terms",
    "AnswerCheck",
    "AnswerOmits",
    "address_secrets",
    "DeclaredOutcome",
    "ClaimsConsistent",
    "LLMJudge",
    "JudgeClient",
    "CustomCheck",
    "criterion",
    "allow",
    "state",
    "number",
    "number_range",
    "text",
    "facts",
    "one_of",
    "regex",
    "present",
    "absent",
]

Criterion = Annotated[
    StateCheck
    | ChangeSetMatch
    | NoCollateral
    | ToolCalled
    | AnyToolCalled
    | ToolNotCalled
    | CallOrder
    | CallBudget
    | Seen
    | Agreements
    | BeforeWrites
    | AnswerCheck
    | AnswerOmits
    | DeclaredOutcome
    | ClaimsConsistent
    | LLMJudge
    | CustomCheck,
    Field(discriminator="kind"),
]
"""Any criterion; serialised with its ``kind``."""
