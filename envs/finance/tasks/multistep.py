"""Multi-step cases (8+ tool calls): a lost card with fraudulent charges, closing a brokerage account, and
triaging two alerts with opposite outcomes for one customer."""

from __future__ import annotations

import random
from datetime import date, datetime, time, timedelta, timezone

from envs.finance.tasks._common import (
    TODAY,
    answer,
    balance_is,
    caller,
    customer_of,
    money,
    never,
    one,
    optional_call,
    pick,
    plant_alert,
    plant_txn,
    rows,
    stamp,
    value_is,
    verify,
)
from envs.finance.tasks.trading import brokerage_accounts, last_close
from fixtures.world import World
from graders.criteria import CallOrder, number_range, state
from graders.outcome import completed
from graders.tasks import TaskDraft, TaskTemplate, call, negative

__all__ = ["TEMPLATES"]

_FRAUD_SHOPS = [("QuickCash Gift Cards", "shopping"), ("Electro World Online", "shopping"), ("FastFuel Express", "fuel"),
                ("Luxe Watches Outlet", "shopping"), ("Midnight Electronics", "shopping")]


def _card_accounts(world: World) -> list[dict]:
    """Open checking accounts whose owner has exactly one active card and no open alert or open dispute."""
    return rows(world, """
        SELECT a.*, c.card_id FROM accounts a JOIN cards c ON c.account_id = a.account_id AND c.status = 'active'
        WHERE a.type = 'checking' AND a.status = 'open' AND a.balance_minor >= 200000
          AND (SELECT count(*) FROM cards k WHERE k.customer_id = a.customer_id AND k.status = 'active') = 1
          AND NOT EXISTS (SELECT 1 FROM compliance_alerts al WHERE al.customer_id = a.customer_id AND al.status != 'closed')
          AND NOT EXISTS (SELECT 1 FROM disputes d WHERE d.customer_id = a.customer_id AND d.status = 'open')
        ORDER BY a.account_id""")


