"""A subscriber on the line, for the subscription templates (and multistep): a planted subscription with every
period invoiced and paid (for a case, a period charged twice or left unpaid), and the caller who must pass the
identity check, with the steps that check them and the refusal twin when their date of birth is not the
account's.
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta

from envs.support.tasks._common import (
    NOW,
    TODAY,
    answer,
    ask,
    call,
    need,
    never,
    next_id,
    on_the_line,
    one,
    optional_call,
    pick,
    refusal,
    rows,
    stamp,
    task,
)
from envs.support.tasks.customer_setup import named_customers, verified_with_answers, wrong_birthday
from envs.support.tools.subscriptions import add_months
from fixtures.ids import IdSequences
from fixtures.persona import Terms
from fixtures.world import World
from graders.outcome import refused
from graders.tasks import TaskDraft, ToolCall, negative

__all__ = [
    "charge_twice",
    "fall_behind",
    "identify",
    "identity_refused",
    "plant_caller",
    "plant_subscription",
    "subscriber",
]

_MIN_ACCOUNT_AGE_DAYS = 75
"""Customers given a subscription are at least this old: two monthly periods (the fewest planted) fit after the account opened."""

_SUBSCRIPTION_IDS = IdSequences({"subscriptions": ("subscription_id", "SUB", 5)})
"""Subscription ids, minted like every other planted row's (seed-dependent in a task world); tools never create
subscriptions, so the environment's own sequences do not list them."""


def _anchor_period(day: int) -> tuple[date, date]:
    """The monthly billing period billed on day ``day`` of the month (1-28, never today's) that contains today."""
    this_month = TODAY.replace(day=day)
    start = this_month if day < TODAY.day else add_months(this_month, -1)
    return start, add_months(start, 1)


def plant_subscription(world: World, rng: random.Random, customer: dict, *, above_basic: bool = False) -> dict:
    """Give ``customer`` a subscription box of a seeded plan (``above_basic``: a plus or premium one), billed monthly
    on a seeded day for a seeded number of months, every period invoiced and paid once. Returns the subscription's
    row with its plan's ``price_minor``, ``family``, ``plan_name`` and ``plan_tier``.

    Why plant rather than pick: the fixture has about a hundred fitting subscriptions, so seeds would share
    subjects; a planted one gets a seed-dependent id, period and price, and no other instance's calls fit it.
    """
    plans = rows(world, "SELECT * FROM plans WHERE tier != 'basic' ORDER BY plan_id" if above_basic else "SELECT * FROM plans ORDER BY plan_id")
    plan = pick(rng, plans, "plan")
    day = rng.choice([d for d in range(1, 29) if d != TODAY.day])
    start, end = _anchor_period(day)
    months = rng.randint(2, 9)
    while months > 1 and add_months(start, 1 - months).isoformat() < customer["created_on"]:
        months -= 1  # a subscription never starts before the account it belongs to
    need(add_months(start, 1 - months).isoformat() >= customer["created_on"], f"customer {customer['customer_id']} is too new for a subscription")
    sid = _SUBSCRIPTION_IDS.next(world, "subscriptions")
    world.execute(
        "INSERT INTO subscriptions (subscription_id, customer_id, plan_id, next_plan_id, status, started_on, period_start, period_end, "
        "paused_until, cancel_at_period_end, cancelled_on) VALUES (?, ?, ?, NULL, 'active', ?, ?, ?, NULL, 0, NULL)",
        (sid, customer["customer_id"], plan["plan_id"], add_months(start, 1 - months).isoformat(), start.isoformat(), end.isoformat()))
    card = f"{rng.randint(0, 9999):04d}"
    for back in range(min(months, 6) - 1, -1, -1):  # oldest first, so invoice ids follow the periods
        p_start = add_months(start, -back)
        issued = datetime(p_start.year, p_start.month, p_start.day, 6, tzinfo=NOW.tzinfo)
        invoice_id = next_id(world, "invoices")
        world.execute("INSERT INTO invoices (invoice_id, subscription_id, period_start, period_end, amount_minor, status, issued_at) "
                      "VALUES (?, ?, ?, ?, ?, 'paid', ?)", (invoice_id, sid, p_start.isoformat(), add_months(p_start, 1).isoformat(),
                                                           plan["price_minor"], stamp(issued)))
        world.execute("INSERT INTO payments (payment_id, order_id, invoice_id, method, card_last4, amount_minor, status, captured_at) "
                      "VALUES (?, NULL, ?, 'card', ?, ?, 'captured', ?)", (next_id(world, "payments"), invoice_id, card, plan["price_minor"],
                                                                           stamp(issued + timedelta(minutes=5))))
    sub = one(world, "SELECT * FROM subscriptions WHERE subscription_id = ?", sid)
    return {**sub, "price_minor": plan["price_minor"], "family": plan["family"], "plan_name": plan["name"], "plan_tier": plan["tier"]}


