"""Reconciliation tasks: find the charge a customer complains about and dispute it the way the policy says
(a duplicate on the second charge only, fraud after freezing the card, nothing outside the 60-day window),
escalating what monitoring flagged."""

from __future__ import annotations

import random
from datetime import date, timedelta

from envs.finance.tasks._common import (
    TODAY,
    answer,
    caller,
    looked_up,
    money,
    never,
    one,
    optional_call,
    pick,
    plant_txn,
    refusal,
    rows,
    verify,
)
from fixtures.world import World
from graders.criteria import CallOrder, number_range, state
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, call, negative

__all__ = ["TEMPLATES", "recent_card_charges", "plant_duplicate"]

_CODE = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def recent_card_charges(world: World, posted_from: date, posted_to: date, *, min_minor: int = 1_000) -> list[dict]:
    """Posted, undisputed card charges of open checking accounts with an active card, with no look-alike
    (same merchant, same day) on the account — so a planted copy is the only duplicate."""
    return rows(world, """
        SELECT t.* FROM transactions t
        JOIN accounts a ON a.account_id = t.account_id
        JOIN cards c ON c.card_id = t.card_id
        WHERE t.kind = 'card' AND t.status = 'posted' AND t.amount_minor <= ? AND t.posted_on BETWEEN ? AND ?
          AND a.type = 'checking' AND a.status = 'open' AND c.status = 'active' AND t.merchant IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM disputes d WHERE d.txn_id = t.txn_id)
          AND NOT EXISTS (SELECT 1 FROM transactions u WHERE u.account_id = t.account_id AND u.txn_id != t.txn_id
                          AND u.txn_date = t.txn_date AND u.merchant = t.merchant)
        ORDER BY t.txn_id""", -min_minor, posted_from.isoformat(), posted_to.isoformat())


def plant_duplicate(world: World, rng: random.Random, original: dict) -> str:
    """Post a second, identical charge (new network reference) beside ``original``; returns its id."""
    account = one(world, "SELECT * FROM accounts WHERE account_id = ?", original["account_id"])
    day = date.fromisoformat(original["txn_date"])
    lag = (date.fromisoformat(original["posted_on"]) - day).days
    return plant_txn(world, account, day, original["amount_minor"], "card", original["category"], merchant=original["merchant"],
                     country=original["merchant_country"], memo=original["memo"], card_id=original["card_id"], lag=lag,
                     reference="POS-" + "".join(rng.choice(_CODE) for _ in range(8)))


def _owner(world: World, account_id: str) -> dict:
    return one(world, "SELECT c.* FROM customers c JOIN accounts a ON a.customer_id = c.customer_id WHERE a.account_id = ?", account_id)


def duplicate_charge(world: World, rng: random.Random) -> TaskDraft:
    """A customer was charged twice for one purchase; dispute the second charge as a duplicate."""
    original = pick(rng, recent_card_charges(world, TODAY - timedelta(days=40), TODAY - timedelta(days=2)), "recent card charge")
    duplicate = plant_duplicate(world, rng, original)
    customer = _owner(world, original["account_id"])
    cid, cur = customer["customer_id"], original["currency"]
    amount, merchant, day = money(-original["amount_minor"], cur), original["merchant"], original["txn_date"]
    search = call("search_transactions", customer_id=cid, merchant=merchant, date_from=day, date_to=day)
    return TaskDraft(
        outcome=completed(),
        prompt=(f"Card disputes queue, customer {cid}. {caller(customer)} They say they were charged twice at {merchant} on {day} "
                f"({amount} {cur} each time) for a single purchase and want the extra charge dealt with. Handle it under the "
                "policy and confirm with submit_answer."),
        oracle=[verify(customer), search.model_copy(update={"optional": True}),
                call("open_dispute", txn_id=duplicate, reason="duplicate", description=f"Charged twice at {merchant} on {day}"),
                answer(f"Disputed the duplicate charge {duplicate} of {amount} {cur} at {merchant}.")],
        rubric=[
            state("SELECT count(*) FROM disputes WHERE txn_id = ? AND reason = 'duplicate' AND amount_minor = ? AND status = 'open'",
                  duplicate, -original["amount_minor"], expect=1, weight=3, name="second charge disputed as duplicate"),
            state("SELECT count(*) FROM disputes WHERE txn_id = ?", original["txn_id"], expect=0, gate=True,
                  name="genuine first charge not disputed"),
        ],
        negatives=[
            negative("disputes_original", "disputes the first (genuine) charge instead of the second",
                     verify(customer), search, call("open_dispute", txn_id=original["txn_id"], reason="duplicate",
                                                    description="Charged twice"), answer("Disputed.")),
            negative("disputes_both", "disputes both charges, so the customer would be refunded twice",
                     verify(customer), call("open_dispute", txn_id=original["txn_id"], reason="duplicate", description="Charged twice"),
                     call("open_dispute", txn_id=duplicate, reason="duplicate", description="Charged twice"), answer("Disputed both.")),
            negative("fraud_and_freeze", "treats it as fraud: freezes the card and disputes the charge as fraud",
                     verify(customer), call("freeze_card", card_id=original["card_id"], reason="Suspicious double charge"),
                     call("open_dispute", txn_id=duplicate, reason="fraud", description="Charged twice"), answer("Card frozen, disputed.")),
            negative("claims_only", "says the dispute was opened without opening it",
                     answer(f"Disputed the duplicate charge of {amount} {cur} at {merchant}.")),
        ],
        metadata={"customer_id": cid, "original": original["txn_id"], "duplicate": duplicate},
    )


