"""Card charges for the reconciliation stories: the accounts and charges a story may pick, the merchants and
network references a planted charge carries, planting a duplicate charge or an open dispute, and the gate that
the deciding charge was seen — its row, by whichever read showed it (the ledger searched by merchant or by
date, the whole ledger, the charge itself). Used by the reconciliation and multistep templates.
"""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from envs.finance.catalog import FOREIGN_MERCHANTS
from envs.finance.tasks._common import (
    NOW,
    TODAY,
    money,
    named_customer_ids,
    next_id,
    one,
    plant_audit,
    plant_txn,
    rows,
    stamp,
)
from fixtures.world import World
from graders.criteria import Fact, Seen, seen

__all__ = [
    "card_accounts",
    "charge_seen",
    "foreign_shop",
    "morning_after",
    "plant_duplicate",
    "plant_open_dispute",
    "pos_reference",
    "recent_card_charges",
]

_CODE = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def pos_reference(rng: random.Random) -> str:
    """A card network reference as the fixture writes them (``POS-`` and 8 letters/digits)."""
    return "POS-" + "".join(rng.choice(_CODE) for _ in range(8))


def morning_after(day: date, days: int) -> str:
    """06:00 UTC ``days`` days after ``day`` (when overnight monitoring raises its alerts), never after now."""
    moment = datetime.combine(day + timedelta(days=days), time(6, 0), tzinfo=UTC)
    return stamp(min(moment, NOW - timedelta(hours=1)))


def foreign_shop(rng: random.Random, customer: dict[str, Any], *, besides: str | None = None) -> tuple[str, str]:
    """An unusual foreign merchant (name, country) outside the customer's own country (and other than ``besides``)."""
    shops = [(name, country) for name, country, _ in FOREIGN_MERCHANTS if country != customer["country"] and name != besides]
    return shops[rng.randrange(len(shops))]


def card_accounts(world: World, issued_before: date) -> list[dict[str, Any]]:
    """Open checking accounts of customers a name search finds alone, whose owner has exactly one active card, issued
    before ``issued_before`` (the first day a story's planted charges or freeze happen: nothing happens on a card before
    it exists), and no open alert or open dispute (so a planted charge, alert or dispute is the only one of its kind)."""
    named = named_customer_ids(world)
    found = rows(world, """
        SELECT a.*, c.card_id, c.issued_on FROM accounts a JOIN cards c ON c.account_id = a.account_id AND c.status = 'active'
        WHERE a.type = 'checking' AND a.status = 'open' AND a.balance_minor >= 200000
          AND (SELECT count(*) FROM cards k WHERE k.customer_id = a.customer_id AND k.status = 'active') = 1
          AND NOT EXISTS (SELECT 1 FROM compliance_alerts al WHERE al.customer_id = a.customer_id AND al.status != 'closed')
          AND NOT EXISTS (SELECT 1 FROM disputes d WHERE d.customer_id = a.customer_id AND d.status = 'open')
        ORDER BY a.account_id""")
    return [a for a in found if a["customer_id"] in named and a["issued_on"] < issued_before.isoformat()]


def recent_card_charges(world: World, posted_from: date, posted_to: date, *, min_minor: int = 1_000) -> list[dict]:
    """Posted, undisputed card charges of open checking accounts with an active card, owned by customers a name
    search finds alone, with no look-alike (same merchant, same day) on the account — so a planted copy is the
    only duplicate. Rows carry the owner's ``customer_id``."""
    named = named_customer_ids(world)
    found = rows(world, """
        SELECT t.*, a.customer_id FROM transactions t
        JOIN accounts a ON a.account_id = t.account_id
        JOIN cards c ON c.card_id = t.card_id
        WHERE t.kind = 'card' AND t.status = 'posted' AND t.amount_minor <= ? AND t.posted_on BETWEEN ? AND ?
          AND a.type = 'checking' AND a.status = 'open' AND c.status = 'active' AND t.merchant IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM disputes d WHERE d.txn_id = t.txn_id)
          AND NOT EXISTS (SELECT 1 FROM transactions u WHERE u.account_id = t.account_id AND u.txn_id != t.txn_id
                          AND u.txn_date = t.txn_date AND u.merchant = t.merchant)
        ORDER BY t.txn_id""", -min_minor, posted_from.isoformat(), posted_to.isoformat())
    return [t for t in found if t["customer_id"] in named]


def plant_duplicate(world: World, rng: random.Random, original: dict, *, day: date | None = None, status: str = "posted") -> str:
    """Post a second charge like ``original`` (same merchant, amount and card, a new network reference) on ``day``
    (default: the same day, a true duplicate), ``status`` posted or pending; returns its id."""
    account = one(world, "SELECT * FROM accounts WHERE account_id = ?", original["account_id"])
    first = date.fromisoformat(original["txn_date"])
    lag = (date.fromisoformat(original["posted_on"]) - first).days
    return plant_txn(world, account, day or first, original["amount_minor"], "card", original["category"],
                     merchant=original["merchant"], country=original["merchant_country"], memo=original["memo"],
                     card_id=original["card_id"], lag=lag, status=status, reference=pos_reference(rng))


def plant_open_dispute(world: World, rng: random.Random, txn_id: str, card: str, customer_id: str, minor: int, currency: str,
                        posted: date) -> str:
    """A fraud dispute the phone team already opened on the charge (as ``open_dispute`` writes it, with its audit row)."""
    dispute_id = next_id(world, "disputes")
    opened = min(posted + timedelta(days=rng.randint(0, 2)), TODAY)
    world.execute(
        "INSERT INTO disputes (dispute_id, txn_id, card_id, customer_id, reason, amount_minor, currency, status, opened_on, opened_by, "
        "description) VALUES (?, ?, ?, ?, 'fraud', ?, ?, 'open', ?, 'STF-0011', 'Customer reported the charge by phone')",
        (dispute_id, txn_id, card, customer_id, minor, currency, opened.isoformat()),
    )
    plant_audit(world, f"{opened.isoformat()}T15:{rng.randint(10, 59)}:00+00:00", "STF-0011", "open_dispute", "dispute", dispute_id,
                txn_id=txn_id, reason="fraud", amount=money(minor, currency), currency=currency)
    return dispute_id


# -- the read that shows a charge -----------------------------------------------------------------------------


def charge_seen(name: str, txn_id: str, *fields: str, weight: float = 2.0, before: Any = "submit_answer",
                also: list[Fact] | None = None) -> Seen:
    """Gate: the charge that decides the case was shown with ``fields`` (its status, posting date, dispute...) before
    the decision — by the customer's or the account's ledger searched any way that lists it, or by the charge itself.

    By default the decision is the final answer: a protective act (a freeze, an escalation, a note) may come before
    the read, and what the charge shows decides what the agent declines or reports.
    """
    return seen(name, "transactions", txn_id, *fields, weight=weight, before=before, also=also)
