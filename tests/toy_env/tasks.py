"""Toy task templates, in the real task format (graders.tasks), small enough to grade by hand."""

from __future__ import annotations

import random

from fixtures.money import format_minor
from fixtures.world import World
from graders.criteria import ToolCalled, state
from graders.tasks import TaskDraft, TaskTemplate, call, negative

__all__ = ["TEMPLATES", "pay_back"]


def pay_back(world: World, rng: random.Random) -> TaskDraft:
    """One USD account owes another; the agent pays the debt back and says so."""
    usd = [r["id"] for r in world.query("SELECT id FROM accounts WHERE currency = 'USD' ORDER BY id")]
    payer, payee = rng.sample(usd, 2)
    minor = rng.randint(1, 9) * 100
    world.execute("UPDATE accounts SET owner = owner || ' (owes)' WHERE id = ?", (payer,))
    amount = format_minor(minor, "USD")
    paid = state(
        "SELECT count(*) FROM transfers WHERE from_account = ? AND to_account = ? AND amount_minor = ?",
        payer, payee, minor, expect=1, name="debt paid once", gate=True,
    )
    return TaskDraft(
        prompt=f"Account {payer} owes {amount} USD to {payee}. Pay the debt back, then say so with submit_answer.",
        oracle=[
            call("transfer", from_account=payer, to_account=payee, amount=amount),
            call("submit_answer", text=f"paid {amount} USD from {payer} to {payee}"),
        ],
        rubric=[paid, ToolCalled(tool="submit_answer", name="answered")],
        negatives=[negative("reversed", "pays the wrong way round", call("transfer", from_account=payee, to_account=payer, amount=amount))],
    )


TEMPLATES = [TaskTemplate(pay_back, difficulty="easy", category="payments", tools=["transfer", "submit_answer"])]
