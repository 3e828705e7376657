"""A toy environment with graded tasks for the runner tests: the toy bank plus rubrics and oracles.

It borrows the toy bank's fixture and tools (tests/toy_env) and adds real ``graders.tasks`` templates:

- ``pay_back``: move a seeded debt between two accounts, then answer; a change-set gate + no collateral.
- ``report_balance``: read one account and answer its balance; no writes allowed.
- ``flaky_report``: like ``report_balance`` through ``flaky_balance``, a tool that crashes (a kit bug) while
  ``FLAKY["failures_left"] > 0`` — for the runner's infrastructure-error retries.
"""

from __future__ import annotations

import random
from typing import Any

from fixtures.money import format_minor
from fixtures.world import World
from graders.criteria import AnswerCheck, ChangeSetMatch, NoCollateral, ToolCalled, allow, text
from graders.tasks import TaskDraft, TaskTemplate, call, negative
from servers.environment import Environment
from servers.tools import ToolContext, tool
from tests.toy_env.fixture import fixture
from tests.toy_env.tools import TOOLS

__all__ = ["environment", "FLAKY", "TEMPLATES"]

FLAKY: dict[str, int] = {"failures_left": 0}


@tool(pure=False)  # its answer depends on FLAKY, not only on the world
async def flaky_balance(ctx: ToolContext, account_id: str) -> str:
    """Return an account's balance as a decimal string (crashes while the test says so)."""
    if FLAKY["failures_left"] > 0:
        FLAKY["failures_left"] -= 1
        raise RuntimeError("flaky backend")
    row = ctx.world.query("SELECT balance_minor, currency FROM accounts WHERE id = ?", (account_id,))[0]
    return format_minor(int(row["balance_minor"]), str(row["currency"]))


def _usd_accounts(world: World) -> list[str]:
    return [r["id"] for r in world.query("SELECT id FROM accounts WHERE currency = 'USD' ORDER BY id")]


def pay_back(world: World, rng: random.Random) -> TaskDraft:
    """Pay a seeded debt back from one USD account to another."""
    payer, payee = rng.sample(_usd_accounts(world), 2)
    amount = format_minor(rng.randint(1, 9) * 100, "USD")
    return TaskDraft(
        prompt=f"Account {payer} owes {amount} USD to {payee}. Pay the debt back, then confirm with submit_answer.",
        oracle=[call("transfer", from_account=payer, to_account=payee, amount=amount), call("submit_answer", text="paid")],
        rubric=[
            ChangeSetMatch(name="debt paid", ignore_columns={"transfers": ["id", "created_at"], "answers": ["id", "text"]}, gate=True),
            NoCollateral(name="nothing else touched"),
        ],
        negatives=[negative("wrong_way", "pays the payee's money to the payer", call("transfer", from_account=payee, to_account=payer, amount=amount))],
        allowed_changes=[allow("accounts", payer, payee, ops=["update"]), allow("transfers", ops=["insert"]), allow("answers", ops=["insert"])],
    )


def _balance(world: World, account: str) -> str:
    row = world.query("SELECT balance_minor FROM accounts WHERE id = ?", (account,))[0]
    return format_minor(int(row["balance_minor"]), "USD")


def report_balance(world: World, rng: random.Random) -> TaskDraft:
    """Tell the balance of one account."""
    account = rng.choice(_usd_accounts(world))
    balance = _balance(world, account)
    return TaskDraft(
        prompt=f"What is the balance of account {account}? Answer with submit_answer, just the amount.",
        oracle=[call("get_account", account_id=account), call("submit_answer", text=balance)],
        rubric=[
            AnswerCheck(name="right balance", field="text", expect=text(balance)),
            ToolCalled(name="looked it up", tool="get_account"),
            NoCollateral(name="read only"),
        ],
        allowed_changes=[allow("answers", ops=["insert"])],
    )


def flaky_report(world: World, rng: random.Random) -> TaskDraft:
    """Tell a balance through the flaky tool."""
    account = rng.choice(_usd_accounts(world))
    balance = _balance(world, account)
    return TaskDraft(
        prompt=f"Use flaky_balance to find the balance of {account}, then answer it with submit_answer.",
        oracle=[call("flaky_balance", account_id=account), call("submit_answer", text=balance)],
        rubric=[AnswerCheck(name="right balance", field="text", expect=text(balance))],
        allowed_changes=[allow("answers", ops=["insert"])],
    )


TEMPLATES: list[Any] = [
    TaskTemplate(pay_back, category="payments", split="train", tags=["writes"], tools=["transfer"]),
    TaskTemplate(report_balance, category="lookup", split="test", tags=["read"], tools=["get_account"]),
    TaskTemplate(flaky_report, category="lookup", split="test", tags=["flaky"], tools=["flaky_balance"]),
]

environment = Environment(
    name="toy-tasks",
    description="The toy bank with graded tasks (client tests only).",
    fixture=fixture,
    tools=[*TOOLS, flaky_balance],
    tasks_module="tests.clients.toyenv",
    instructions="Move money between accounts with transfer; answer with submit_answer.",
)
