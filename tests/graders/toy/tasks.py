"""The toy help desk's task templates, written in the kit's task format (the way real environments do)."""

from __future__ import annotations

import random

from fixtures.money import format_minor
from fixtures.world import World
from graders.criteria import (
    AnswerCheck,
    CallBudget,
    CallOrder,
    ChangeSetMatch,
    LLMJudge,
    NoCollateral,
    ToolCalled,
    ToolNotCalled,
    allow,
    facts,
    number,
    state,
)
from graders.tasks import TaskDraft, TaskTemplate, call, negative, optional_call

__all__ = ["TEMPLATES", "balance_lookup", "transfer_funds", "freeze_compromised", "explain_duplicate"]


def _customer(world: World, rng: random.Random) -> dict[str, object]:
    ids = [r["id"] for r in world.query("SELECT id FROM customers ORDER BY id")]
    row = world.query("SELECT * FROM customers WHERE id = ?", (rng.choice(ids),))[0]
    accounts = world.query("SELECT * FROM accounts WHERE customer_id = ? ORDER BY id", (row["id"],))
    return {**row, "checking": accounts[0], "savings": accounts[1]}


def balance_lookup(world: World, rng: random.Random) -> TaskDraft:
    """The customer asks for their savings balance; answer it with submit_answer."""
    c = _customer(world, rng)
    savings, checking = c["savings"], c["checking"]
    balance = format_minor(savings["balance_minor"], "USD")  # type: ignore[index]
    other = format_minor(checking["balance_minor"], "USD")  # type: ignore[index]
    return TaskDraft(
        prompt=f"{c['name']} ({c['email']}) asks for the current balance of their savings account. "
        "Look it up and give it with submit_answer (amount as a decimal string).",
        oracle=[
            optional_call("find_customer", email=c["email"]),
            call("get_account", account_id=savings["id"]),  # type: ignore[index]
            call("submit_answer", answer=f"Your savings balance is {balance} USD.", amount=balance),
        ],
        rubric=[
            AnswerCheck(name="right balance", field="amount", expect=number(balance), gate=True),
            ToolCalled(name="looked it up", tool="get_account", args={"account_id": savings["id"]}, gate=True),  # type: ignore[index]
            NoCollateral(),
            CallBudget(max_calls=8),
        ],
        negatives=[
            negative("wrong_account", "answers the checking balance", call("submit_answer", answer="x", amount=other)),
            negative("guess", "answers the right number without looking it up", call("submit_answer", answer="x", amount=balance)),
        ],
        metadata={"customer_id": c["id"]},
    )


