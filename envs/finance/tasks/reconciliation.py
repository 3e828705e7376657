"""Reconciliation tasks: find the charge a customer complains about and dispute it the way the policy says
(a duplicate on the second charge only, fraud after freezing the card, nothing outside the 60-day window),
escalating what monitoring flagged.

Each template poses one request, worded the same whatever the world holds, and draws which world it is
(``graders.setup.case``): the charge is a real duplicate or a separate purchase, inside the dispute window or
past it, posted or still pending, disputed already or not. The prompt names the customer and the charge as the
caller would (name, verification answers, merchant, amount), never by the ids the oracle's reads and writes
need, and each refusal is gated on the read of the record that justifies it.
"""

from __future__ import annotations

import random
import re
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from envs.finance.catalog import FOREIGN_MERCHANTS
from envs.finance.tasks._common import (
    NOW,
    TODAY,
    answer,
    caller,
    find_customer,
    looked_up,
    money,
    named_customer_ids,
    never,
    next_id,
    one,
    optional_call,
    pick,
    plant_alert,
    plant_audit,
    plant_txn,
    refusal,
    rows,
    stamp,
    value_is,
    verify,
)
from fixtures.world import World
from graders.criteria import AnswerCheck, AnyToolCalled, CallOrder, absent, number_range, regex, state
from graders.criteria.matchers import Regex
from graders.outcome import completed, refused
from graders.setup import case
from graders.tasks import TaskDraft, TaskTemplate, ToolCall, call, negative

__all__ = [
    "TEMPLATES",
    "card_accounts",
    "charge_read",
    "foreign_shop",
    "merchant_words",
    "morning_after",
    "owner",
    "plant_duplicate",
    "pos_reference",
    "recent_card_charges",
    "with_values",
]

_CODE = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
_ONLINE_SHOPS = ["Northwind Outdoor Gear", "Harbor Electronics Online", "Bluebird Home Goods", "Cascade Sporting Co",
                 "Maple & Oak Furniture", "Summit Camera Supply", "Lumen Lighting Store", "Pinecrest Books Online",
                 "Copperleaf Kitchenware", "Riverbend Toys & Games"]
"""Online shops a customer might say never delivered (names the fixture's own merchants never use)."""
_DOMESTIC_SHOPS = [("NightOwl Electronics", "shopping"), ("QuickCash Gift Cards", "shopping"), ("FastFuel Express", "fuel"),
                   ("Luxe Watches Outlet", "shopping"), ("StreamBox Digital", "entertainment"), ("Metro Ticket Machines", "transport"),
                   ("Grand Avenue Jewellers", "shopping"), ("PixelPlay Game Store", "entertainment")]
"""Merchants of a stolen card's charges (category included)."""


def pos_reference(rng: random.Random) -> str:
    """A card network reference as the fixture writes them (``POS-`` and 8 letters/digits)."""
    return "POS-" + "".join(rng.choice(_CODE) for _ in range(8))


def morning_after(day: date, days: int) -> str:
    """06:00 UTC ``days`` days after ``day`` (when overnight monitoring raises its alerts), never after now."""
    moment = datetime.combine(day + timedelta(days=days), time(6, 0), tzinfo=UTC)
    return stamp(min(moment, NOW - timedelta(hours=1)))


def owner(world: World, account_id: str) -> dict[str, Any]:
    """The customer row owning ``account_id``."""
    return one(world, "SELECT c.* FROM customers c JOIN accounts a ON a.customer_id = c.customer_id WHERE a.account_id = ?", account_id)


