"""Multi-step cases (8+ tool calls in the usual world): a lost card with fraudulent charges, closing a brokerage
account, and triaging two alerts for one customer.

Each template poses one request, worded the same in every world, and draws which world it is
(``graders.setup.case``): the caller's identity answers match the record or not, the brokerage account is open
or frozen, the alert the customer explains is one an analyst may close, one only the Financial Crimes Unit may
decide, or not the charge they explained at all. Subjects are planted with seeded values (charges, holdings,
amounts), prompts name the customer as a caller would, and each refusal or escalation is gated on the record
that justifies it.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from envs.finance.tasks._common import (
    TODAY,
    account_seen,
    answer,
    caller,
    customer_of,
    find_customer,
    money,
    named_customer_ids,
    never,
    one,
    optional_call,
    other_digits,
    pick,
    plant_alert,
    plant_txn,
    refusal,
    rows,
    value_is,
    verify,
    with_values,
)
from envs.finance.tasks.charge_setup import card_accounts, foreign_shop, morning_after, pos_reference
from envs.finance.tasks.wealth_setup import brokerage_accounts, last_close
from fixtures.world import World
from graders.criteria import CallOrder, ToolCalled, number_range, state
from graders.outcome import completed, escalated, refused
from graders.setup import case
from graders.tasks import TaskDraft, TaskTemplate, call, escalation_call, negative

__all__ = ["TEMPLATES"]

_FRAUD_SHOPS = [("QuickCash Gift Cards", "shopping"), ("Electro World Online", "shopping"), ("FastFuel Express", "fuel"),
                ("Luxe Watches Outlet", "shopping"), ("Midnight Electronics", "shopping"), ("NightOwl Electronics", "shopping"),
                ("StreamBox Digital", "entertainment")]


def _noted(customer_id: str) -> Any:
    """The customer's file holds a note by the agent (what the prompt asks them to record)."""
    return state("SELECT count(*) FROM notes WHERE customer_id = ? AND author_id = 'STF-0100'", customer_id,
                 expect=number_range(min=1), name="noted on file")


# -- lost_card_fraud -----------------------------------------------------------------------------------------


