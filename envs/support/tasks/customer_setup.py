"""The customers a support story is about: picking an active customer (one whose name is theirs alone, when a
prompt names them), planting a new account of a household with a seeded address and date of birth, and what a
customer brings with them: a ticket they opened, a photo they uploaded, a fraud signal on their account.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

from envs.support.catalog import NOW, TODAY
from envs.support.ledger import next_world_id as next_id
from envs.support.tasks._common import stamp
from fixtures.ids import IdSequences
from fixtures.world import World
from graders.criteria import AnyToolCalled, text
from graders.setup import one, rows

__all__ = [
    "FRAUD_SIGNALS",
    "UNIQUE_NAME",
    "birthday",
    "household_email",
    "named_customers",
    "plain_customers",
    "plant_customer",
    "plant_fraud_signal",
    "plant_photo",
    "plant_ticket",
    "said_address",
    "seeded_address",
    "verified_with_answers",
    "wrong_birthday",
]


def plain_customers(world: World, extra: str = "", *params: Any) -> list[dict[str, Any]]:
    """Active customers with an address, no open high-severity fraud signal, no second account; ``extra`` adds conditions on ``c``."""
    return rows(world, f"""
        SELECT c.* FROM customers c WHERE c.status = 'active'
          AND EXISTS (SELECT 1 FROM addresses a WHERE a.customer_id = c.customer_id)
          AND NOT EXISTS (SELECT 1 FROM fraud_signals g WHERE g.customer_id = c.customer_id AND g.severity = 'high' AND g.status = 'open')
          AND NOT EXISTS (SELECT 1 FROM customers d WHERE d.customer_id != c.customer_id AND d.first_name = c.first_name
                          AND d.last_name = c.last_name AND d.date_of_birth = c.date_of_birth)
          {extra} ORDER BY c.customer_id""", *params)


# -- customers named in a prompt (subscriptions, escalations, tickets, multistep) --------------------

UNIQUE_NAME = """AND NOT EXISTS (SELECT 1 FROM customers d WHERE d.customer_id != c.customer_id
                  AND d.first_name = c.first_name AND d.last_name = c.last_name)"""
"""SQL condition on ``c``: nobody else has this customer's name. Why: a prompt names people as a person would (by
name), and the account, its orders and its tickets are then found through the tools; the name must lead to one
account."""


def named_customers(world: World, extra: str = "", *params: Any) -> list[dict[str, Any]]:
    """:func:`plain_customers` whose full name is theirs alone (``extra``: further conditions on ``c``)."""
    return plain_customers(world, f"{UNIQUE_NAME} {extra}", *params)


# -- household accounts (shipping, accounts) ---------------------------------------------------------

_MORE_IDS = IdSequences({"customers": ("customer_id", "CUS", 5), "addresses": ("address_id", "ADR", 6)})
"""Sequences the tools never extend (only task setups create customers), salted like every other one."""


def plant_customer(world: World, rng: random.Random, *, first_name: str, last_name: str, date_of_birth: str, email: str,
                   address: dict[str, Any] | None = None) -> dict[str, Any]:
    """Plant an active account (with ``address`` as its default delivery address, when given); returns its row."""
    customer_id = _MORE_IDS.next(world, "customers")
    world.execute("INSERT INTO customers (customer_id, first_name, last_name, email, phone, date_of_birth, tier, status, merged_into, "
                  "created_on) VALUES (?, ?, ?, ?, ?, ?, ?, 'active', NULL, ?)",
                  (customer_id, first_name, last_name, email, f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}", date_of_birth,
                   rng.choice(("standard", "standard", "silver", "gold")), (TODAY - timedelta(days=rng.randint(30, 900))).isoformat()))
    if address is not None:
        world.execute("INSERT INTO addresses (address_id, customer_id, line1, line2, city, region, postcode, is_default) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, 1)", (_MORE_IDS.next(world, "addresses"), customer_id, address["line1"], address.get("line2"),
                                                          address["city"], address["region"], address["postcode"]))
    return one(world, "SELECT * FROM customers WHERE customer_id = ?", customer_id)


def household_email(rng: random.Random, first: str, last: str) -> str:
    """An e-mail that does not tell whose it is (``"smith.home47@..."``): two accounts of one household look alike."""
    local = "".join(ch for ch in last.lower() if ch.isascii() and ch.isalnum()) or "home"
    return f"{local}.{rng.choice(('home', 'family', 'mail', 'shop', 'orders'))}{rng.randint(10, 99)}@{rng.choice(('example.com', 'mail.example.org', 'inbox.example.net'))}"


def seeded_address(rng: random.Random, *, suite: bool = False) -> dict[str, Any]:
    """A delivery address drawn with ``rng`` from the catalogue's places and streets (``suite``: with a line 2)."""
    from envs.support import catalog as cat

    city, region, postcodes = cat.PLACES[rng.randrange(len(cat.PLACES))]
    return {"line1": f"{rng.randint(100, 9800)} {rng.choice(cat.STREETS)}", "line2": f"Suite {rng.randint(2, 60) * 10}" if suite else None,
            "city": city, "region": region, "postcode": rng.choice(postcodes)}