def card_accounts(world: World) -> list[dict[str, Any]]:
    """Open checking accounts of customers a name search finds alone, whose owner has exactly one active card
    and no open alert or open dispute (so a planted charge, alert or dispute is the only one of its kind)."""
    named = named_customer_ids(world)
    found = rows(world, """
        SELECT a.*, c.card_id FROM accounts a JOIN cards c ON c.account_id = a.account_id AND c.status = 'active'
        WHERE a.type = 'checking' AND a.status = 'open' AND a.balance_minor >= 200000
          AND (SELECT count(*) FROM cards k WHERE k.customer_id = a.customer_id AND k.status = 'active') = 1
          AND NOT EXISTS (SELECT 1 FROM compliance_alerts al WHERE al.customer_id = a.customer_id AND al.status != 'closed')
          AND NOT EXISTS (SELECT 1 FROM disputes d WHERE d.customer_id = a.customer_id AND d.status = 'open')
        ORDER BY a.account_id""")
    return [a for a in found if a["customer_id"] in named]


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


_GENERIC_WORDS = {"online", "store", "shop", "the", "and", "company", "market", "trading", "express", "outlet", "digital"}


def merchant_words(merchant: str) -> Regex:
    """A search text naming ``merchant``: any text holding one of its distinctive words (case-insensitive).

    Why: a look-up gate bound to the customer alone is met by another instance's oracle for the same customer
    (a replay); bound to the merchant too, only a read of this charge's merchant (or of the whole ledger) counts.
    """
    words = [w for w in re.split(r"[^\w]+", merchant.lower()) if len(w) >= 3 and w not in _GENERIC_WORDS] or [merchant.lower()]
    return regex("(?is).*(" + "|".join(re.escape(w) for w in words) + ").*")


def charge_read(name: str, customer_id: str, account_id: str, txn_id: str, merchant: str, *, weight: float = 2.0) -> AnyToolCalled:
    """Gate: the agent read the charge that decides the case — its customer's or account's ledger searched for its
    merchant or unfiltered, or the charge itself."""
    patterns: list[dict[str, Any]] = []
    for key, value in (("customer_id", customer_id), ("account_id", account_id)):
        patterns.append({"tool": "search_transactions", "args": {key: value, "merchant": merchant_words(merchant)}})
        patterns.append({"tool": "search_transactions", "args": {key: value, "merchant": absent()}})
    return looked_up(name, *patterns, {"tool": "get_transaction", "args": {"txn_id": txn_id}}, weight=weight)


def with_values(final: ToolCall, **values: str) -> ToolCall:
    """``final`` (a refusal or escalation answer) with the figures the task asks for in ``values``."""
    return final.model_copy(update={"arguments": {**final.arguments, "values": values}})


# -- duplicate_charge ----------------------------------------------------------------------------------------


def _other_day(world: World, rng: random.Random, original: dict) -> date:
    """A day 3-9 days from the original's on which the account has no charge at that merchant (a separate purchase
    that posts by today)."""
    first = date.fromisoformat(original["txn_date"])
    lag = (date.fromisoformat(original["posted_on"]) - first).days
    taken = {r["txn_date"] for r in rows(world, "SELECT txn_date FROM transactions WHERE account_id = ? AND merchant = ? "
                                                 "ORDER BY txn_date", original["account_id"], original["merchant"])}
    days = [first + timedelta(days=sign * gap) for gap in range(3, 10) for sign in (-1, 1)]
    days = [d for d in days if d + timedelta(days=lag) <= TODAY - timedelta(days=1) and d.isoformat() not in taken]
    return days[rng.randrange(len(days))]


def second_is(day: str) -> AnswerCheck:
    """The answer's ``values.second_on`` is the date of the second charge (the same day for a true duplicate)."""
    return AnswerCheck(name="answer gives the second charge's date", field="values.second_on", expect=day, weight=1)