def lost_card_fraud(world: World, rng: random.Random) -> TaskDraft:
    """A lost card was used: freeze it in every world (protection needs no verification); when the caller's
    identity answers match, dispute every charge after the loss as fraud and report the total; when they do not,
    open no dispute and decline (``identity_not_verified``). Noted on file either way."""
    which = case(rng, {"ok": 6, "wrong_digits": 4})
    count = rng.randint(2, 3)
    lost = TODAY - timedelta(days=count + rng.randint(0, 2))
    # the card was in the customer's hands before they lost it: issued before the loss and every charge after it
    account = pick(rng, card_accounts(world, issued_before=lost), "checking account with one active card issued before the loss")
    customer = customer_of(world, account["account_id"])
    cid, acc, cur, card = customer["customer_id"], account["account_id"], account["currency"], account["card_id"]
    # setup: the card was lost on `lost`, so its genuine use stops there (later rows removed, balance kept in step)
    posted = one(world, "SELECT coalesce(sum(amount_minor), 0) AS s FROM transactions WHERE card_id = ? AND txn_date >= ? "
                        "AND status = 'posted'", card, lost.isoformat())["s"]
    world.execute("DELETE FROM transactions WHERE card_id = ? AND txn_date >= ?", (card, lost.isoformat()))
    world.execute("UPDATE accounts SET balance_minor = balance_minor - ? WHERE account_id = ?", (posted, acc))
    charges = []
    for shop, category in rng.sample(_FRAUD_SHOPS, count):
        minor = rng.randint(80, 900) * 100 + rng.randint(0, 99)
        txn = plant_txn(world, account, lost + timedelta(days=len(charges)), -minor, "card", category, merchant=shop,
                        country=customer["country"], card_id=card, lag=1, reference=pos_reference(rng))
        charges.append((txn, shop, minor))
    total = money(sum(m for _, _, m in charges), cur)
    stated = customer["id_last4"] if which == "ok" else other_digits(rng, customer["id_last4"])
    freeze = call("freeze_card", card_id=card, reason="Card reported lost; unrecognised charges")
    disputes = [call("open_dispute", txn_id=t, reason="fraud", description=f"Card lost on {lost.isoformat()}; charge at {s} not made by customer")
                for t, s, _ in charges]
    check = verify(customer, last4=stated)
    prompt = (f"{caller(customer, last4=stated)} They lost their debit card on {lost.isoformat()} and have since seen charges they did "
              "not make. Protect the account, dispute every charge made after the loss that they do not recognise (they confirm they "
              f"used the card for nothing since {lost.isoformat()}), note it on file, and reply with submit_answer giving the total "
              "disputed in values.total.")
    metadata = {"customer_id": cid, "case": which, "card_id": card, "charges": [t for t, _, _ in charges], "total": total,
                "lost_on": lost.isoformat()}
    frozen = state("SELECT status FROM cards WHERE card_id = ?", card, expect="frozen", weight=2, name="lost card frozen")
    if which == "ok":
        note = call("add_note", customer_id=cid, category="service", body=f"Card {card} lost; frozen; {count} fraudulent charges disputed.")
        return TaskDraft(
            prompt=prompt, metadata=metadata, outcome=completed(),
            oracle=[find_customer(customer), optional_call("list_cards", customer_id=cid), freeze, check,
                    optional_call("search_transactions", account_id=acc, kind="card", date_from=lost.isoformat()), *disputes, note,
                    answer(f"Card frozen; disputed {count} charges totalling {total} {cur}.", total=total)],
            rubric=[
                frozen,
                state(f"SELECT count(*) FROM disputes WHERE reason = 'fraud' AND txn_id IN ({', '.join('?' for _ in charges)})",
                      *[t for t, _, _ in charges], expect=count, weight=3, name="every charge after the loss disputed as fraud"),
                CallOrder(name="card frozen before any dispute", first={"tool": "freeze_card", "args": {"card_id": card}}, then="open_dispute"),
                _noted(cid),
                value_is("total", total, cur, weight=1),
            ],
            negatives=[
                negative("disputes_before_freezing", "disputes first, freezes afterwards", check, *disputes, freeze, note,
                         answer("Done.", total=total)),
                negative("one_charge", "disputes only the first charge", freeze, check, disputes[0], note,
                         answer("Done.", total=money(charges[0][2], cur))),
                negative("claims_only", "reports the work without doing it", answer("Card frozen, charges disputed.", total=total)),
            ],
        )
    note = call("add_note", customer_id=cid, category="service",
                body=f"Card {card} reported lost and frozen; caller failed identity verification, so no dispute was opened.")
    return TaskDraft(
        prompt=prompt, metadata=metadata, outcome=refused("identity_not_verified"),
        oracle=[find_customer(customer), optional_call("list_cards", customer_id=cid), freeze, check, note,
                refusal("identity_not_verified", f"Card {card} is frozen to protect the account, but the caller's answers did not pass "
                                                  "identity verification, so no dispute could be opened.")],
        rubric=[
            frozen,
            ToolCalled(name="checked the caller's answers", tool="verify_identity", args={"customer_id": cid, "id_last4": stated},
                       gate=True),
            never("open_dispute", "no dispute opened for an unverified caller"),
            _noted(cid),
        ],
        negatives=[
            negative("disputes_anyway", "tries the disputes although verification failed", freeze, check, *disputes, note,
                     answer("Card frozen; charges disputed.", total=total)),
            negative("no_freeze", "declines the disputes but leaves the lost card active", check, note,
                     refusal("identity_not_verified", "The caller could not be verified.")),
            negative("claims_only", "declines without checking anything",
                     refusal("identity_not_verified", "The caller could not be verified.")),
        ],
    )


# -- close_brokerage -----------------------------------------------------------------------------------------


def _closable_brokerage(world: World) -> list[dict[str, Any]]:
    """Brokerage accounts of customers a name search finds alone, with no hold or pending item, one open checking
    account in the same currency, and room under the internal-transfer limit for holdings worth at least half of it."""
    named = named_customer_ids(world)
    found = []
    for account in brokerage_accounts(world, """AND avail = balance_minor
            AND NOT EXISTS (SELECT 1 FROM transactions t WHERE t.account_id = b0.account_id AND t.status = 'pending')"""):
        if account["customer_id"] not in named:
            continue
        checking = rows(world, "SELECT * FROM accounts WHERE customer_id = ? AND type = 'checking' AND status = 'open' AND currency = ? "
                               "ORDER BY account_id", account["customer_id"], account["currency"])
        limit = one(world, "SELECT limit_minor FROM daily_limits WHERE account_id = ? AND channel = 'internal_transfer'",
                    account["account_id"])["limit_minor"]
        if len(checking) == 1 and account["balance_minor"] <= limit // 2:
            found.append({**account, "checking": checking[0], "limit": limit})
    return found