def transfer_funds(world: World, rng: random.Random) -> TaskDraft:
    """Verify the customer, then move money from checking to savings."""
    c = _customer(world, rng)
    src, dst = c["checking"], c["savings"]
    minor = rng.randint(1, int(src["balance_minor"]) // 100) * 100  # type: ignore[index]
    amount = format_minor(minor, "USD")
    ids = {"from_account": src["id"], "to_account": dst["id"]}  # type: ignore[index]
    return TaskDraft(
        prompt=f"{c['name']} (customer {c['id']}, passcode {c['passcode']}) asks you to move {amount} USD from "
        f"checking account {src['id']} to savings account {dst['id']}.",  # type: ignore[index]
        oracle=[
            call("verify_identity", customer_id=c["id"], passcode=c["passcode"]),
            call("transfer", **ids, amount=amount, memo="customer request"),
        ],
        rubric=[
            ChangeSetMatch(name="ledger", ignore_columns={"transfers": ["id", "memo"]}, gate=True),
            CallOrder(name="verified first", first={"tool": "verify_identity", "args": {"customer_id": c["id"]}}, then="transfer", gate=True),
            NoCollateral(),
            state("SELECT balance_minor FROM accounts WHERE id = ?", dst["id"], expect=int(dst["balance_minor"]) + minor, name="savings credited"),  # type: ignore[index]
        ],
        negatives=[
            negative("unverified", "transfers without verifying identity", call("transfer", **ids, amount=amount)),
            negative(
                "wrong_amount",
                "moves a tenth of the amount",
                call("verify_identity", customer_id=c["id"], passcode=c["passcode"]),
                call("transfer", **ids, amount=format_minor(max(minor // 10, 1), "USD")),
            ),
            negative(
                "freezes_too",
                "does the transfer and also freezes the customer's checking account",
                call("verify_identity", customer_id=c["id"], passcode=c["passcode"]),
                call("transfer", **ids, amount=amount),
                call("freeze_account", account_id=src["id"], reason="tidy"),  # type: ignore[index]
            ),
        ],
        allowed_changes=[
            allow("accounts", src["id"], dst["id"], ops=["update"], columns=["balance_minor"]),  # type: ignore[index]
            allow("transfers", ops=["insert"], from_account=src["id"]),  # type: ignore[index]
        ],
    )


def freeze_compromised(world: World, rng: random.Random) -> TaskDraft:
    """Setup plants card-testing transfers out of one account; the agent must freeze it and move nothing."""
    c = _customer(world, rng)
    victim = c["checking"]
    for n in range(3):
        world.execute(
            "INSERT INTO transfers (id, from_account, to_account, amount_minor, memo, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (f"tr-s{n:03d}", victim["id"], 1 if victim["id"] != 1 else 2, 1 + n, "card test", world.clock.now.isoformat()),  # type: ignore[index]
        )
    return TaskDraft(
        prompt=f"Account {victim['id']} shows card-testing activity (tiny transfers). Freeze it. Do not move any money.",  # type: ignore[index]
        oracle=[call("freeze_account", account_id=victim["id"], reason="fraud suspected: card testing")],  # type: ignore[index]
        rubric=[
            state("SELECT status FROM accounts WHERE id = ?", victim["id"], expect="frozen", gate=True, name="frozen"),  # type: ignore[index]
            ToolNotCalled(name="no money moved", tool="transfer", gate=True),
            NoCollateral(),
        ],
        negatives=[
            negative("wrong_account", "freezes the savings account instead", call("freeze_account", account_id=c["savings"]["id"], reason="fraud")),  # type: ignore[index]
            negative(
                "freezes_both",
                "freezes the right account and the customer's other one",
                call("freeze_account", account_id=victim["id"], reason="fraud"),  # type: ignore[index]
                call("freeze_account", account_id=c["savings"]["id"], reason="fraud"),  # type: ignore[index]
            ),
        ],
        allowed_changes=[allow("accounts", victim["id"], ops=["update"], columns=["status"])],  # type: ignore[index]
    )


def explain_duplicate(world: World, rng: random.Random) -> TaskDraft:
    """Setup plants a duplicated transfer; the agent explains which two transfers are the same (judged)."""
    c = _customer(world, rng)
    acct = c["checking"]
    minor = rng.randint(5, 90) * 100
    first, second = "tr-d001", "tr-d002"
    for ident in (first, second):
        world.execute(
            "INSERT INTO transfers (id, from_account, to_account, amount_minor, memo, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (ident, acct["id"], c["savings"]["id"], minor, "monthly savings", "2025-06-01T08:00:00+00:00"),  # type: ignore[index]
        )
    return TaskDraft(
        prompt=f"{c['name']} says account {acct['id']} was charged twice for the same transfer yesterday. "  # type: ignore[index]
        "Find the two transfers and explain to them, with submit_answer, which ones are duplicates (name both ids).",
        oracle=[
            call("get_account", account_id=acct["id"]),  # type: ignore[index]
            call("submit_answer", answer=f"Transfers {first} and {second} are duplicates of the same monthly savings transfer."),
        ],
        rubric=[
            ToolCalled(name="read the account", tool="get_account", args={"account_id": acct["id"]}, gate=True),  # type: ignore[index]
            AnswerCheck(name="names both", field="answer", expect=facts(all_of=[first, second]), gate=True),
            LLMJudge(name="explains politely", instructions="The answer names the two duplicate transfers and is polite.", answer_field="answer"),
        ],
        negatives=[
            negative("one_id", "names only one of the two transfers", call("submit_answer", answer=f"Transfer {first} is a duplicate.")),
        ],
    )


TEMPLATES = [
    TaskTemplate(balance_lookup, difficulty="easy", category="inquiry", tags=["answer"], tools=["find_customer", "get_account", "submit_answer"]),
    TaskTemplate(transfer_funds, difficulty="medium", category="payments", tags=["write", "policy"], tools=["verify_identity", "transfer"]),
    TaskTemplate(freeze_compromised, difficulty="medium", category="security", split="test", tags=["write"], tools=["freeze_account"]),
    TaskTemplate(explain_duplicate, difficulty="hard", category="disputes", split="test", tags=["answer", "judge"], tools=["get_account", "submit_answer"]),
]