def duplicate_charge(world: World, rng: random.Random) -> TaskDraft:
    """A customer says one purchase was charged twice. The ledger decides: a true duplicate (same merchant, amount
    and day) is disputed as ``duplicate`` on the second charge only; a duplicate still pending cannot be disputed
    yet (``not_posted``); the same amount on another day is a separate purchase, and nothing is disputed."""
    which = case(rng, {"duplicate": 5, "separate": 3, "pending": 2})
    original = pick(rng, recent_card_charges(world, TODAY - timedelta(days=15), TODAY - timedelta(days=2)), "recent card charge")
    customer = owner(world, original["account_id"])
    cid, acc, cur = customer["customer_id"], original["account_id"], original["currency"]
    amount, merchant, day = money(-original["amount_minor"], cur), original["merchant"], original["txn_date"]
    if which == "separate":
        second = plant_duplicate(world, rng, original, day=_other_day(world, rng, original))
    else:
        second = plant_duplicate(world, rng, original, status="pending" if which == "pending" else "posted")
    second_day = one(world, "SELECT txn_date FROM transactions WHERE txn_id = ?", second)["txn_date"]
    search = call("search_transactions", customer_id=cid, merchant=merchant)
    dispute = call("open_dispute", txn_id=second, reason="duplicate", description=f"Charged twice at {merchant} on {day}")
    prompt = (f"Card disputes queue. {caller(customer)} They say they were charged twice at {merchant} on {day} ({amount} {cur} "
              "each time) for a single purchase and want the extra charge dealt with. Handle it under the policy and reply with "
              "submit_answer, giving the amount you disputed in values.disputed (0.00 if you dispute nothing) and the date of the "
              "second charge of that amount at that merchant in values.second_on.")
    common = {"prompt": prompt, "metadata": {"customer_id": cid, "case": which, "original": original["txn_id"], "duplicate": second}}
    if which == "duplicate":
        return TaskDraft(
            **common, outcome=completed(),
            oracle=[find_customer(customer), verify(customer), search.model_copy(update={"optional": True}), dispute,
                    answer(f"Disputed the duplicate charge {second} of {amount} {cur} at {merchant}.", disputed=amount, second_on=day)],
            rubric=[
                state("SELECT count(*) FROM disputes WHERE txn_id = ? AND reason = 'duplicate' AND amount_minor = ? AND status = 'open'",
                      second, -original["amount_minor"], expect=1, weight=3, name="second charge disputed as duplicate"),
                state("SELECT count(*) FROM disputes WHERE txn_id = ?", original["txn_id"], expect=0, gate=True,
                      name="genuine first charge not disputed"),
                value_is("disputed", amount, weight=1),
                second_is(day),
            ],
            negatives=[
                negative("disputes_original", "disputes the first (genuine) charge instead of the second", verify(customer), search,
                         call("open_dispute", txn_id=original["txn_id"], reason="duplicate", description="Charged twice"),
                         answer("Disputed.", disputed=amount)),
                negative("disputes_both", "disputes both charges, so the customer would be refunded twice", verify(customer),
                         call("open_dispute", txn_id=original["txn_id"], reason="duplicate", description="Charged twice"),
                         dispute, answer("Disputed both.", disputed=money(-2 * original["amount_minor"], cur))),
                negative("fraud_and_freeze", "treats it as fraud: freezes the card and disputes the charge as fraud", verify(customer),
                         call("freeze_card", card_id=original["card_id"], reason="Suspicious double charge"),
                         call("open_dispute", txn_id=second, reason="fraud", description="Charged twice"),
                         answer("Card frozen, disputed.", disputed=amount)),
                negative("claims_only", "says the dispute was opened without opening it",
                         answer(f"Disputed the duplicate charge of {amount} {cur} at {merchant}.", disputed=amount)),
            ],
        )
    if which == "pending":
        return TaskDraft(
            **common, outcome=refused("not_posted"),
            oracle=[find_customer(customer), verify(customer, optional=True), search,
                    with_values(refusal("not_posted", f"The second charge of {amount} {cur} at {merchant} is still pending; a "
                                                      "charge can be disputed only once it has posted, so nothing was disputed yet."),
                                second_on=day)],
            rubric=[
                charge_read("read the charges", cid, acc, second, merchant),
                never("open_dispute", "no dispute attempted while the second charge is pending"),
                second_is(day),
            ],
            negatives=[
                negative("disputes_pending", "tries to dispute the pending charge, then declines", verify(customer), search, dispute,
                         refusal("not_posted", "It is still pending.")),
                negative("disputes_original", "disputes the posted original because the second is pending", verify(customer), search,
                         call("open_dispute", txn_id=original["txn_id"], reason="duplicate", description="Charged twice"),
                         answer("Disputed.", disputed=amount)),
                negative("claims_disputed", "tells the customer the duplicate was disputed", answer("Disputed.", disputed=amount)),
            ],
        )
    return TaskDraft(
        **common, outcome=completed(),
        oracle=[find_customer(customer), verify(customer, optional=True), search,
                answer(f"There is only one charge at {merchant} on {day}; the other charge of {amount} {cur} is dated {second_day}, "
                       "a separate purchase, not a duplicate. Nothing was disputed.", disputed="0.00", second_on=second_day)],
        rubric=[
            charge_read("read the charges", cid, acc, second, merchant),
            never("open_dispute", "no dispute on a separate purchase"),
            value_is("disputed", "0.00"),
            second_is(second_day),
        ],
        negatives=[
            negative("disputes_separate", "disputes the purchase of the other day as a duplicate", verify(customer), search, dispute,
                     answer("Disputed.", disputed=amount)),
            negative("disputes_original", "disputes the purchase the customer named", verify(customer), search,
                     call("open_dispute", txn_id=original["txn_id"], reason="duplicate", description="Charged twice"),
                     answer("Disputed.", disputed=amount)),
            negative("no_look", "says there is nothing to dispute without reading the ledger", answer("Nothing to dispute.", disputed="0.00")),
        ],
    )