def said_address(address: dict[str, Any]) -> str:
    """An address as a person says it: ``"123 Oak St, Suite 40, Portland, OR 97201"``."""
    parts = [address["line1"], address.get("line2"), address["city"], f"{address['region']} {address['postcode']}"]
    return ", ".join(p for p in parts if p)


def birthday(rng: random.Random, *, not_on: str | None = None) -> str:
    """A seeded date of birth (ISO) of an adult, never ``not_on``."""
    while True:
        day = (date(1950, 1, 1) + timedelta(days=rng.randint(0, 19_000))).isoformat()
        if day != not_on:
            return day


# -- the caller's identity ------------------------------------------------------------------------


def wrong_birthday(rng: random.Random, dob: str) -> str:
    """A date of birth near the account's but not it (a day, a month or a year off): what a caller who is not the
    account holder, or misremembers it, would say."""
    day = date.fromisoformat(dob)
    near = [day + timedelta(days=1), day - timedelta(days=1), day + timedelta(days=31), day - timedelta(days=365), day + timedelta(days=366)]
    return rng.choice([d for d in near if d != day]).isoformat()


def verified_with_answers(customer: dict, dob: str, *, passed: bool, name: str, weight: float = 1.0) -> object:
    """A gate bound to the deciding record: a verification of this account with exactly what the caller said,
    whose result was ``passed`` (a made-up or neighbouring date of birth does not count)."""
    # the attempt itself is the point (only its outcome says whether the caller is the account holder): a call gate
    pattern = {"tool": "verify_identity", "args": {"customer_id": customer["customer_id"], "email": text(customer["email"]), "date_of_birth": dob},
               "result": {"verified": passed}}
    return AnyToolCalled(name=name, patterns=[pattern], weight=weight, gate=True)


# -- what the customer brings: tickets, photos, fraud signals ----------------------------------------


def plant_ticket(world: World, customer_id: str, subject: str, body: str, *, order_id: str | None = None, tag: str,
                 priority: str = "normal", team: str = "frontline", hours_ago: float = 1.0, status: str = "new") -> str:
    """A ticket the customer just opened, with its first message and tag, its SLA clock running."""
    from envs.support.rules import SLA_HOURS

    ticket_id = next_id(world, "tickets")
    created = NOW - timedelta(hours=hours_ago)
    world.execute(
        "INSERT INTO tickets (ticket_id, customer_id, order_id, subject, channel, status, priority, team_id, assignee, created_at, "
        "first_response_due, first_responded_at, merged_into) VALUES (?, ?, ?, ?, 'email', ?, ?, ?, NULL, ?, ?, NULL, NULL)",
        (ticket_id, customer_id, order_id, subject, status, priority, team, stamp(created), stamp(created + timedelta(hours=SLA_HOURS[priority]))))
    world.execute("INSERT INTO ticket_messages (message_id, ticket_id, at, author, kind, body) VALUES (?, ?, ?, ?, 'customer', ?)",
                  (next_id(world, "ticket_messages"), ticket_id, stamp(created), customer_id, body))
    world.execute("INSERT INTO ticket_tags (ticket_id, tag) VALUES (?, ?)", (ticket_id, tag))
    return ticket_id


def plant_photo(world: World, customer_id: str, description: str) -> str:
    """A photo the customer uploads today (what ``ask_customer('photo')`` hands over)."""
    attachment_id = next_id(world, "attachments")
    world.execute("INSERT INTO attachments (attachment_id, customer_id, kind, description, uploaded_at) VALUES (?, ?, 'photo', ?, ?)",
                  (attachment_id, customer_id, description, stamp(NOW - timedelta(minutes=5))))
    return attachment_id


FRAUD_SIGNALS = (
    ("velocity", "Five orders to three addresses within an hour"),
    ("refund_abuse", "Refund claims on most delivered orders in the last 60 days"),
    ("linked_accounts", "Card shared with a closed account flagged for refund abuse"),
    ("address_mismatch", "Billing and shipping countries differ on several high-value orders"),
)
"""Kinds of fraud signal, with what the risk system noted."""


def plant_fraud_signal(world: World, rng: random.Random, customer_id: str, *, severity: str = "high", status: str = "open") -> str:
    """A fraud signal on the customer of a seeded kind, raised a seeded number of days ago; returns its id. An open
    high-severity one blocks refunds, credits, replacements and merges (escalate to the fraud team)."""
    kind, details = FRAUD_SIGNALS[rng.randrange(len(FRAUD_SIGNALS))]
    signal_id = next_id(world, "fraud_signals")
    world.execute("INSERT INTO fraud_signals (signal_id, customer_id, order_id, kind, severity, status, created_at, details) "
                  "VALUES (?, ?, NULL, ?, ?, ?, ?, ?)", (signal_id, customer_id, kind, severity, status,
                                                       stamp(NOW - timedelta(days=rng.randint(2, 40), hours=rng.randint(0, 12))), details))
    return signal_id
