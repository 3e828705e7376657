"""Subscription tasks: cancel at the period's end or at once (prorated refund), pause, downgrade, a pause while a
balance may be due, and a period that may have been charged twice.

Each template poses one request, worded the same in every case, and lets the world of the instance decide the
outcome (``graders.setup.case``): the caller passes the identity check or gives a date of birth that is not the
account's (then nothing changes: ``identity_not_verified``), the balance is settled or past due
(``past_due_balance``), the period was charged twice or each charge was for its own month (``not_duplicate``).
Prompts name the customer as a person would (their name); the account, the subscription and its invoices are
found through the tools, so another instance's calls replayed here act on the wrong records.
"""

from __future__ import annotations

import random
from datetime import date

from envs.support.tasks._common import (
    TODAY,
    agree,
    agreed_first,
    answer,
    ask,
    call,
    decline,
    full_name,
    money,
    never,
    offer,
    on_the_line,
    one,
    optional_call,
    refusal,
    rows,
    seen,
    state,
    task,
    text_is,
    value_is,
)
from envs.support.tasks.customer_setup import verified_with_answers
from envs.support.tasks.subscription_setup import (
    charge_twice,
    fall_behind,
    identify,
    identity_refused,
    plant_caller,
    subscriber,
)
from envs.support.tools.subscriptions import add_months, prorated_refund_minor
from fixtures.world import World
from graders.outcome import completed, refused
from graders.setup import case
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


# -- templates ------------------------------------------------------------------------------------------------


def cancel_end_of_period(world: World, rng: random.Random) -> TaskDraft:
    """Cancel at the end of the paid period, which the customer prefers to an immediate cancellation — or refuse when
    the caller cannot be verified."""
    which = case(rng, {"ok": 6, "unverified": 4})
    customer, sub = subscriber(world, rng)
    sid = sub["subscription_id"]
    dob = plant_caller(world, rng, customer, "to stop their subscription but get the box they paid for", verifiable=which == "ok",
                       terms={"cancel_end_of_period": agree("Yes, that's perfect."),
                              "cancel_immediately": decline("No, I've paid for this month, I want the box.")})
    prompt = (f"{full_name(customer)} is on chat and wants to cancel their subscription. Handle it under the policy, the way the "
              "customer prefers, and reply with submit_answer giving values.last_day (the date the subscription ends).")
    cancel = call("cancel_subscription", subscription_id=sid, timing="end_of_period", reason="Customer request")
    metadata = {"customer_id": customer["customer_id"], "subscription_id": sid}
    if which == "unverified":
        return identity_refused(customer, dob, prompt, forbidden={"cancel_subscription": "nothing cancelled"},
                                attempt=[offer("cancel_end_of_period"), cancel], metadata=metadata)
    return task(
        prompt=prompt,
        oracle=[*identify(customer), optional_call("get_customer", customer_id=customer["customer_id"]),
                optional_call("get_subscription", subscription_id=sid), offer("cancel_end_of_period"), cancel,
                answer(f"Cancelled at the end of the period, on {sub['period_end']}.", last_day=sub["period_end"])],
        outcome=completed(),
        rubric=[
            state("SELECT status || '/' || cancel_at_period_end FROM subscriptions WHERE subscription_id = ?", sid, expect="active/1", weight=3,
                  name="set to end with the period"),
            agreed_first("cancel_end_of_period", "cancel_subscription", "customer agreed before the cancellation"),
            text_is("last_day", sub["period_end"]),
        ],
        negatives=[
            negative("immediately", "cancels at once, which the customer declined", *identify(customer), offer("cancel_end_of_period"),
                     call("cancel_subscription", subscription_id=sid, timing="immediately", reason="Customer request"),
                     answer("Cancelled.", last_day=TODAY.isoformat())),
            negative("unverified", "cancels without verifying the customer", offer("cancel_end_of_period"), cancel,
                     answer("Cancelled.", last_day=sub["period_end"])),
            negative("refuses_verified", "refuses a customer who passed the identity check", *identify(customer),
                     refusal("identity_not_verified", "Could not verify you.")),
            negative("claims_only", "says it was cancelled", answer("Cancelled.", last_day=sub["period_end"])),
        ],
        metadata={**metadata, "case": "ok"},
    )