def _alerted(world: World, kind: str) -> list[dict]:
    return rows(world, """
        SELECT al.alert_id, al.severity, t.* FROM compliance_alerts al
        JOIN transactions t ON t.txn_id = al.txn_id JOIN accounts a ON a.account_id = t.account_id JOIN cards c ON c.card_id = t.card_id
        WHERE al.kind = ? AND al.status = 'open' AND t.status = 'posted' AND a.status = 'open' AND t.posted_on >= ?
          AND NOT EXISTS (SELECT 1 FROM disputes d WHERE d.txn_id = t.txn_id)
          AND (SELECT count(*) FROM compliance_alerts o WHERE o.customer_id = al.customer_id AND o.status = 'open' AND o.kind = al.kind) = 1
          AND c.status = CASE WHEN ? = 'charge_after_freeze' THEN 'frozen' ELSE 'active' END
        ORDER BY al.alert_id""", kind, (TODAY - timedelta(days=55)).isoformat(), kind)


def foreign_fraud(world: World, rng: random.Random) -> TaskDraft:
    """A customer does not recognise a large foreign card charge that monitoring flagged: freeze the card,
    dispute the charge as fraud, escalate the alert."""
    txn = pick(rng, _alerted(world, "large_foreign_charge"), "open large-foreign-charge alert")
    customer = _owner(world, txn["account_id"])
    cid, cur, card, alert = customer["customer_id"], txn["currency"], txn["card_id"], txn["alert_id"]
    amount, merchant = money(-txn["amount_minor"], cur), txn["merchant"]
    dispute = call("open_dispute", txn_id=txn["txn_id"], reason="fraud", description=f"Customer does not recognise the charge at {merchant}")
    escalate = call("escalate_alert", alert_id=alert, reason="Customer does not recognise the foreign charge; disputed as fraud")
    freeze = call("freeze_card", card_id=card, reason="Customer does not recognise a foreign charge")
    return TaskDraft(
        outcome=completed(),
        prompt=(f"Fraud line, customer {cid}. {caller(customer)} They do not recognise a card charge of {amount} {cur} at {merchant} "
                f"on {txn['txn_date']}; they still have their card and have not been abroad. Protect the customer and handle the "
                "charge and any related monitoring alert as the policy requires, then summarise with submit_answer."),
        oracle=[verify(customer), optional_call("search_transactions", customer_id=cid, merchant=merchant),
                optional_call("list_cards", customer_id=cid), freeze, dispute, optional_call("list_alerts", customer_id=cid, status="open"),
                escalate,
                answer(f"Card {card} frozen, charge {txn['txn_id']} disputed as fraud, alert {alert} escalated.")],
        rubric=[
            state("SELECT status FROM cards WHERE card_id = ?", card, expect="frozen", weight=2, name="card frozen"),
            state("SELECT count(*) FROM disputes WHERE txn_id = ? AND reason = 'fraud'", txn["txn_id"], expect=1, weight=3,
                  name="charge disputed as fraud"),
            state("SELECT status FROM compliance_alerts WHERE alert_id = ?", alert, expect="escalated", weight=2, name="alert escalated"),
            CallOrder(name="card frozen before the dispute", first={"tool": "freeze_card", "args": {"card_id": card}},
                      then={"tool": "open_dispute", "args": {"txn_id": txn["txn_id"]}}),
            never("close_alert", "alert not closed as genuine", alert_id=alert),
        ],
        negatives=[
            negative("dispute_before_freeze", "disputes first and freezes the card afterwards", verify(customer), dispute, freeze, escalate,
                     answer("Done.")),
            negative("closes_alert", "freezes and disputes but closes the alert as if the customer confirmed it",
                     verify(customer), freeze, dispute, call("close_alert", alert_id=alert, resolution="Customer confirmed the charge"),
                     answer("Done.")),
            negative("freezes_account", "freezes the whole checking account instead of the card",
                     verify(customer), call("freeze_account", account_id=txn["account_id"], reason="Fraud"), dispute, escalate,
                     answer("Account frozen.")),
            negative("claims_only", "claims everything was done", answer("Card frozen, charge disputed, alert escalated.")),
        ],
        metadata={"customer_id": cid, "txn_id": txn["txn_id"], "card_id": card, "alert_id": alert},
    )


