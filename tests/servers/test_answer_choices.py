"""The answer tool's choices are read from its schema, whatever shape pydantic gives a ``Literal``."""

from __future__ import annotations

from pydantic import BaseModel

from servers.answer import answer_tool
from servers.environment import Environment
from tests.toy_env import fixture


class _Receipt(BaseModel):
    received: bool
    submitted_at: str
    value_names: list[str]


def _environment(codes: tuple[str, ...]) -> Environment:
    submit = answer_tool(outcomes=("completed", "refused"), reason_codes=codes, receipt=_Receipt, now=lambda ctx: "now",
                         answer_help="a", values_help="v", description="Answer.")
    return Environment(name="choices", description="d", fixture=fixture, tools=[submit])


def test_a_single_reason_code_is_a_choice() -> None:
    # one value makes pydantic write {"const": ...} instead of {"enum": [...]}: a policy with one rule still has its code
    assert _environment(("over_limit",)).reason_codes == ("over_limit",)
    assert _environment(("a_rule", "b_rule")).reason_codes == ("a_rule", "b_rule")
    assert _environment(("a_rule",)).outcomes == ("completed", "refused")