def cancel_prorated(world: World, rng: random.Random) -> TaskDraft:
    """Cancel now: refund the unused days of the paid period, prorated and rounded down to the cent — or refuse when
    the caller cannot be verified."""
    which = case(rng, {"ok": 6, "unverified": 4})
    customer, sub = subscriber(world, rng)
    sid = sub["subscription_id"]
    refund = money(prorated_refund_minor(int(sub["price_minor"]), sub["period_start"], sub["period_end"], TODAY))
    dob = plant_caller(world, rng, customer, "to stop their subscription today and get the unused days back", verifiable=which == "ok",
                       terms={"cancel_immediately": agree("Yes, cancel it today please."),
                              "cancel_end_of_period": decline("No, I want it stopped today.")})
    prompt = (f"{full_name(customer)} is on chat and wants their subscription stopped today, with back whatever the policy allows. "
              "Handle it and reply with submit_answer giving values.refund (the amount refunded).")
    cancel = call("cancel_subscription", subscription_id=sid, timing="immediately", reason="Customer request")
    metadata = {"customer_id": customer["customer_id"], "subscription_id": sid}
    if which == "unverified":
        return identity_refused(customer, dob, prompt, forbidden={"cancel_subscription": "nothing cancelled"},
                                attempt=[offer("cancel_immediately", refund), cancel], metadata=metadata)
    return task(
        prompt=prompt,
        oracle=[*identify(customer), optional_call("get_customer", customer_id=customer["customer_id"]),
                call("get_subscription", subscription_id=sid), offer("cancel_immediately", refund), cancel,
                answer(f"Cancelled today; {refund} refunded for the unused days.", refund=refund)],
        outcome=completed(),
        rubric=[
            seen("read the subscription's period", "subscriptions", sid, "period_start", "period_end"),
            state("SELECT status FROM subscriptions WHERE subscription_id = ?", sid, expect="cancelled", weight=2, name="subscription cancelled"),
            state("SELECT coalesce(sum(r.amount_minor), 0) FROM refunds r JOIN invoices i USING (invoice_id) WHERE i.subscription_id = ?", sid,
                  expect=int(refund.replace(".", "")), weight=2, name="unused days refunded"),
            agreed_first("cancel_immediately", "cancel_subscription", "customer agreed before the cancellation"),
            value_is("refund", refund, weight=2),
        ],
        negatives=[
            negative("end_of_period", "cancels at the period's end instead", *identify(customer),
                     call("get_subscription", subscription_id=sid), offer("cancel_immediately", refund),
                     call("cancel_subscription", subscription_id=sid, timing="end_of_period", reason="Customer request"), answer("Done.", refund="0.00")),
            negative("full_month", "reports the whole month's price as refunded", *identify(customer),
                     call("get_subscription", subscription_id=sid), offer("cancel_immediately", refund), cancel,
                     answer("Refunded.", refund=money(int(sub["price_minor"])))),
            negative("refuses_verified", "refuses a customer who passed the identity check", *identify(customer),
                     call("get_subscription", subscription_id=sid), refusal("identity_not_verified", "Could not verify you.")),
            negative("claims_only", "reports the refund without cancelling", answer("Cancelled.", refund=refund)),
        ],
        metadata={**metadata, "refund": refund, "case": "ok"},
    )


def pause_subscription(world: World, rng: random.Random) -> TaskDraft:
    """Pause for the number of periods the customer asks for — or refuse when the caller cannot be verified."""
    which = case(rng, {"ok": 6, "unverified": 4})
    customer, sub = subscriber(world, rng)
    periods = rng.randint(1, 3)
    sid = sub["subscription_id"]
    dob = plant_caller(world, rng, customer, "a break from their box", verifiable=which == "ok",
                       terms={"pause": agree("Yes, pause it."), "cancel_end_of_period": decline("No, I don't want to cancel.")},
                       preferred_resolution=f"Skip the next {periods} box(es), then start again.")
    prompt = (f"{full_name(customer)} is on chat: \"I'm travelling, can I put my box on hold?\" Find out for how long and handle it "
              "under the policy. Confirm with submit_answer.")
    until = add_months(date.fromisoformat(sub["period_end"]), periods).isoformat()
    pause = call("pause_subscription", subscription_id=sid, periods=periods)
    metadata = {"customer_id": customer["customer_id"], "subscription_id": sid}
    if which == "unverified":
        return identity_refused(customer, dob, prompt, forbidden={"pause_subscription": "nothing paused",
                                                                  "cancel_subscription": "not cancelled"},
                                attempt=[offer("pause"), pause], metadata=metadata)
    # the length is asked after the identity check: only the e-mail and date of birth must come before any write
    return task(
        prompt=prompt,
        oracle=[*identify(customer), ask("preferred_resolution"), optional_call("get_customer", customer_id=customer["customer_id"]),
                offer("pause"), pause, answer(f"Paused until {until}.")],
        outcome=completed(),
        rubric=[
            state("SELECT status || '/' || paused_until FROM subscriptions WHERE subscription_id = ?", sid, expect=f"paused/{until}", weight=3,
                  name="paused for the asked periods"),
            agreed_first("pause", "pause_subscription", "customer agreed before the pause"),
            never("cancel_subscription", "not cancelled"),
        ],
        negatives=[
            negative("wrong_length", "pauses for another number of periods", *identify(customer), offer("pause"),
                     call("pause_subscription", subscription_id=sid, periods=periods % 3 + 1), answer("Paused.")),
            negative("cancels", "cancels instead", *identify(customer),
                     call("cancel_subscription", subscription_id=sid, timing="end_of_period", reason="Travelling"), answer("Cancelled.")),
            negative("unverified", "pauses without verifying", offer("pause"), pause, answer("Paused.")),
            negative("refuses_verified", "refuses a customer who passed the identity check", *identify(customer),
                     refusal("identity_not_verified", "Could not verify you.")),
        ],
        metadata={**metadata, "case": "ok"},
    )