def lost_card_fraud(world: World, rng: random.Random) -> TaskDraft:
    """A lost card was used twice: freeze it, dispute both charges as fraud, note it, report the total."""
    account = pick(rng, _card_accounts(world), "checking account with one active card")
    customer = customer_of(world, account["account_id"])
    cid, acc, cur, card = customer["customer_id"], account["account_id"], account["currency"], account["card_id"]
    lost = TODAY - timedelta(days=2)
    # setup: the card was lost two days ago, so its genuine use stops there (the rows after are removed, balance kept in step)
    posted = one(world, "SELECT coalesce(sum(amount_minor), 0) AS s FROM transactions WHERE card_id = ? AND txn_date >= ? "
                        "AND status = 'posted'", card, lost.isoformat())["s"]
    world.execute("DELETE FROM transactions WHERE card_id = ? AND txn_date >= ?", (card, lost.isoformat()))
    world.execute("UPDATE accounts SET balance_minor = balance_minor - ? WHERE account_id = ?", (posted, acc))
    charges = []
    for (shop, category) in rng.sample(_FRAUD_SHOPS, 2):
        minor = rng.randint(80, 900) * 100 + rng.randint(0, 99)
        txn = plant_txn(world, account, lost + timedelta(days=len(charges)), -minor, "card", category,
                        merchant=shop, country=customer["country"], card_id=card, lag=1,
                        reference=f"POS-{rng.randint(10**7, 10**8 - 1)}")
        charges.append((txn, shop, minor))
    total = money(sum(m for _, _, m in charges), cur)
    freeze = call("freeze_card", card_id=card, reason="Card reported lost; unrecognised charges")
    disputes = [call("open_dispute", txn_id=t, reason="fraud", description=f"Card lost on {lost.isoformat()}; charge at {s} not made by customer")
                for t, s, _ in charges]
    note = call("add_note", customer_id=cid, category="service", body=f"Card {card} lost; frozen; two fraudulent charges disputed.")
    return TaskDraft(
        prompt=(f"Customer {cid}. {caller(customer)} They lost their debit card on {lost.isoformat()} and have since seen charges they "
                "did not make. Protect the account, dispute every charge made after the loss that they do not recognise (they confirm "
                f"they used the card for nothing since {lost.isoformat()}), note it on file, and reply with submit_answer giving the "
                "total disputed in values.total."),
        oracle=[optional_call("list_cards", customer_id=cid), freeze, verify(customer),
                optional_call("search_transactions", account_id=acc, kind="card", date_from=lost.isoformat()), *disputes, note,
                answer(f"Card frozen; disputed {len(charges)} charges totalling {total} {cur}.", total=total)],
        outcome=completed(),
        rubric=[
            state("SELECT status FROM cards WHERE card_id = ?", card, expect="frozen", weight=2, name="lost card frozen"),
            state(f"SELECT count(*) FROM disputes WHERE reason = 'fraud' AND txn_id IN ({', '.join('?' for _ in charges)})",
                  *[t for t, _, _ in charges], expect=len(charges), weight=3, name="every charge after the loss disputed as fraud"),
            CallOrder(name="card frozen before any dispute", first={"tool": "freeze_card", "args": {"card_id": card}}, then="open_dispute"),
            state("SELECT count(*) FROM notes WHERE customer_id = ? AND author_id = 'STF-0100'", cid, expect=number_range(min=1),
                  name="noted on file"),
            value_is("total", total, weight=1),
        ],
        negatives=[
            negative("disputes_before_freezing", "disputes first, freezes afterwards", verify(customer), *disputes, freeze, note,
                     answer("Done.", total=total)),
            negative("one_charge", "disputes only the first charge", freeze, verify(customer), disputes[0], note,
                     answer("Done.", total=money(charges[0][2], cur))),
            negative("claims_only", "reports the work without doing it", answer("Card frozen, charges disputed.", total=total)),
        ],
        metadata={"customer_id": cid, "card_id": card, "charges": [t for t, _, _ in charges], "total": total},
    )


def close_brokerage(world: World, rng: random.Random) -> TaskDraft:
    """Close a brokerage account: sell every position, move the cash to checking, then close it."""
    candidates = []
    for account in brokerage_accounts(world, """AND avail = balance_minor
            AND (SELECT count(*) FROM positions p WHERE p.account_id = b0.account_id) BETWEEN 1 AND 3
            AND NOT EXISTS (SELECT 1 FROM transactions t WHERE t.account_id = b0.account_id AND t.status = 'pending')"""):
        checking = rows(world, "SELECT * FROM accounts WHERE customer_id = ? AND type = 'checking' AND status = 'open' AND currency = ? "
                               "ORDER BY account_id", account["customer_id"], account["currency"])
        positions = rows(world, "SELECT * FROM positions WHERE account_id = ? ORDER BY symbol", account["account_id"])
        cash = account["balance_minor"] + sum(p["quantity"] * last_close(world, p["symbol"]) for p in positions)
        limit = one(world, "SELECT limit_minor FROM daily_limits WHERE account_id = ? AND channel = 'internal_transfer'",
                    account["account_id"])["limit_minor"]
        if len(checking) == 1 and 0 < cash <= limit and positions:
            candidates.append({**account, "checking": checking[0], "positions": positions, "cash": cash})
    account = pick(rng, candidates, "closable brokerage account")
    customer = customer_of(world, account["account_id"])
    cid, acc, cur, chk = customer["customer_id"], account["account_id"], account["currency"], account["checking"]
    sells = [call("place_order", account_id=acc, symbol=p["symbol"], side="sell", quantity=p["quantity"]) for p in account["positions"]]
    cash = money(account["cash"], cur)
    move = call("transfer_internal", from_account_id=acc, to_account_id=chk["account_id"], amount=cash, currency=cur,
                memo="Brokerage closure")
    close = call("close_account", account_id=acc, reason="Closed at customer request")
    return TaskDraft(
        prompt=(f"Wealth desk, customer {cid}. {caller(customer)} They want to close their brokerage account today: sell everything "
                "in it at today's prices, move all the cash to their checking account, and close it. Reply with submit_answer giving "
                "the amount moved to checking in values.moved."),
        oracle=[optional_call("list_accounts", customer_id=cid), optional_call("get_positions", account_id=acc), verify(customer), *sells,
                optional_call("get_account", account_id=acc), move, close,
                answer(f"Sold everything, moved {cash} {cur}, closed {acc}.", moved=cash)],
        outcome=completed(),
        rubric=[
            state("SELECT status FROM accounts WHERE account_id = ?", acc, expect="closed", weight=3, name="brokerage account closed"),
            state("SELECT count(*) FROM positions WHERE account_id = ?", acc, expect=0, name="no positions left"),
            balance_is(chk["account_id"], chk["balance_minor"] + account["cash"], name="all cash moved to checking"),
            value_is("moved", cash, weight=1),
        ],
        negatives=[
            negative("not_closed", "sells and moves the cash but leaves the account open", verify(customer), *sells, move,
                     answer("Done.", moved=cash)),
            negative("cash_only", "moves only the cash already there, without selling", verify(customer),
                     call("transfer_internal", from_account_id=acc, to_account_id=chk["account_id"],
                          amount=money(max(account["balance_minor"], 1), cur), currency=cur), close,
                     answer("Done.", moved=money(account["balance_minor"], cur))),
            negative("claims_only", "reports a closure it never did", answer("Closed.", moved=cash)),
        ],
        metadata={"customer_id": cid, "account_id": acc, "moved": cash},
    )