# -- foreign_fraud -------------------------------------------------------------------------------------------


def foreign_shop(rng: random.Random, customer: dict[str, Any], *, besides: str | None = None) -> tuple[str, str]:
    """An unusual foreign merchant (name, country) outside the customer's own country (and other than ``besides``)."""
    shops = [(name, country) for name, country, _ in FOREIGN_MERCHANTS if country != customer["country"] and name != besides]
    return shops[rng.randrange(len(shops))]


def foreign_fraud(world: World, rng: random.Random) -> TaskDraft:
    """A customer does not recognise a large foreign card charge that monitoring flagged: freeze the card and
    escalate the alert in every world; dispute the charge as fraud when it has posted, decline the dispute
    (``not_posted``) while it is still pending."""
    which = case(rng, {"posted": 6, "pending": 4})
    account = pick(rng, card_accounts(world), "checking account with one active card")
    customer = owner(world, account["account_id"])
    cid, acc, cur, card = customer["customer_id"], account["account_id"], account["currency"], account["card_id"]
    merchant, country = foreign_shop(rng, customer)
    minor = rng.randint(1_500, 6_500) * 100 + rng.randint(0, 99)
    amount = money(minor, cur)
    day = TODAY - timedelta(days=rng.randint(2, 9) if which == "posted" else rng.randint(1, 3))
    txn = plant_txn(world, account, day, -minor, "card", "shopping", merchant=merchant, country=country, card_id=card, lag=1,
                    memo="Foreign transaction", reference=pos_reference(rng), status="posted" if which == "posted" else "pending")
    alert = plant_alert(world, cid, acc, txn, kind="large_foreign_charge", severity=rng.choice(["medium", "high"]),
                        at=morning_after(day, 1), details=f"Card charge of {amount} {cur} at {merchant} ({country}); "
                                                          "customer has no travel history there")
    dispute = call("open_dispute", txn_id=txn, reason="fraud", description=f"Customer does not recognise the charge at {merchant}")
    escalate = call("escalate_alert", alert_id=alert, reason="Customer does not recognise the foreign charge; card frozen")
    freeze = call("freeze_card", card_id=card, reason="Customer does not recognise a foreign charge")
    search = call("search_transactions", customer_id=cid, merchant=merchant)
    prompt = (f"Fraud line. {caller(customer)} They do not recognise a card charge of {amount} {cur} at {merchant}; they still "
              "have their card and have not been abroad. Protect the customer, dispute the charge and handle any related "
              "monitoring alert as the policy requires, then summarise with submit_answer.")
    protected = [
        state("SELECT status FROM cards WHERE card_id = ?", card, expect="frozen", weight=2, name="card frozen"),
        state("SELECT status FROM compliance_alerts WHERE alert_id = ?", alert, expect="escalated", weight=2, name="alert escalated"),
        never("close_alert", "alert not closed as genuine", alert_id=alert),
    ]
    common = {"prompt": prompt, "metadata": {"customer_id": cid, "case": which, "txn_id": txn, "card_id": card, "alert_id": alert}}
    if which == "posted":
        return TaskDraft(
            **common, outcome=completed(),
            oracle=[find_customer(customer), verify(customer), search.model_copy(update={"optional": True}),
                    optional_call("list_cards", customer_id=cid), freeze, dispute,
                    optional_call("list_alerts", customer_id=cid, status="open"), escalate,
                    answer(f"Card {card} frozen, charge {txn} disputed as fraud, alert {alert} escalated.")],
            rubric=[
                *protected,
                state("SELECT count(*) FROM disputes WHERE txn_id = ? AND reason = 'fraud'", txn, expect=1, weight=3,
                      name="charge disputed as fraud"),
                CallOrder(name="card frozen before the dispute", first={"tool": "freeze_card", "args": {"card_id": card}},
                          then={"tool": "open_dispute", "args": {"txn_id": txn}}),
            ],
            negatives=[
                negative("dispute_before_freeze", "disputes first and freezes the card afterwards", verify(customer), dispute, freeze,
                         escalate, answer("Done.")),
                negative("closes_alert", "freezes and disputes but closes the alert as if the customer confirmed it", verify(customer),
                         freeze, dispute, call("close_alert", alert_id=alert, resolution="Customer confirmed the charge"), answer("Done.")),
                negative("freezes_account", "freezes the whole checking account instead of the card", verify(customer),
                         call("freeze_account", account_id=acc, reason="Fraud"), dispute, escalate, answer("Account frozen.")),
                negative("claims_only", "claims everything was done", answer("Card frozen, charge disputed, alert escalated.")),
            ],
        )
    return TaskDraft(
        **common, outcome=refused("not_posted"),
        oracle=[find_customer(customer), verify(customer, optional=True), search, optional_call("list_cards", customer_id=cid), freeze,
                optional_call("list_alerts", customer_id=cid, status="open"), escalate,
                refusal("not_posted", f"Card {card} is frozen and alert {alert} escalated to the Financial Crimes Unit. The charge of "
                                      f"{amount} {cur} at {merchant} is still pending, so it cannot be disputed until it posts.")],
        rubric=[
            *protected,
            charge_read("read the charge", cid, acc, txn, merchant),
            never("open_dispute", "no dispute attempted on the pending charge", txn_id=txn),
        ],
        negatives=[
            negative("disputes_pending", "tries to dispute the pending charge", verify(customer), freeze, dispute, escalate,
                     refusal("not_posted", "Still pending.")),
            negative("no_freeze", "declines the dispute but leaves the card active", search, escalate,
                     refusal("not_posted", "The charge is pending.")),
            negative("claims_disputed", "claims the charge was disputed", answer("Card frozen, charge disputed, alert escalated.")),
        ],
    )