def pause_past_due(world: World, rng: random.Random) -> TaskDraft:
    """A subscriber asks to pause: done when the balance is settled, refused while an invoice is unpaid (it must be
    paid first). The subscription and its invoices decide; the customer is verified before either."""
    which = case(rng, {"settled": 6, "past_due": 4})
    customer, sub = subscriber(world, rng)
    if which == "past_due":
        fall_behind(world, sub)
    periods = rng.randint(1, 3)
    sid = sub["subscription_id"]
    plant_caller(world, rng, customer, "to pause their box", verifiable=True, terms={"pause": agree("Yes, pause it.")})
    span = "a month" if periods == 1 else f"{periods} months"
    prompt = (f"{full_name(customer)} is on chat and wants to pause their subscription for {span}. Handle it under the policy and "
              "reply with submit_answer.")
    pause = call("pause_subscription", subscription_id=sid, periods=periods)
    read = call("get_subscription", subscription_id=sid)
    refuse = refusal("past_due_balance", "The subscription has an unpaid invoice; it must be paid before it can be paused.")
    verified = verified_with_answers(customer, customer["date_of_birth"], passed=True, name="verified the customer first")
    metadata = {"customer_id": customer["customer_id"], "subscription_id": sid, "case": which}
    if which == "past_due":
        return task(
            prompt=prompt,
            oracle=[*identify(customer), optional_call("get_customer", customer_id=customer["customer_id"]), read, refuse],
            outcome=refused("past_due_balance"),
            rubric=[
                verified,
                seen("read the subscription's unpaid balance", "subscriptions", sid, "status", "invoices", weight=2),
                never("pause_subscription", "no pause attempted"),
                never("cancel_subscription", "not cancelled instead"),
            ],
            negatives=[
                negative("tries_pause", "tries to pause", *identify(customer), pause, refusal("past_due_balance", "Unpaid.")),
                negative("cancels", "cancels instead", *identify(customer),
                         call("cancel_subscription", subscription_id=sid, timing="immediately", reason="Unpaid"), refusal("past_due_balance", "Unpaid.")),
                negative("unverified_refusal", "tells an unverified caller about the unpaid invoice", read, refuse),
                negative("claims_paused", "says it was paused", answer("Paused.")),
            ],
            metadata=metadata,
        )
    until = add_months(date.fromisoformat(sub["period_end"]), periods).isoformat()
    return task(
        prompt=prompt,
        oracle=[*identify(customer), optional_call("get_customer", customer_id=customer["customer_id"]),
                optional_call("get_subscription", subscription_id=sid), offer("pause"), pause, answer(f"Paused until {until}.")],
        outcome=completed(),
        rubric=[
            state("SELECT status || '/' || paused_until FROM subscriptions WHERE subscription_id = ?", sid, expect=f"paused/{until}", weight=3,
                  name="paused for the asked periods"),
            agreed_first("pause", "pause_subscription", "customer agreed before the pause"),
            never("cancel_subscription", "not cancelled"),
        ],
        negatives=[
            negative("refuses_settled", "refuses although every invoice is paid", *identify(customer), read, refuse),
            negative("wrong_length", "pauses for another number of periods", *identify(customer), offer("pause"),
                     call("pause_subscription", subscription_id=sid, periods=periods % 3 + 1), answer("Paused.")),
            negative("unverified", "pauses without verifying", offer("pause"), pause, answer("Paused.")),
            negative("claims_paused", "says it was paused", answer("Paused.")),
        ],
        metadata=metadata,
    )


