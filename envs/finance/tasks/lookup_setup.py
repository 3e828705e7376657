"""The figures a look-up asks about, planted per instance with seeded amounts, dates and names: a cheque
deposit still on hold, a card payment authorised but not posted, one more card charge in a month, a large wire
a supervisor approved or rejected. The generated ledger gives few accounts per story, so a planted fact makes
the answer differ by seed, and only reading the customer's records finds it (``lookups``).
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from typing import Any

from envs.finance import catalog as cat
from envs.finance.tasks._common import (
    ANALYSTS,
    NOW,
    TODAY,
    next_id,
    one,
    plant_audit,
    plant_txn,
    reference,
    rows,
    stamp,
)
from fixtures.world import World

__all__ = ["decide_wire", "plant_card_authorisation", "plant_card_charge", "plant_cheque_deposit"]

_PENDING_CARD = (("Whole Foods Market", "groceries"), ("Shell", "fuel"), ("Uber", "transport"), ("Target", "shopping"),
                 ("Delta Air Lines", "transport"), ("Best Buy", "shopping"), ("Chipotle", "dining"), ("CVS Pharmacy", "health"))
"""Merchants of planted card authorisations (pending debits), with their ledger category."""


def plant_cheque_deposit(world: World, rng: random.Random, account: dict[str, Any], amount: int) -> None:
    """A cheque deposited in the last days, credited to the ledger but held for 5 business days (policy §4)."""
    day = TODAY - timedelta(days=rng.randint(0, 3))
    slip = reference(rng, "DEP")
    plant_txn(world, account, day, amount, "deposit", "income", memo=f"Cheque deposit {slip}", reference=slip)
    hold_id = next_id(world, "holds")
    at = stamp(NOW - timedelta(days=(TODAY - day).days, hours=rng.randint(1, 5)))
    by = rng.choice(ANALYSTS)
    world.execute(
        "INSERT INTO holds (hold_id, account_id, amount_minor, currency, kind, reason, status, placed_at, placed_by) "
        "VALUES (?, ?, ?, ?, 'standard', ?, 'active', ?, ?)",
        (hold_id, account["account_id"], amount, account["currency"], f"Cheque deposit {slip} held for 5 business days", at, by),
    )
    plant_audit(world, at, by, "place_hold", "hold", hold_id, amount_minor=amount, kind="standard")


def plant_card_authorisation(world: World, rng: random.Random, account: dict[str, Any], amount: int) -> None:
    """A card payment authorised but not yet posted: a pending debit that reduces what can be spent."""
    merchant, category = rng.choice(_PENDING_CARD)
    card = rows(world, "SELECT card_id FROM cards WHERE account_id = ? AND status = 'active' ORDER BY card_id", account["account_id"])
    plant_txn(world, account, TODAY - timedelta(days=rng.randint(0, 1)), -amount, "card", category, merchant=merchant, country="US",
              reference=reference(rng, "AUT"), card_id=card[0]["card_id"] if card else None, status="pending")


def plant_card_charge(world: World, rng: random.Random, account: dict[str, Any], category: str, start: str, end: str) -> str:
    """Setup: one more payment in ``category`` dated in the month, a seeded merchant, day and amount; returns its id.

    Why: the generated ledger gives few accounts per (category, month); a seeded charge makes the asked total
    differ by seed even when two seeds draw the same account, so only searching this world's ledger finds it.
    It is paid with the newest card the account had on that day (none issued yet: a debit of another kind), so
    nothing is charged to a card before it exists.
    """
    region = {"USD": "US", "GBP": "GB"}.get(account["currency"], "EU")
    merchant = rng.choice([m for m in cat.MERCHANTS[region] if m.category == category])
    first, last = date.fromisoformat(start), date.fromisoformat(end)
    day = first + timedelta(days=rng.randint(0, (last - first).days))
    card = rows(world, "SELECT card_id FROM cards WHERE account_id = ? AND issued_on <= ? ORDER BY issued_on DESC, card_id",
                account["account_id"], day.isoformat())
    return plant_txn(world, account, day, -rng.randint(merchant.low, merchant.high), "card" if card else "direct_debit", category,
                     merchant=merchant.name, country={"US": "US", "GB": "GB"}.get(region, "DE"), reference=reference(rng, "POS"),
                     card_id=card[0]["card_id"] if card else None, lag=rng.randint(0, 2))


def decide_wire(world: World, rng: random.Random, transfer_id: str, account: dict[str, Any], status: str, at: str) -> None:
    """Turn a planted pending wire into what a supervisor's decision makes of it, as approve/reject_transfer do.

    ``completed``: the reserved debit and fee post and leave the balance; ``rejected``: they are reversed and
    the funds are free again. Either way the approval row and the audit trail record the supervisor.
    """
    supervisor = rng.choice(["STF-0001", "STF-0002"])
    decided = stamp(datetime.fromisoformat(at) + timedelta(hours=rng.randint(1, 3), minutes=rng.randint(0, 59)))
    if status == "completed":
        moved = one(world, "SELECT coalesce(sum(amount_minor), 0) AS s FROM transactions WHERE transfer_id = ? AND status = 'pending'",
                    transfer_id)["s"]
        world.execute("UPDATE transactions SET status = 'posted', posted_on = ?, memo = replace(memo, ' (awaiting approval)', '') "
                      "WHERE transfer_id = ? AND status = 'pending'", (decided[:10], transfer_id))
        world.execute("UPDATE accounts SET balance_minor = balance_minor + ? WHERE account_id = ?", (moved, account["account_id"]))
        world.execute("UPDATE transfers SET status = 'completed', decided_by = ?, decided_at = ? WHERE transfer_id = ?",
                      (supervisor, decided, transfer_id))
    else:
        reason = rng.choice(["Customer could not be reached for the call-back check", "Beneficiary details did not match the call-back"])
        world.execute("UPDATE transactions SET status = 'reversed' WHERE transfer_id = ? AND status = 'pending'", (transfer_id,))
        world.execute("UPDATE transfers SET status = 'rejected', decided_by = ?, decided_at = ?, rejection_reason = ? WHERE transfer_id = ?",
                      (supervisor, decided, reason, transfer_id))
    decision = "approved" if status == "completed" else "rejected"
    world.execute("INSERT INTO approvals (approval_id, transfer_id, approver_id, decision, decided_at, comment) VALUES (?, ?, ?, ?, ?, NULL)",
                  (next_id(world, "approvals"), transfer_id, supervisor, decision, decided))
    plant_audit(world, decided, supervisor, "approve_transfer" if status == "completed" else "reject_transfer", "transfer", transfer_id)