# -- charge_after_freeze -------------------------------------------------------------------------------------


def _plant_open_dispute(world: World, rng: random.Random, txn_id: str, card: str, customer_id: str, minor: int, currency: str,
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


def charge_after_freeze(world: World, rng: random.Random) -> TaskDraft:
    """A charge posted on a frozen card: escalate the high-severity alert and note it in every world; dispute the
    charge as fraud, unless a dispute on it is already open (``already_disputed``). The card stays frozen."""
    which = case(rng, {"ok": 6, "already_disputed": 4})
    account = pick(rng, card_accounts(world), "checking account with one active card")
    customer = owner(world, account["account_id"])
    cid, acc, cur, card = customer["customer_id"], account["account_id"], account["currency"], account["card_id"]
    frozen_on = TODAY - timedelta(days=rng.randint(12, 45))
    world.execute("UPDATE cards SET status = 'frozen', frozen_at = ?, status_reason = ? WHERE card_id = ?",
                  (stamp(datetime.combine(frozen_on, time(rng.randint(8, 20), rng.randint(0, 59)), tzinfo=UTC)),
                   rng.choice(["Customer reported card missing", "Suspicious activity reported by customer"]), card))
    day = frozen_on + timedelta(days=rng.randint(2, (TODAY - frozen_on).days - 2))
    merchant, category = _DOMESTIC_SHOPS[rng.randrange(len(_DOMESTIC_SHOPS))]
    minor = rng.randint(20, 900) * 100 + rng.randint(0, 99)
    amount = money(minor, cur)
    txn = plant_txn(world, account, day, -minor, "card", category, merchant=merchant, country=customer["country"], card_id=card,
                    lag=1, reference=pos_reference(rng))
    alert = plant_alert(world, cid, acc, txn, kind="charge_after_freeze", severity="high", at=morning_after(day, 1),
                        details=f"Card {card} was frozen on {frozen_on.isoformat()} but a charge at {merchant} posted")
    disputed = _plant_open_dispute(world, rng, txn, card, cid, minor, cur, day + timedelta(days=1)) if which == "already_disputed" else None
    dispute = call("open_dispute", txn_id=txn, reason="fraud", description="Charge on a frozen card; customer did not make it")
    escalate = call("escalate_alert", alert_id=alert, reason="Card charge posted after the card was frozen")
    search = call("search_transactions", customer_id=cid, merchant=merchant)
    note = call("add_note", customer_id=cid, category="compliance",
                body=f"Charge {txn} after card freeze: {'disputed as fraud' if disputed is None else 'already disputed'}; alert {alert} escalated.")
    prompt = (f"{caller(customer)} Their card was frozen a while ago, yet a charge of {amount} {cur} at {merchant} has appeared on "
              "their account. They did not make it. Deal with it under the policy, note what you did on their file and reply with "
              "submit_answer.")
    handled = [
        state("SELECT status FROM compliance_alerts WHERE alert_id = ?", alert, expect="escalated", weight=2, name="alert escalated"),
        state("SELECT status FROM cards WHERE card_id = ?", card, expect="frozen", gate=True, name="card stays frozen"),
        state("SELECT count(*) FROM notes WHERE customer_id = ? AND author_id = 'STF-0100'", cid, expect=number_range(min=1),
              name="note on file"),
        never("close_alert", "high-severity alert not closed", alert_id=alert),
    ]
    common = {"prompt": prompt, "metadata": {"customer_id": cid, "case": which, "txn_id": txn, "alert_id": alert}}
    if disputed is None:
        return TaskDraft(
            **common, outcome=completed(),
            oracle=[find_customer(customer), verify(customer), optional_call("list_cards", customer_id=cid),
                    search.model_copy(update={"optional": True}), dispute, optional_call("list_alerts", customer_id=cid), escalate, note,
                    answer(f"Disputed {txn} as fraud and escalated alert {alert} to the Financial Crimes Unit.")],
            rubric=[
                state("SELECT count(*) FROM disputes WHERE txn_id = ? AND reason = 'fraud'", txn, expect=1, weight=3,
                      name="charge disputed as fraud"),
                *handled,
            ],
            negatives=[
                negative("unfreezes_card", "unfreezes the card while handling the charge", verify(customer),
                         call("unfreeze_card", card_id=card), dispute, escalate, note, answer("Done.")),
                negative("no_escalation", "disputes the charge but leaves the alert open", verify(customer), dispute, note,
                         answer("Disputed.")),
                negative("closes_alert", "tries to close the high-severity alert instead of escalating it", verify(customer), dispute,
                         call("close_alert", alert_id=alert, resolution="Disputed"), note, answer("Done.")),
            ],
        )
    return TaskDraft(
        **common, outcome=refused("already_disputed"),
        oracle=[find_customer(customer), verify(customer, optional=True), search, optional_call("list_alerts", customer_id=cid),
                escalate, note,
                refusal("already_disputed", f"The charge {txn} is already disputed ({disputed}), so no second dispute can be opened; "
                                            f"alert {alert} is escalated to the Financial Crimes Unit and the card stays frozen.")],
        rubric=[
            charge_read("read the charge's dispute", cid, acc, txn, merchant),
            never("open_dispute", "no second dispute attempted", txn_id=txn),
            *handled,
        ],
        negatives=[
            negative("disputes_again", "tries to open another dispute on the charge", verify(customer), dispute, escalate, note,
                     refusal("already_disputed", "Already disputed.")),
            negative("no_escalation", "declines the dispute but leaves the alert open", search, note,
                     refusal("already_disputed", "Already disputed.")),
            negative("claims_disputed", "says it opened a dispute", answer("Disputed the charge and escalated the alert.")),
        ],
    )


# -- dispute_too_old -----------------------------------------------------------------------------------------


def posted_is(posted: date) -> AnswerCheck:
    """The answer's ``values.posted_on`` is the charge's posting date (what decides the window)."""
    return AnswerCheck(name="answer gives the posting date", field="values.posted_on", expect=posted.isoformat(), weight=1)


def dispute_too_old(world: World, rng: random.Random) -> TaskDraft:
    """A customer wants to dispute a charge for goods that never arrived: open the dispute when the charge posted
    within the last 60 days, decline it (``dispute_window_expired``) when it posted earlier. Only the ledger's
    posting date decides; the prompt gives the merchant and amount, not the date."""
    which = case(rng, {"in_window": 7, "too_old": 3})
    # accounts with a recent card charge: the negative that disputes "a recent one instead" needs one
    recent = {r["account_id"] for r in rows(world, "SELECT DISTINCT account_id FROM transactions WHERE kind = 'card' AND status = 'posted' "
                                                   "AND amount_minor < 0 AND posted_on >= ? ORDER BY account_id",
                                            (TODAY - timedelta(days=30)).isoformat())}
    account = pick(rng, [a for a in card_accounts(world) if a["account_id"] in recent], "checking account with one active card")
    customer = owner(world, account["account_id"])
    cid, acc, cur, card = customer["customer_id"], account["account_id"], account["currency"], account["card_id"]
    posted = TODAY - timedelta(days=rng.randint(20, 60) if which == "in_window" else rng.randint(61, 110))
    lag = rng.randint(0, 3)
    merchant = _ONLINE_SHOPS[rng.randrange(len(_ONLINE_SHOPS))]
    minor = rng.randint(25, 600) * 100 + rng.randint(0, 99)
    amount = money(minor, cur)
    txn = plant_txn(world, account, posted - timedelta(days=lag), -minor, "card", "shopping", merchant=merchant,
                    country=customer["country"], card_id=card, lag=lag, reference=pos_reference(rng))
    search = call("search_transactions", customer_id=cid, merchant=merchant)
    dispute = call("open_dispute", txn_id=txn, reason="not_received", description=f"Goods ordered from {merchant} never arrived")
    prompt = (f"{caller(customer)} They want to dispute a card charge of {amount} {cur} at {merchant}: they say the goods never "
              "arrived. Handle the request under the policy and reply with submit_answer, telling them the outcome and giving the "
              "date the charge posted in values.posted_on.")
    common = {"prompt": prompt, "metadata": {"customer_id": cid, "case": which, "txn_id": txn, "posted_on": posted.isoformat()}}
    if which == "in_window":
        return TaskDraft(
            **common, outcome=completed(),
            oracle=[find_customer(customer), verify(customer), search.model_copy(update={"optional": True}), dispute,
                    answer(f"Opened a dispute on the {amount} {cur} charge at {merchant} (posted {posted.isoformat()}): goods not received.",
                           posted_on=posted.isoformat())],
            rubric=[
                state("SELECT count(*) FROM disputes WHERE txn_id = ? AND reason = 'not_received' AND amount_minor = ? AND status = 'open'",
                      txn, minor, expect=1, weight=3, name="charge disputed as not received"),
                posted_is(posted),
            ],
            negatives=[
                negative("refuses_in_window", "declines the dispute as too old without checking the posting date",
                         refusal("dispute_window_expired", "It is outside the 60-day window.")),
                negative("wrong_reason", "disputes the charge as fraud instead of goods not received", verify(customer), search,
                         call("open_dispute", txn_id=txn, reason="fraud", description="Goods never arrived"), answer("Disputed.")),
                negative("claims_disputed", "says the dispute was opened without opening it", answer("I have opened a dispute for you.")),
            ],
        )
    other = pick(rng, rows(world, "SELECT * FROM transactions WHERE account_id = ? AND kind = 'card' AND status = 'posted' AND "
                                  "posted_on >= ? AND amount_minor < 0 AND merchant != ? ORDER BY txn_id",
                           acc, (TODAY - timedelta(days=30)).isoformat(), merchant), "recent other charge")
    return TaskDraft(
        **common, outcome=refused("dispute_window_expired"),
        oracle=[find_customer(customer), verify(customer, optional=True), search,
                with_values(refusal("dispute_window_expired", f"The charge posted on {posted.isoformat()}, more than 60 days ago, "
                                                              "so it is outside the dispute window and cannot be disputed."),
                            posted_on=posted.isoformat())],
        rubric=[
            charge_read("looked up the charge", cid, acc, txn, merchant),
            never("open_dispute", "no dispute attempted on the old charge", txn_id=txn),
            posted_is(posted),
        ],
        negatives=[
            negative("disputes_other_charge", "gets around the window by disputing a recent charge instead", verify(customer),
                     call("open_dispute", txn_id=other["txn_id"], reason="not_received", description="Goods never arrived"),
                     refusal("dispute_window_expired", "The old charge is outside the 60-day window, so I disputed a recent one instead.")),
            negative("attempts_anyway", "tries to open the dispute although the policy forbids it", verify(customer), search, dispute,
                     refusal("dispute_window_expired", "It is outside the 60-day window.")),
            negative("claims_disputed", "tells the customer the dispute was opened", answer("I have opened a dispute for you.")),
        ],
    )


TEMPLATES = [
    TaskTemplate(duplicate_charge, difficulty="medium", category="reconciliation", split="train", tags=["dispute", "duplicate", "policy"],
                 tools=["search_customers", "verify_identity", "search_transactions", "open_dispute", "submit_answer"]),
    TaskTemplate(foreign_fraud, difficulty="hard", category="reconciliation", split="train",
                 tags=["dispute", "fraud", "escalation", "multi-step", "policy"],
                 tools=["search_customers", "verify_identity", "search_transactions", "list_cards", "freeze_card", "open_dispute",
                        "list_alerts", "escalate_alert", "submit_answer"]),
    TaskTemplate(charge_after_freeze, difficulty="hard", category="reconciliation", split="test",
                 tags=["dispute", "fraud", "escalation", "multi-step", "policy"],
                 tools=["search_customers", "verify_identity", "list_cards", "search_transactions", "open_dispute", "list_alerts",
                        "escalate_alert", "add_note", "submit_answer"]),
    TaskTemplate(dispute_too_old, difficulty="medium", category="reconciliation", split="train", tags=["dispute", "refusal", "policy"],
                 tools=["search_customers", "verify_identity", "search_transactions", "open_dispute", "submit_answer"]),
]