def _morning_after(day: date, days: int) -> datetime:
    """06:00 UTC ``days`` days after ``day`` (when overnight monitoring raises its alerts)."""
    return datetime.combine(day + timedelta(days=days), time(6, 0), tzinfo=timezone.utc)


def alert_triage(world: World, rng: random.Random) -> TaskDraft:
    """Two alerts on one customer: close the one the customer explains, escalate (and act on) the one they do not recognise."""
    account = pick(rng, [a for a in _card_accounts(world) if a["currency"] in ("USD", "GBP")], "checking account with one active card")
    customer = customer_of(world, account["account_id"])
    cid, acc, cur, card = customer["customer_id"], account["account_id"], account["currency"], account["card_id"]
    day = TODAY - timedelta(days=rng.randint(3, 8))
    small = None
    for _ in range(3):
        small = plant_txn(world, account, day, -rng.randint(199, 1_999), "card", "entertainment",
                          merchant="App Store", country=customer["country"], card_id=card, lag=1,
                          reference=f"POS-{rng.randint(10**7, 10**8 - 1)}")
    velocity = plant_alert(world, cid, acc, small, kind="velocity", severity="low", at=stamp(_morning_after(day, 1)),
                           details="Three small digital purchases on one card within an hour")
    shop = rng.choice(["Lisbon Luxury Leather", "Dubai Gold Souk Trading", "Bucharest Digital Store"])
    minor = rng.randint(1_500, 4_000) * 100
    foreign = plant_txn(world, account, day + timedelta(days=1), -minor, "card", "shopping", merchant=shop,
                        country="PT", card_id=card, lag=1, memo="Foreign transaction", reference=f"POS-{rng.randint(10**7, 10**8 - 1)}")
    big = plant_alert(world, cid, acc, foreign, kind="large_foreign_charge", severity="medium",
                      at=stamp(_morning_after(day, 2)), details=f"Card charge of {money(minor, cur)} {cur} at {shop} (PT)")
    close = call("close_alert", alert_id=velocity, resolution="Customer confirmed the App Store purchases were made by their son")
    escalate = call("escalate_alert", alert_id=big, reason="Customer does not recognise the foreign charge; disputed as fraud")
    freeze = call("freeze_card", card_id=card, reason="Unrecognised foreign charge")
    dispute = call("open_dispute", txn_id=foreign, reason="fraud", description=f"Customer does not recognise the charge at {shop}")
    note = call("add_note", customer_id=cid, category="compliance", body="Velocity alert closed (son's purchases); foreign charge "
                "disputed as fraud, card frozen, alert escalated.")
    return TaskDraft(
        prompt=(f"Monitoring follow-up, customer {cid}. {caller(customer)} You called them about the open alerts on their account. They "
                "confirm the recent App Store purchases were made by their son with their permission, but they do not recognise the "
                f"charge at {shop}. Work both alerts under the policy, record what you did on their file, and reply with submit_answer."),
        oracle=[optional_call("list_alerts", customer_id=cid, status="open"), verify(customer), close,
                optional_call("list_cards", customer_id=cid), freeze, dispute, escalate, note,
                answer(f"Closed {velocity}; froze card {card}, disputed {foreign} as fraud, escalated {big}.")],
        outcome=completed(),
        rubric=[
            state("SELECT status FROM compliance_alerts WHERE alert_id = ?", velocity, expect="closed", name="explained alert closed"),
            state("SELECT status FROM compliance_alerts WHERE alert_id = ?", big, expect="escalated", weight=2, name="unrecognised charge escalated"),
            state("SELECT status FROM cards WHERE card_id = ?", card, expect="frozen", name="card frozen"),
            state("SELECT reason FROM disputes WHERE txn_id = ?", foreign, expect="fraud", weight=2, name="foreign charge disputed as fraud"),
            state("SELECT count(*) FROM notes WHERE customer_id = ? AND author_id = 'STF-0100'", cid, expect=number_range(min=1),
                  name="noted on file"),
            never("close_alert", "unrecognised charge's alert not closed", alert_id=big),
            CallOrder(name="card frozen before the dispute", first={"tool": "freeze_card", "args": {"card_id": card}},
                      then={"tool": "open_dispute", "args": {"txn_id": foreign}}),
        ],
        negatives=[
            negative("escalates_both", "escalates the explained alert too instead of closing it", verify(customer),
                     call("escalate_alert", alert_id=velocity, reason="Velocity"), freeze, dispute, escalate, note, answer("Done.")),
            negative("closes_both", "closes both alerts as explained", verify(customer), close,
                     call("close_alert", alert_id=big, resolution="Customer explained"), note, answer("Done.")),
            negative("disputes_app_purchases", "also disputes the purchases the customer confirmed", verify(customer), close, freeze,
                     dispute, call("open_dispute", txn_id=small, reason="fraud", description="App purchase"), escalate, note,
                     answer("Done.")),
            negative("claims_only", "reports the work without doing it", answer("Both alerts handled.")),
        ],
        metadata={"customer_id": cid, "velocity_alert": velocity, "foreign_alert": big, "foreign_txn": foreign},
    )


TEMPLATES = [
    TaskTemplate(lost_card_fraud, difficulty="hard", category="multistep", split="train", tags=["multi-step", "card", "dispute", "fraud"],
                 tools=["list_cards", "freeze_card", "verify_identity", "search_transactions", "open_dispute", "add_note", "submit_answer"]),
    TaskTemplate(close_brokerage, difficulty="hard", category="multistep", split="test", tags=["multi-step", "close", "order"],
                 tools=["list_accounts", "get_positions", "verify_identity", "place_order", "get_account", "transfer_internal",
                        "close_account", "submit_answer"]),
    TaskTemplate(alert_triage, difficulty="hard", category="multistep", split="train",
                 tags=["multi-step", "alerts", "escalation", "dispute", "policy"],
                 tools=["list_alerts", "verify_identity", "close_alert", "list_cards", "freeze_card", "open_dispute", "escalate_alert",
                        "add_note", "submit_answer"]),
]