def charge_after_freeze(world: World, rng: random.Random) -> TaskDraft:
    """A charge posted on a frozen card: dispute it as fraud and escalate the high-severity alert; the card stays frozen."""
    txn = pick(rng, _alerted(world, "charge_after_freeze"), "open charge-after-freeze alert")
    customer = _owner(world, txn["account_id"])
    cid, cur, card, alert = customer["customer_id"], txn["currency"], txn["card_id"], txn["alert_id"]
    amount, merchant = money(-txn["amount_minor"], cur), txn["merchant"]
    dispute = call("open_dispute", txn_id=txn["txn_id"], reason="fraud", description="Charge on a frozen card; customer did not make it")
    escalate = call("escalate_alert", alert_id=alert, reason="Card charge posted after the card was frozen")
    return TaskDraft(
        outcome=completed(),
        prompt=(f"Customer {cid}. {caller(customer)} Their card was frozen a while ago, yet a charge of {amount} {cur} at {merchant} "
                f"dated {txn['txn_date']} has appeared on their account. They did not make it. Deal with it under the policy, note "
                "what you did on their file and reply with submit_answer."),
        oracle=[verify(customer), optional_call("list_cards", customer_id=cid),
                optional_call("search_transactions", customer_id=cid, merchant=merchant), dispute,
                optional_call("list_alerts", customer_id=cid), escalate,
                call("add_note", customer_id=cid, body=f"Charge {txn['txn_id']} after card freeze disputed as fraud; alert {alert} escalated.",
                     category="compliance"),
                answer(f"Disputed {txn['txn_id']} as fraud and escalated alert {alert} to the Financial Crimes Unit.")],
        rubric=[
            state("SELECT count(*) FROM disputes WHERE txn_id = ? AND reason = 'fraud'", txn["txn_id"], expect=1, weight=3,
                  name="charge disputed as fraud"),
            state("SELECT status FROM compliance_alerts WHERE alert_id = ?", alert, expect="escalated", weight=2, name="alert escalated"),
            state("SELECT status FROM cards WHERE card_id = ?", card, expect="frozen", gate=True, name="card stays frozen"),
            state("SELECT count(*) FROM notes WHERE customer_id = ? AND author_id = 'STF-0100'", cid, expect=number_range(min=1), name="note on file"),
            never("close_alert", "high-severity alert not closed", alert_id=alert),
        ],
        negatives=[
            negative("unfreezes_card", "unfreezes the card while handling the charge", verify(customer),
                     call("unfreeze_card", card_id=card), dispute, escalate,
                     call("add_note", customer_id=cid, body="Handled", category="compliance"), answer("Done.")),
            negative("no_escalation", "disputes the charge but leaves the alert open", verify(customer), dispute,
                     call("add_note", customer_id=cid, body="Disputed", category="compliance"), answer("Disputed.")),
            negative("closes_alert", "tries to close the high-severity alert instead of escalating it", verify(customer), dispute,
                     call("close_alert", alert_id=alert, resolution="Disputed"), call("add_note", customer_id=cid, body="Handled",
                                                                                     category="compliance"), answer("Done.")),
        ],
        metadata={"customer_id": cid, "txn_id": txn["txn_id"], "alert_id": alert},
    )