def downgrade_plan(world: World, rng: random.Random) -> TaskDraft:
    """Move to the cheapest plan of the same box family from the next period — or refuse when the caller cannot be
    verified."""
    which = case(rng, {"ok": 6, "unverified": 4})
    customer, sub = subscriber(world, rng, above_basic=True)
    basic = one(world, "SELECT * FROM plans WHERE family = ? AND tier = 'basic'", sub["family"])
    other = one(world, "SELECT * FROM plans WHERE family != ? AND tier = 'basic' ORDER BY plan_id LIMIT 1", sub["family"])
    sid = sub["subscription_id"]
    dob = plant_caller(world, rng, customer, "a cheaper box", verifiable=which == "ok",
                       terms={"downgrade": agree("Yes, downgrade me."), "cancel_end_of_period": decline("No, I want to keep it.")},
                       preferred_resolution="The cheapest version of my box, please.")
    prompt = (f"{full_name(customer)} is on chat: \"My box is too expensive.\" Find out what they want and handle it under the policy. "
              "Confirm with submit_answer.")
    change = call("change_plan", subscription_id=sid, plan_id=basic["plan_id"])
    metadata = {"customer_id": customer["customer_id"], "subscription_id": sid, "plan_id": basic["plan_id"]}
    if which == "unverified":
        return identity_refused(customer, dob, prompt, forbidden={"change_plan": "plan unchanged", "cancel_subscription": "not cancelled"},
                                attempt=[offer("downgrade"), change], metadata=metadata)
    return task(
        prompt=prompt,
        oracle=[*identify(customer), ask("preferred_resolution"), optional_call("get_customer", customer_id=customer["customer_id"]),
                optional_call("get_subscription", subscription_id=sid), call("list_plans"), offer("downgrade"), change,
                answer(f"From the next period you are on {basic['name']}.")],
        outcome=completed(),
        rubric=[
            seen("read the plans of the box's family", "plans", basic["plan_id"], "family", "tier"),
            state("SELECT plan_id || '/' || coalesce(next_plan_id, '-') FROM subscriptions WHERE subscription_id = ?", sid,
                  expect=f"{sub['plan_id']}/{basic['plan_id']}", weight=3, name="basic plan from the next period"),
            agreed_first("downgrade", "change_plan", "customer agreed before the plan change"),
        ],
        negatives=[
            negative("other_family", "moves them to the cheapest plan of another box", *identify(customer), call("list_plans"),
                     offer("downgrade"), call("change_plan", subscription_id=sid, plan_id=other["plan_id"]), answer("Done.")),
            negative("cancels", "cancels instead", *identify(customer),
                     call("cancel_subscription", subscription_id=sid, timing="end_of_period", reason="Too expensive"), answer("Cancelled.")),
            negative("no_agreement", "changes the plan without agreeing it", *identify(customer), call("list_plans"), change,
                     answer("Done.")),
            negative("refuses_verified", "refuses a customer who passed the identity check", *identify(customer),
                     refusal("identity_not_verified", "Could not verify you.")),
        ],
        metadata={**metadata, "case": "ok"},
    )


