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
from datetime import UTC, date, datetime, time, timedelta

from envs.finance.tasks._common import (
    TODAY,
    answer,
    caller,
    customer_of,
    find_customer,
    money,
    never,
    one,
    optional_call,
    pick,
    plant_alert,
    plant_txn,
    refusal,
    rows,
    stamp,
    value_is,
    verify,
    with_values,
)
from envs.finance.tasks.charge_setup import (
    card_accounts,
    charge_seen,
    foreign_shop,
    morning_after,
    plant_duplicate,
    plant_open_dispute,
    pos_reference,
    recent_card_charges,
)
from fixtures.world import World
from graders.criteria import AnswerCheck, CallOrder, fact, number_range, state
from graders.outcome import completed, escalated, refused
from graders.setup import case
from graders.tasks import TaskDraft, TaskTemplate, call, escalation_call, negative

__all__ = ["TEMPLATES"]

_ONLINE_SHOPS = ["Northwind Outdoor Gear", "Harbor Electronics Online", "Bluebird Home Goods", "Cascade Sporting Co",
                 "Maple & Oak Furniture", "Summit Camera Supply", "Lumen Lighting Store", "Pinecrest Books Online",
                 "Copperleaf Kitchenware", "Riverbend Toys & Games"]
"""Online shops a customer might say never delivered (names the fixture's own merchants never use)."""
_DOMESTIC_SHOPS = [("NightOwl Electronics", "shopping"), ("QuickCash Gift Cards", "shopping"), ("FastFuel Express", "fuel"),
                   ("Luxe Watches Outlet", "shopping"), ("StreamBox Digital", "entertainment"), ("Metro Ticket Machines", "transport"),
                   ("Grand Avenue Jewellers", "shopping"), ("PixelPlay Game Store", "entertainment")]
"""Merchants of a stolen card's charges (category included)."""


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
    which = case(rng, {"duplicate": 4, "separate": 2, "pending": 4})
    original = pick(rng, recent_card_charges(world, TODAY - timedelta(days=15), TODAY - timedelta(days=2)), "recent card charge")
    customer = customer_of(world, original["account_id"])
    cid, cur = customer["customer_id"], original["currency"]
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
                value_is("disputed", amount, cur, weight=1),
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
                charge_seen("saw that the second charge is pending", second, "status"),
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
            charge_seen("saw the other charge's date", second, "txn_date"),
            never("open_dispute", "no dispute on a separate purchase"),
            value_is("disputed", "0.00", cur),
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


def foreign_fraud(world: World, rng: random.Random) -> TaskDraft:
    """A customer does not recognise a large foreign card charge that monitoring flagged: freeze the card and
    escalate the alert in every world (so the case is ``escalated``, by the outcome rule); dispute the charge as
    fraud when it has posted, and not while it is still pending (reason ``not_posted``)."""
    which = case(rng, {"posted": 6, "pending": 4})
    day = TODAY - timedelta(days=rng.randint(2, 9) if which == "posted" else rng.randint(1, 3))
    account = pick(rng, card_accounts(world, issued_before=day), "checking account with one active card")
    customer = customer_of(world, account["account_id"])
    cid, acc, cur, card = customer["customer_id"], account["account_id"], account["currency"], account["card_id"]
    merchant, country = foreign_shop(rng, customer)
    minor = rng.randint(1_500, 6_500) * 100 + rng.randint(0, 99)
    amount = money(minor, cur)
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
            **common, outcome=escalated("escalation_required"),
            oracle=[find_customer(customer), verify(customer), search.model_copy(update={"optional": True}),
                    optional_call("list_cards", customer_id=cid), freeze, dispute,
                    optional_call("list_alerts", customer_id=cid, status="open"), escalate,
                    escalation_call("escalation_required", f"Card {card} frozen, charge {txn} disputed as fraud, alert {alert} "
                                                           "escalated to the Financial Crimes Unit.")],
            rubric=[
                *protected,
                state("SELECT count(*) FROM disputes WHERE txn_id = ? AND reason = 'fraud'", txn, expect=1, weight=3,
                      name="charge disputed as fraud"),
                CallOrder(name="card frozen before the dispute", first={"tool": "freeze_card", "args": {"card_id": card}},
                          then={"tool": "open_dispute", "args": {"txn_id": txn}}),
            ],
            negatives=[
                negative("dispute_before_freeze", "disputes first and freezes the card afterwards", verify(customer), dispute, freeze,
                         escalate, escalation_call("escalation_required", "Done.")),
                negative("closes_alert", "freezes and disputes but closes the alert as if the customer confirmed it", verify(customer),
                         freeze, dispute, call("close_alert", alert_id=alert, resolution="Customer confirmed the charge"), answer("Done.")),
                negative("freezes_account", "freezes the whole checking account instead of the card", verify(customer),
                         call("freeze_account", account_id=acc, reason="Fraud"), dispute, escalate,
                         escalation_call("escalation_required", "Account frozen.")),
                negative("declares_completed", "does the work but declares the escalated case completed", verify(customer), freeze,
                         dispute, escalate, answer("Card frozen, charge disputed, alert escalated.")),
                negative("claims_only", "claims everything was done", escalation_call("escalation_required",
                                                                                      "Card frozen, charge disputed, alert escalated.")),
            ],
        )
    return TaskDraft(
        **common, outcome=escalated("not_posted", "escalation_required"),
        oracle=[find_customer(customer), verify(customer, optional=True), search, optional_call("list_cards", customer_id=cid), freeze,
                optional_call("list_alerts", customer_id=cid, status="open"), escalate,
                escalation_call("not_posted", f"Card {card} is frozen and alert {alert} escalated to the Financial Crimes Unit. The "
                                              f"charge of {amount} {cur} at {merchant} is still pending, so it cannot be disputed until "
                                              "it posts.")],
        rubric=[
            *protected,
            charge_seen("saw that the charge is still pending", txn, "status"),
            never("open_dispute", "no dispute attempted on the pending charge", txn_id=txn),
        ],
        negatives=[
            negative("disputes_pending", "tries to dispute the pending charge", verify(customer), freeze, dispute, escalate,
                     escalation_call("not_posted", "Still pending.")),
            negative("no_freeze", "declines the dispute but leaves the card active", search, escalate,
                     escalation_call("not_posted", "The charge is pending.")),
            negative("declares_refused", "does the work but declares the escalated case refused", search, freeze, escalate,
                     refusal("not_posted", "The charge is pending.")),
            negative("claims_disputed", "claims the charge was disputed", answer("Card frozen, charge disputed, alert escalated.")),
        ],
    )