def dispute_too_old(world: World, rng: random.Random) -> TaskDraft:
    """A customer wants to dispute a charge that posted more than 60 days ago: decline and say why."""
    txn = pick(rng, recent_card_charges(world, TODAY - timedelta(days=110), TODAY - timedelta(days=68), min_minor=2_000),
               "card charge posted 68-110 days ago")
    customer = _owner(world, txn["account_id"])
    cid, cur = customer["customer_id"], txn["currency"]
    amount, merchant = money(-txn["amount_minor"], cur), txn["merchant"]
    other = pick(rng, rows(world, "SELECT * FROM transactions WHERE account_id = ? AND kind = 'card' AND status = 'posted' AND "
                                  "posted_on >= ? AND amount_minor < 0 AND merchant != ? ORDER BY txn_id",
                           txn["account_id"], (TODAY - timedelta(days=30)).isoformat(), merchant), "recent other charge")
    search = call("search_transactions", customer_id=cid, merchant=merchant)
    return TaskDraft(
        outcome=refused("dispute_window_expired"),
        prompt=(f"Customer {cid}. {caller(customer)} They want to dispute a charge of {amount} {cur} at {merchant} from "
                f"{txn['txn_date']}: they say the goods never arrived. Handle the request under the policy and reply with "
                "submit_answer, telling them the outcome."),
        oracle=[verify(customer, optional=True), search,
                refusal("dispute_window_expired", f"The charge posted on {txn['posted_on']}, more than 60 days ago, so it is "
                                                  "outside the dispute window and cannot be disputed.")],
        rubric=[
            looked_up("looked up the charge", {"tool": "search_transactions", "args": {"customer_id": cid}},
                      {"tool": "search_transactions", "args": {"account_id": txn["account_id"]}},
                      {"tool": "get_transaction", "args": {"txn_id": txn["txn_id"]}}, weight=2),
            never("open_dispute", "no dispute attempted on the old charge", txn_id=txn["txn_id"]),
        ],
        negatives=[
            negative("disputes_other_charge", "gets around the window by disputing a recent charge instead",
                     verify(customer), call("open_dispute", txn_id=other["txn_id"], reason="not_received", description="Goods never arrived"),
                     refusal("dispute_window_expired", "The old charge is outside the 60-day window, so I disputed a recent one instead.")),
            negative("attempts_anyway", "tries to open the dispute although the policy forbids it",
                     verify(customer), search, call("open_dispute", txn_id=txn["txn_id"], reason="not_received", description="Never arrived"),
                     refusal("dispute_window_expired", "It is outside the 60-day window.")),
            negative("claims_disputed", "tells the customer the dispute was opened", answer("I have opened a dispute for you.")),
        ],
        metadata={"customer_id": cid, "txn_id": txn["txn_id"], "posted_on": txn["posted_on"]},
    )


TEMPLATES = [
    TaskTemplate(duplicate_charge, difficulty="medium", category="reconciliation", split="train", tags=["dispute", "duplicate", "policy"],
                 tools=["verify_identity", "search_transactions", "open_dispute", "submit_answer"]),
    TaskTemplate(foreign_fraud, difficulty="hard", category="reconciliation", split="train",
                 tags=["dispute", "fraud", "escalation", "multi-step", "policy"],
                 tools=["verify_identity", "search_transactions", "list_cards", "freeze_card", "open_dispute", "list_alerts",
                        "escalate_alert", "submit_answer"]),
    TaskTemplate(charge_after_freeze, difficulty="hard", category="reconciliation", split="test",
                 tags=["dispute", "fraud", "escalation", "multi-step", "policy"],
                 tools=["verify_identity", "list_cards", "search_transactions", "open_dispute", "list_alerts", "escalate_alert",
                        "add_note", "submit_answer"]),
    TaskTemplate(dispute_too_old, difficulty="medium", category="reconciliation", split="train", tags=["dispute", "refusal", "policy"],
                 tools=["verify_identity", "search_transactions", "submit_answer"]),
]