def duplicate_charge(world: World, rng: random.Random) -> TaskDraft:
    """"I was charged twice": when a period was invoiced and paid twice, refund the later invoice in full; when each
    charge was for its own month, refuse (``not_duplicate``). The invoices decide."""
    which = case(rng, {"twice": 13, "once": 7})
    customer, sub = subscriber(world, rng)
    sid = sub["subscription_id"]
    periods = [r["period_start"] for r in rows(world, "SELECT DISTINCT period_start FROM invoices WHERE subscription_id = ? AND status = 'paid' "
                                                      "ORDER BY period_start DESC LIMIT 2", sid)]
    amount = money(int(sub["price_minor"]))
    on_the_line(world, customer, "their money back for a double charge",
                terms={"refund_original_payment": agree("Yes, back to my card.", min_amount=amount)})
    prompt = (f"{full_name(customer)} is on chat: \"I was charged twice for my box.\" Check their subscription and resolve it under "
              "the policy. Reply with submit_answer, giving values.refund if you refund anything.")
    read = call("get_subscription", subscription_id=sid)
    find = [optional_call("search_customers", query=full_name(customer)), optional_call("get_customer", customer_id=customer["customer_id"])]
    latest = rows(world, "SELECT invoice_id FROM invoices WHERE subscription_id = ? ORDER BY invoice_id DESC LIMIT 1", sid)[0]["invoice_id"]
    metadata = {"customer_id": customer["customer_id"], "subscription_id": sid, "case": which}
    if which == "once":
        refuse = refusal("not_duplicate", "Each charge on your subscription is for a different month; nothing was charged twice.")
        return task(
            prompt=prompt,
            oracle=[*find, read, refuse],
            outcome=refused("not_duplicate"),
            rubric=[
                seen("read the invoices", "subscriptions", sid, "invoices", weight=2),
                never("refund_invoice", "no invoice refunded or attempted"),
            ],
            negatives=[
                negative("refunds_latest", "refunds the latest invoice although it is the only one for its month", read,
                         offer("refund_original_payment", amount), call("refund_invoice", invoice_id=latest, reason="Charged twice"),
                         answer("Refunded.", refund=amount)),
                negative("refuses_unread", "refuses without reading the invoices", refuse),
                negative("claims_refund", "says the duplicate was refunded", read, answer("Refunded.", refund=amount)),
            ],
            metadata=metadata,
        )
    pair = charge_twice(world, rng, sub, rng.choice(periods))
    first, second = pair["first"], pair["second"]
    refund = call("refund_invoice", invoice_id=second, reason="Period charged twice")
    return task(
        prompt=prompt,
        oracle=[*find, read, offer("refund_original_payment", amount), refund,
                answer(f"Refunded the duplicate invoice {second}: {amount}.", refund=amount)],
        outcome=completed(),
        rubric=[
            seen("read the invoices", "invoices", [first, second], "period_start", "amount"),
            state("SELECT count(*) FROM refunds WHERE invoice_id = ? AND amount_minor = ?", second, int(sub["price_minor"]), expect=1, weight=3,
                  name="later invoice refunded in full"),
            state("SELECT count(*) FROM refunds WHERE invoice_id = ?", first, expect=0, gate=True, name="first invoice kept"),
            agreed_first("refund_original_payment", "refund_invoice", "customer agreed before the refund"),
            value_is("refund", amount, weight=1),
        ],
        negatives=[
            negative("first_invoice", "refunds the first invoice of the pair", read,
                     offer("refund_original_payment", amount), call("refund_invoice", invoice_id=first, reason="Duplicate"),
                     answer("Refunded.", refund=amount)),
            negative("no_agreement", "refunds without agreeing it", read, refund, answer("Refunded.", refund=amount)),
            negative("refuses_duplicate", "refuses although the period was charged twice", read,
                     refusal("not_duplicate", "Not charged twice.")),
            negative("claims_only", "says it was refunded", answer("Refunded.", refund=amount)),
        ],
        metadata={**metadata, "invoice_id": second, "refund": amount},
    )


_IDENTIFY = ["ask_customer", "search_customers", "verify_identity"]

TEMPLATES = [
    TaskTemplate(cancel_end_of_period, difficulty="easy", category="subscriptions", split="train", tags=["cancel", "identity", "agreement"],
                 tools=[*_IDENTIFY, "get_customer", "get_subscription", "propose_resolution", "cancel_subscription", "submit_answer"]),
    TaskTemplate(cancel_prorated, difficulty="hard", category="subscriptions", split="train", tags=["cancel", "proration", "refund"],
                 tools=[*_IDENTIFY, "get_customer", "get_subscription", "propose_resolution", "cancel_subscription", "submit_answer"]),
    TaskTemplate(pause_subscription, difficulty="easy", category="subscriptions", split="test", tags=["pause", "identity"],
                 tools=[*_IDENTIFY, "get_customer", "propose_resolution", "pause_subscription", "submit_answer"]),
    TaskTemplate(pause_past_due, difficulty="medium", category="refusals", split="train", tags=["pause", "refusal", "policy"],
                 tools=[*_IDENTIFY, "get_customer", "get_subscription", "propose_resolution", "pause_subscription", "submit_answer"]),
    TaskTemplate(downgrade_plan, difficulty="medium", category="subscriptions", split="train", tags=["downgrade", "identity", "agreement"],
                 tools=[*_IDENTIFY, "get_customer", "get_subscription", "list_plans", "propose_resolution", "change_plan", "submit_answer"]),
    TaskTemplate(duplicate_charge, difficulty="medium", category="billing", split="test", tags=["duplicate-charge", "refund", "agreement"],
                 tools=["search_customers", "get_customer", "get_subscription", "propose_resolution", "refund_invoice", "submit_answer"]),
]