def subscriber(world: World, rng: random.Random, *, above_basic: bool = False) -> tuple[dict, dict]:
    """A customer with a name of their own and no subscription yet, given a planted one (:func:`plant_subscription`).
    Returns (customer, subscription)."""
    # an account at least a few months old: its subscription has paid periods behind it (and starts after the account)
    since = (TODAY - timedelta(days=_MIN_ACCOUNT_AGE_DAYS)).isoformat()
    customer = pick(rng, named_customers(world, "AND NOT EXISTS (SELECT 1 FROM subscriptions z WHERE z.customer_id = c.customer_id) "
                                                "AND c.created_on <= ?", since), "customer without a subscription")
    return customer, plant_subscription(world, rng, customer, above_basic=above_basic)


def fall_behind(world: World, sub: dict) -> None:
    """Make the subscription past due: its current period's invoice was never paid (the payment is gone, the invoice open)."""
    invoice = one(world, "SELECT invoice_id FROM invoices WHERE subscription_id = ? AND period_start = ? AND status = 'paid'",
                  sub["subscription_id"], sub["period_start"])["invoice_id"]
    world.execute("DELETE FROM payments WHERE invoice_id = ?", (invoice,))
    world.execute("UPDATE invoices SET status = 'open' WHERE invoice_id = ?", (invoice,))
    world.execute("UPDATE subscriptions SET status = 'past_due' WHERE subscription_id = ?", (sub["subscription_id"],))


def charge_twice(world: World, rng: random.Random, sub: dict, period_start: str) -> dict[str, str]:
    """Invoice and charge the subscription's period starting ``period_start`` a second time, a seeded few minutes or
    hours after the first charge. Returns the first (kept) and second (duplicate) invoice ids."""
    first = one(world, "SELECT * FROM invoices WHERE subscription_id = ? AND period_start = ? AND status = 'paid' ORDER BY invoice_id LIMIT 1",
                sub["subscription_id"], period_start)
    card = one(world, "SELECT card_last4 FROM payments WHERE invoice_id = ?", first["invoice_id"])["card_last4"]
    at = datetime.fromisoformat(first["issued_at"]) + timedelta(minutes=rng.randint(3, 600))
    second = next_id(world, "invoices")
    world.execute("INSERT INTO invoices (invoice_id, subscription_id, period_start, period_end, amount_minor, status, issued_at) "
                  "VALUES (?, ?, ?, ?, ?, 'paid', ?)", (second, sub["subscription_id"], first["period_start"], first["period_end"],
                                                       first["amount_minor"], stamp(at)))
    world.execute("INSERT INTO payments (payment_id, order_id, invoice_id, method, card_last4, amount_minor, status, captured_at) "
                  "VALUES (?, NULL, ?, 'card', ?, ?, 'captured', ?)", (next_id(world, "payments"), second, card, first["amount_minor"],
                                                                       stamp(at + timedelta(minutes=5))))
    return {"first": first["invoice_id"], "second": second}


# -- the caller and their identity ----------------------------------------------------------------------------


def plant_caller(world: World, rng: random.Random, customer: dict, wants: str, *, verifiable: bool, terms: dict[str, Terms],
                 **facts: str) -> str:
    """Put the customer on chat: they know their e-mail and date of birth, or (not ``verifiable``) give a date of
    birth that is not the account's; plus ``facts``. Returns the date of birth they give."""
    dob = customer["date_of_birth"] if verifiable else wrong_birthday(rng, customer["date_of_birth"])
    on_the_line(world, customer, wants, terms=terms, date_of_birth=dob, **facts)
    return dob


def identify(customer: dict, dob: str | None = None) -> list[ToolCall]:
    """Ask the caller for their e-mail and date of birth, find the account by the e-mail, verify with what they said."""
    given = dob or customer["date_of_birth"]
    return [ask("email"), ask("date_of_birth"), optional_call("search_customers", query=customer["email"]),
            call("verify_identity", customer_id=customer["customer_id"], email=customer["email"], date_of_birth=given)]


def identity_refused(customer: dict, dob: str, prompt: str, *, forbidden: dict[str, str], attempt: list[ToolCall],
                     metadata: dict) -> TaskDraft:
    """The twin of a subscription change: the caller's date of birth is not the account's, so the verification
    fails and nothing may change or be said about the account (policy section 3: ``identity_not_verified``).

    ``forbidden`` maps each write the request would need to its criterion name (gated even as a refused attempt);
    ``attempt`` is that write, for the negatives. The refusal is gated on the verification tried with the caller's
    own answers: refusing without trying, or after verifying with other details, fails.
    """
    steps = identify(customer, dob)
    refuse = refusal("identity_not_verified", "I could not verify you as the account holder, so I can't change or discuss this account.")
    return task(
        prompt=prompt,
        oracle=[*steps, refuse],
        outcome=refused("identity_not_verified"),
        rubric=[
            verified_with_answers(customer, dob, passed=False, name="tried to verify the caller with their answers", weight=2),
            *[never(tool, name) for tool, name in forbidden.items()],
        ],
        negatives=[
            negative("acts_anyway", "makes the change although the verification failed", *steps, *attempt, answer("Done.")),
            negative("records_birthday", "verifies with the account's date of birth instead of the caller's, then acts",
                     *identify(customer), *attempt, answer("Done.")),
            negative("no_check", "refuses without trying to verify the caller", ask("email"), ask("date_of_birth"), refuse),
        ],
        metadata={**metadata, "case": "unverified"},
    )