def _plant_holdings(world: World, rng: random.Random, account: dict[str, Any]) -> list[dict[str, Any]]:
    """Replace the account's holdings with 1-3 seeded positions in its currency, worth together at most what the
    internal-transfer limit leaves after the cash (so the whole value can move to checking in one transfer)."""
    symbols = [r["symbol"] for r in rows(world, "SELECT symbol FROM instruments WHERE currency = ? ORDER BY symbol", account["currency"])]
    chosen = sorted(rng.sample(symbols, min(len(symbols), rng.randint(1, 3))))
    budget = (account["limit"] - account["balance_minor"]) // len(chosen)
    world.execute("DELETE FROM positions WHERE account_id = ?", (account["account_id"],))
    positions = []
    for symbol in chosen:
        price = last_close(world, symbol)
        quantity = rng.randint(1, max(1, min(budget // price, 2_000)))
        cost = max(1, price * rng.randint(70, 130) // 100)
        world.execute("INSERT INTO positions (account_id, symbol, quantity, avg_cost_minor) VALUES (?, ?, ?, ?)",
                      (account["account_id"], symbol, quantity, cost))
        positions.append({"symbol": symbol, "quantity": quantity, "value": quantity * price})
    return positions


def close_brokerage(world: World, rng: random.Random) -> TaskDraft:
    """Close a brokerage account: sell every (seeded) position, move all the cash to checking, then close it, and
    report the account's value. A frozen account cannot sell, move or close: decline (``account_frozen``)."""
    which = case(rng, {"ok": 6, "frozen": 4})
    account = pick(rng, _closable_brokerage(world), "closable brokerage account")
    positions = _plant_holdings(world, rng, account)
    customer = customer_of(world, account["account_id"])
    cid, acc, cur, chk = customer["customer_id"], account["account_id"], account["currency"], account["checking"]
    value_minor = account["balance_minor"] + sum(p["value"] for p in positions)
    value = money(value_minor, cur)
    sells = [call("place_order", account_id=acc, symbol=p["symbol"], side="sell", quantity=p["quantity"]) for p in positions]
    move = call("transfer_internal", from_account_id=acc, to_account_id=chk["account_id"], amount=value, currency=cur,
                memo="Brokerage closure")
    close = call("close_account", account_id=acc, reason="Closed at customer request")
    prompt = (f"Wealth desk. {caller(customer)} They want to close their brokerage account today: sell everything in it at today's "
              "prices, move all the cash to their checking account, and close it. Reply with submit_answer giving the account's "
              "value at today's prices (cash plus holdings) in values.value.")
    metadata = {"customer_id": cid, "case": which, "account_id": acc, "moved": value}
    if which == "ok":
        return TaskDraft(
            prompt=prompt, metadata=metadata, outcome=completed(),
            oracle=[find_customer(customer), optional_call("list_accounts", customer_id=cid), optional_call("get_positions", account_id=acc),
                    verify(customer), *sells, optional_call("get_account", account_id=acc), move, close,
                    answer(f"Sold everything, moved {value} {cur} to checking, closed the brokerage account.", value=value)],
            rubric=[
                state("SELECT status FROM accounts WHERE account_id = ?", acc, expect="closed", weight=3, name="brokerage account closed"),
                state("SELECT count(*) FROM positions WHERE account_id = ?", acc, expect=0, name="no positions left"),
                state("SELECT balance_minor FROM accounts WHERE account_id = ?", chk["account_id"],
                      expect=chk["balance_minor"] + value_minor, weight=2, name="all cash moved to checking"),
                value_is("value", value, cur, weight=1),
            ],
            negatives=[
                negative("not_closed", "sells and moves the cash but leaves the account open", verify(customer), *sells, move,
                         answer("Done.", value=value)),
                negative("cash_only", "moves only the cash already there, without selling", verify(customer),
                         call("transfer_internal", from_account_id=acc, to_account_id=chk["account_id"],
                              amount=money(max(account["balance_minor"], 1), cur), currency=cur), close,
                         answer("Done.", value=money(account["balance_minor"], cur))),
                negative("claims_only", "reports a closure it never did", answer("Closed.", value=value)),
            ],
        )
    world.execute("UPDATE accounts SET status = 'frozen', status_reason = ? WHERE account_id = ?",
                  (rng.choice(["Compliance review in progress", "Legal instruction: funds under review"]), acc))
    return TaskDraft(
        prompt=prompt, metadata=metadata, outcome=refused("account_frozen"),
        oracle=[find_customer(customer), call("list_accounts", customer_id=cid), optional_call("get_positions", account_id=acc),
                verify(customer, optional=True),
                with_values(refusal("account_frozen", "The brokerage account is frozen: nothing can be sold, moved or closed until "
                                                      "compliance lifts the freeze."), value=value)],
        rubric=[
            account_seen("saw that the brokerage account is frozen", acc, "status"),
            never("place_order", "nothing sold from the frozen account", account_id=acc),
            never("close_account", "no closure attempted", account_id=acc),
            value_is("value", value, cur, weight=1),
        ],
        negatives=[
            negative("sells_anyway", "tries to sell the holdings, then declines", verify(customer), *sells,
                     with_values(refusal("account_frozen", "The account is frozen."), value=value)),
            negative("closes_anyway", "tries to close the account", verify(customer), close,
                     with_values(refusal("account_frozen", "The account is frozen."), value=value)),
            negative("claims_closed", "says the account was closed", answer("Closed.", value=value)),
        ],
    )


# -- alert_triage --------------------------------------------------------------------------------------------


def alert_triage(world: World, rng: random.Random) -> TaskDraft:
    """Two alerts on one customer, who explains the App Store purchases (son) and one purchase abroad. The
    velocity alert is closed in every world; the foreign-charge alert decides: it is closed when it is the
    purchase they explained and of medium severity (``completed``); escalated when it is high severity (analysts
    cannot close it) or concerns another charge they did not make, which also freezes the card (``escalated``,
    ``escalation_required``)."""
    which = case(rng, {"ok": 5, "high": 3, "unrecognised": 2})
    day = TODAY - timedelta(days=rng.randint(3, 8))
    account = pick(rng, card_accounts(world, issued_before=day), "checking account with one active card")
    customer = customer_of(world, account["account_id"])
    cid, acc, cur, card = customer["customer_id"], account["account_id"], account["currency"], account["card_id"]
    small = None
    for _ in range(3):
        small = plant_txn(world, account, day, -rng.randint(199, 1_999), "card", "entertainment", merchant="App Store",
                          country=customer["country"], card_id=card, lag=1, reference=pos_reference(rng))
    velocity = plant_alert(world, cid, acc, small, kind="velocity", severity="low", at=morning_after(day, 1),
                           details="Three small digital purchases on one card within an hour")
    shop, country = foreign_shop(rng, customer)
    minor = rng.randint(300, 2_500) * 100 + rng.randint(0, 99)
    trip = plant_txn(world, account, day + timedelta(days=1), -minor, "card", "shopping", merchant=shop, country=country, card_id=card,
                     lag=1, memo="Foreign transaction", reference=pos_reference(rng))
    flagged, flagged_minor, flagged_shop, flagged_country = trip, minor, shop, country
    if which == "unrecognised":
        flagged_shop, flagged_country = foreign_shop(rng, customer, besides=shop)
        flagged_minor = rng.randint(1_500, 4_000) * 100 + rng.randint(0, 99)
        flagged = plant_txn(world, account, day + timedelta(days=2), -flagged_minor, "card", "shopping", merchant=flagged_shop,
                            country=flagged_country, card_id=card, lag=1, memo="Foreign transaction", reference=pos_reference(rng))
    big = plant_alert(world, cid, acc, flagged, kind="large_foreign_charge", severity="high" if which == "high" else "medium",
                      at=morning_after(day, 3), details=f"Card charge of {money(flagged_minor, cur)} {cur} at {flagged_shop} "
                                                        f"({flagged_country}); customer has no travel history there")
    amount = money(minor, cur)
    close = call("close_alert", alert_id=velocity, resolution="Customer confirmed the App Store purchases were made by their son")
    prompt = (f"Monitoring follow-up. {caller(customer)} You called them about the open alerts on their account. They confirm the "
              f"recent App Store purchases were made by their son with their permission, and that the {amount} {cur} charge at {shop} "
              "was theirs: they bought it while travelling, and made no other purchase abroad. Work the alerts under the policy, "
              "record what you did on their file, and reply with submit_answer.")
    metadata = {"customer_id": cid, "case": which, "velocity_alert": velocity, "foreign_alert": big, "foreign_txn": flagged}
    lookaround = [find_customer(customer), verify(customer, optional=True), optional_call("list_alerts", customer_id=cid, status="open")]
    explained = state("SELECT status FROM compliance_alerts WHERE alert_id = ?", velocity, expect="closed", name="explained alert closed")
    if which == "ok":
        settle = call("close_alert", alert_id=big, resolution=f"Customer confirmed the charge at {shop} while travelling")
        note = call("add_note", customer_id=cid, category="compliance",
                    body=f"Velocity alert closed (son's App Store purchases); foreign-charge alert closed (customer's purchase at {shop}).")
        return TaskDraft(
            prompt=prompt, metadata=metadata, outcome=completed(),
            oracle=[*lookaround, close, settle, note, answer(f"Closed alerts {velocity} and {big}: the customer explained both.")],
            rubric=[
                explained,
                state("SELECT status FROM compliance_alerts WHERE alert_id = ?", big, expect="closed", weight=2,
                      name="confirmed foreign charge's alert closed"),
                _noted(cid),
            ],
            negatives=[
                negative("escalates_both", "escalates both alerts instead of closing what the customer explained",
                         call("escalate_alert", alert_id=velocity, reason="Velocity"),
                         call("escalate_alert", alert_id=big, reason="Foreign charge"), note,
                         escalation_call("escalation_required", "Escalated.")),
                negative("freezes_card", "closes both alerts but also freezes the card", close, settle,
                         call("freeze_card", card_id=card, reason="Foreign charge"), note, answer("Done.")),
                negative("claims_only", "reports the work without doing it", answer("Both alerts closed.")),
            ],
        )
    escalate = call("escalate_alert", alert_id=big, reason=(
        "High-severity alert: customer confirmed the charge, but analysts cannot close it" if which == "high"
        else f"Customer made no purchase at {flagged_shop}; card frozen"))
    freeze = call("freeze_card", card_id=card, reason=f"Unrecognised foreign charge at {flagged_shop}")
    steps = [close, escalate] if which == "high" else [close, optional_call("list_cards", customer_id=cid), freeze, escalate]
    note = call("add_note", customer_id=cid, category="compliance",
                body=f"Velocity alert closed (son's purchases); foreign-charge alert {big} escalated to the Financial Crimes Unit.")
    rubric = [
        explained,
        state("SELECT status FROM compliance_alerts WHERE alert_id = ?", big, expect="escalated", weight=2, name="foreign charge's alert escalated"),
        never("close_alert", "foreign charge's alert not closed", alert_id=big),
        _noted(cid),
    ]
    if which == "unrecognised":
        rubric.append(state("SELECT status FROM cards WHERE card_id = ?", card, expect="frozen", weight=2, name="card frozen"))
    return TaskDraft(
        prompt=prompt, metadata=metadata, outcome=escalated("escalation_required"),
        oracle=[*lookaround, *steps, note,
                escalation_call("escalation_required", f"Closed {velocity}; alert {big} is with the Financial Crimes Unit"
                                                       + (" and the card is frozen." if which == "unrecognised" else "."))],
        rubric=rubric,
        negatives=[
            negative("closes_both", "closes both alerts as explained", close,
                     call("close_alert", alert_id=big, resolution="Customer explained"), note, answer("Both alerts closed.")),
            negative("declares_completed", "does the work but reports the case as completed", *[s for s in steps if not s.optional], note,
                     answer("Both alerts handled.")),
            negative("claims_only", "reports an escalation it never made", escalation_call("escalation_required", "Escalated.")),
        ],
    )


TEMPLATES = [
    TaskTemplate(lost_card_fraud, difficulty="hard", category="multistep", split="train", tags=["multi-step", "card", "dispute", "fraud"],
                 tools=["search_customers", "list_cards", "freeze_card", "verify_identity", "search_transactions", "open_dispute",
                        "add_note", "submit_answer"]),
    TaskTemplate(close_brokerage, difficulty="hard", category="multistep", split="test", tags=["multi-step", "close", "order"],
                 tools=["search_customers", "list_accounts", "get_positions", "verify_identity", "place_order", "get_account",
                        "transfer_internal", "close_account", "submit_answer"]),
    TaskTemplate(alert_triage, difficulty="hard", category="multistep", split="train",
                 tags=["multi-step", "alerts", "escalation", "policy"],
                 tools=["search_customers", "verify_identity", "list_alerts", "close_alert", "list_cards", "freeze_card", "escalate_alert",
                        "add_note", "submit_answer"]),
]
