"""A toy environment whose grader breaks on what an agent may send: the fuzz must find it, a run must report it.

It borrows the toy help desk's fixture and tools and has one template, ``fragile_lookup``: tell a savings
balance, graded by a custom check written the careless way — it reads the answer's ``amount`` with
``Decimal`` and does arithmetic on it, which raises on ``"1e999999999"`` (``Overflow``) or ``"abc"``.
The custom check turns that into a :class:`~fixtures.errors.GradingError` (a bug of the kit's, never the
agent's), which is what ``toolgym check``'s fuzz and the runner's ``grading`` error class are about.
"""

from __future__ import annotations

import random
from decimal import Decimal
from typing import Any

from fixtures.money import format_minor
from fixtures.world import World
from graders.context import GradingContext
from graders.criteria import CustomCheck, ToolCalled, criterion
from graders.tasks import TaskDraft, TaskTemplate, call
from servers.environment import Environment
from tests.graders.toy.fixture import fixture
from tests.graders.toy.tools import TOOLS

__all__ = ["environment", "TEMPLATES", "careless_amount"]


@criterion
def careless_amount(ctx: GradingContext, expected: str) -> tuple[bool, str]:
    """The answer's amount, read with Decimal and compared by arithmetic (what issue 17 found graders doing)."""
    answers = [e for e in ctx.calls if e.tool == "submit_answer" and e.error is None]
    if not answers:
        return False, "no answer"
    given = answers[-1].arguments.get("amount") or "0"
    off = abs(Decimal(given) * 1 - Decimal(expected))  # raises on "1e999999999" (Overflow) and on "abc"
    return off == 0, f"amount {given}, off by {off}"


def fragile_lookup(world: World, rng: random.Random) -> TaskDraft:
    """Tell the balance of one savings account."""
    account = rng.choice(world.query("SELECT * FROM accounts WHERE kind = 'savings' ORDER BY id"))
    balance = format_minor(int(account["balance_minor"]), "USD")
    return TaskDraft(
        prompt=f"What is the balance of savings account {account['id']}? Answer with submit_answer (amount as a decimal string).",
        oracle=[call("get_account", account_id=account["id"]), call("submit_answer", answer=f"{balance} USD", amount=balance)],
        rubric=[
            CustomCheck(name="right balance", function="tests.graders.fragile:careless_amount", params={"expected": balance}),
            ToolCalled(name="looked it up", tool="get_account", args={"account_id": account["id"]}, gate=True),
        ],
        noop_may_pass=False,
    )


TEMPLATES: list[Any] = [TaskTemplate(fragile_lookup, category="inquiry", tools=["get_account", "submit_answer"])]

environment = Environment(
    name="fragile-toy",
    description="The toy help desk with a grader that raises on hostile answers (fuzz and runner tests only).",
    fixture=fixture,
    tools=TOOLS,
    tasks_module="tests.graders.fragile",
    instructions="Help customers of the toy bank. Answer with submit_answer.",
)