# -- charge_after_freeze -------------------------------------------------------------------------------------


def charge_after_freeze(world: World, rng: random.Random) -> TaskDraft:
    """A charge posted on a frozen card: escalate the high-severity alert and note it in every world (so the case is
    ``escalated``, by the outcome rule); dispute the charge as fraud, unless a dispute on it is already open (reason
    ``already_disputed``). The card stays frozen."""
    which = case(rng, {"ok": 6, "already_disputed": 4})
    frozen_on = TODAY - timedelta(days=rng.randint(12, 45))
    account = pick(rng, card_accounts(world, issued_before=frozen_on), "checking account with one active card")
    customer = customer_of(world, account["account_id"])
    cid, acc, cur, card = customer["customer_id"], account["account_id"], account["currency"], account["card_id"]
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
    disputed = plant_open_dispute(world, rng, txn, card, cid, minor, cur, day + timedelta(days=1)) if which == "already_disputed" else None
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
    common = {"prompt": prompt, "metadata": {"customer_id": cid, "case": which, "txn_id": txn, "alert_id": alert, "card_id": card,
                                             "frozen_on": frozen_on.isoformat()}}
    if disputed is None:
        return TaskDraft(
            **common, outcome=escalated("escalation_required"),
            oracle=[find_customer(customer), verify(customer), optional_call("list_cards", customer_id=cid),
                    search.model_copy(update={"optional": True}), dispute, optional_call("list_alerts", customer_id=cid), escalate, note,
                    escalation_call("escalation_required", f"Disputed {txn} as fraud and escalated alert {alert} to the Financial "
                                                           "Crimes Unit; the card stays frozen.")],
            rubric=[
                state("SELECT count(*) FROM disputes WHERE txn_id = ? AND reason = 'fraud'", txn, expect=1, weight=3,
                      name="charge disputed as fraud"),
                *handled,
            ],
            negatives=[
                negative("unfreezes_card", "unfreezes the card while handling the charge", verify(customer),
                         call("unfreeze_card", card_id=card), dispute, escalate, note, escalation_call("escalation_required", "Done.")),
                negative("no_escalation", "disputes the charge but leaves the alert open", verify(customer), dispute, note,
                         answer("Disputed.")),
                negative("closes_alert", "tries to close the high-severity alert instead of escalating it", verify(customer), dispute,
                         call("close_alert", alert_id=alert, resolution="Disputed"), note, answer("Done.")),
                negative("declares_completed", "does the work but declares the escalated case completed", verify(customer), dispute,
                         escalate, note, answer("Disputed and escalated.")),
            ],
        )
    return TaskDraft(
        **common, outcome=escalated("already_disputed", "escalation_required"),
        oracle=[find_customer(customer), verify(customer, optional=True), search, optional_call("list_alerts", customer_id=cid),
                escalate, note,
                escalation_call("already_disputed", f"The charge {txn} is already disputed ({disputed}), so no second dispute can be "
                                                    f"opened; alert {alert} is escalated to the Financial Crimes Unit and the card stays "
                                                    "frozen.")],
        rubric=[
            charge_seen("saw the charge's open dispute", txn, "dispute_id", also=[fact("disputes", disputed, "txn_id", "status")]),
            never("open_dispute", "no second dispute attempted", txn_id=txn),
            *handled,
        ],
        negatives=[
            negative("disputes_again", "tries to open another dispute on the charge", verify(customer), dispute, escalate, note,
                     escalation_call("already_disputed", "Already disputed.")),
            negative("no_escalation", "declines the dispute but leaves the alert open", search, note,
                     refusal("already_disputed", "Already disputed.")),
            negative("claims_disputed", "says it opened a dispute", escalation_call("escalation_required",
                                                                                   "Disputed the charge and escalated the alert.")),
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
    which = case(rng, {"in_window": 6, "too_old": 4})
    # accounts with a recent card charge: the negative that disputes "a recent one instead" needs one
    recent = {r["account_id"] for r in rows(world, "SELECT DISTINCT account_id FROM transactions WHERE kind = 'card' AND status = 'posted' "
                                                   "AND amount_minor < 0 AND posted_on >= ? ORDER BY account_id",
                                            (TODAY - timedelta(days=30)).isoformat())}
    posted = TODAY - timedelta(days=rng.randint(20, 60) if which == "in_window" else rng.randint(61, 110))
    lag = rng.randint(0, 3)
    account = pick(rng, [a for a in card_accounts(world, issued_before=posted - timedelta(days=lag)) if a["account_id"] in recent],
                   "checking account with one active card")
    customer = customer_of(world, account["account_id"])
    cid, acc, cur, card = customer["customer_id"], account["account_id"], account["currency"], account["card_id"]
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
            charge_seen("saw when the charge posted", txn, "posted_on"),
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
