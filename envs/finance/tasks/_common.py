"""Helpers every finance task template shares: picking rows, planting setup rows, standard calls and criteria.

A template reads the world to choose its subject (a customer, an account, a charge) with the task's rng,
plants whatever its story needs with plain SQL (before ``mark_start``, so the setup is not in the episode's
diff), and builds its oracle, rubric and negatives from what it read — never from hard-coded ids. Planted
rows follow the fixture's own conventions (next id in sequence, ``balance_minor`` = sum of posted rows),
so a planted world is indistinguishable from a generated one. What only some families plant lives beside them
(``customer_setup``, ``wire_setup``, ``charge_setup``, ``wealth_setup``, ``lookup_setup``; see ``__init__``).

What every rubric gets without asking (``graders/standard.py``): the declared outcome as a gate, claims
checked against the world, and no collateral changes — every effect must be one the oracle makes. So a
template lists only what is specific to its task: the end state it needs, the forbidden calls, the reads
that justify its answer, and the figures it asks for. Names say what is checked, never the expected value.
"""

from __future__ import annotations

import json
import random
import string
from datetime import date, datetime, timedelta
from typing import Any

from envs.finance.catalog import NOW, TODAY
from envs.finance.ledger import next_world_id as next_id
from fixtures.money import format_minor
from fixtures.world import World
from graders.criteria import AnswerCheck, AnyToolCalled, StateCheck, ToolNotCalled, number, state
from graders.setup import need, one, pick, rows
from graders.tasks import ToolCall, call, optional_call
from graders.tasks import answer_call as answer
from graders.tasks import refusal_call as refusal

__all__ = [
    "NOW",
    "TODAY",
    "AGENT",
    "ANALYSTS",
    "AVAILABLE_SQL",
    "SUPERVISORS",
    "rows",
    "one",
    "pick",
    "need",
    "next_id",
    "money",
    "full_name",
    "stamp",
    "reference",
    "caller",
    "verify",
    "answer",
    "refusal",
    "with_values",
    "customer_of",
    "available_minor",
    "balance_is",
    "value_is",
    "status_is",
    "looked_up",
    "accounts_read",
    "never",
    "optional_call",
    "plant_txn",
    "plant_note",
    "plant_audit",
    "plant_pending_wire",
    "plant_payee",
    "plant_alert",
    "usd_minor",
    "named_customer_ids",
    "find_customer",
    "other_digits",
]

AGENT = "STF-0100"
"""The analyst the agent acts as (``catalog.AGENT_STAFF_ID``)."""
SUPERVISORS: dict[str, tuple[str, int]] = {
    "STF-0001": ("Dana Whitfield", 25_000_000),
    "STF-0002": ("Marcus Oyelaran", 10_000_000),
    "STF-0003": ("Priya Raman", 5_000_000),
}
"""Active supervisors: id → (name, approval limit in US cents). Read from the world where it matters."""
ANALYSTS = ("STF-0010", "STF-0011", "STF-0012", "STF-0013")
"""Colleagues who key wires and place holds for customers (never the agent, STF-0100: its own requests are its own)."""

AVAILABLE_SQL = """(a.balance_minor + a.overdraft_limit_minor
    - (SELECT coalesce(sum(h.amount_minor), 0) FROM holds h WHERE h.account_id = a.account_id AND h.status = 'active')
    + (SELECT coalesce(sum(t.amount_minor), 0) FROM transactions t WHERE t.account_id = a.account_id AND t.status = 'pending'
       AND t.amount_minor < 0))"""
"""SQL for an account's available balance (balance + overdraft - active holds - pending debits); the account is ``a``."""


def money(minor: int, currency: str) -> str:
    """Minor units → the decimal string tools take and return (``"1250.00"``)."""
    return format_minor(minor, currency)


def usd_minor(world: World, minor: int, currency: str) -> int:
    """``minor`` of ``currency`` in US cents at the mid rate, rounded down (what approval limits compare)."""
    if currency == "USD":
        return minor
    rate = one(world, "SELECT mid_rate_micros FROM fx_rates WHERE base = ? AND quote = 'USD'", currency)["mid_rate_micros"]
    return minor * int(rate) // 1_000_000


def available_minor(world: World, account_id: str) -> int:
    """The account's available balance: balance + overdraft - active holds - pending debits."""
    return int(one(world, f"SELECT {AVAILABLE_SQL} AS v FROM accounts a WHERE a.account_id = ?", account_id)["v"])


def full_name(customer: dict[str, Any]) -> str:
    """``First Last``."""
    return f"{customer['first_name']} {customer['last_name']}"


def stamp(moment: datetime) -> str:
    """An instant as the tables store it."""
    return moment.isoformat()


def reference(rng: random.Random, prefix: str) -> str:
    """A seeded external reference such as ``DEP-7K2M9QXA`` (a deposit slip, a card authorisation, a transfer)."""
    return prefix + "-" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(8))


def caller(customer: dict[str, Any], *, last4: str | None = None, postcode: str | None = None) -> str:
    """The sentence of a ticket saying what the customer on the line stated for identity verification."""
    return (
        f"{full_name(customer)} is on the phone; for identity verification they gave the last four digits of their ID "
        f"as {last4 or customer['id_last4']} and their postcode as {postcode or customer['postcode']}."
    )


def verify(customer: dict[str, Any], *, last4: str | None = None, postcode: str | None = None, optional: bool = False) -> ToolCall:
    """The ``verify_identity`` call with what the customer stated (by default: the right answers)."""
    make = optional_call if optional else call
    return make(
        "verify_identity",
        customer_id=customer["customer_id"],
        id_last4=last4 or customer["id_last4"],
        postcode=postcode or customer["postcode"],
    )


def with_values(final: ToolCall, **values: str) -> ToolCall:
    """``final`` (a refusal or escalation answer) with the figures the task asks for in ``values``."""
    return final.model_copy(update={"arguments": {**final.arguments, "values": values}})


def customer_of(world: World, account_id: str) -> dict[str, Any]:
    """The customer row owning ``account_id``."""
    return one(world, "SELECT c.* FROM customers c JOIN accounts a ON a.customer_id = c.customer_id WHERE a.account_id = ?", account_id)


def balance_is(account_id: str, minor: int, *, weight: float = 2.0, name: str | None = None, gate: bool = False) -> StateCheck:
    """The account's ledger balance ends at exactly ``minor``."""
    return state("SELECT balance_minor FROM accounts WHERE account_id = ?", account_id, expect=minor, weight=weight,
                 gate=gate, name=name or f"balance of {account_id}")


def value_is(field: str, expected: str, *, weight: float = 2.0, name: str | None = None) -> AnswerCheck:
    """The answer's ``values.<field>`` equals ``expected`` as a Decimal (tolerance 0: money is exact)."""
    return AnswerCheck(name=name or f"answer gives {field}", field=f"values.{field}", expect=number(expected), weight=weight)


def status_is(expected: str, *, weight: float = 1.0) -> AnswerCheck:
    """The answer's ``values.status`` is exactly ``expected`` (one status, not a list of candidates)."""
    return AnswerCheck(name="answer gives the status", field="values.status", expect=expected, weight=weight)


def looked_up(name: str, *patterns: dict[str, Any], weight: float = 1.0) -> AnyToolCalled:
    """A gate: some successful call matches one of ``patterns`` (``{"tool": ..., "args": {...}}``).

    Why a gate: an answer is only evidence when the agent read the data that justifies it; a figure or a
    refusal given without the look-up is a guess (or a peek), whatever it says.
    """
    return AnyToolCalled(name=name, patterns=list(patterns), weight=weight, gate=True)


def accounts_read(name: str, customer_id: str, *account_ids: str, weight: float = 1.0) -> AnyToolCalled:
    """A gate: the customer's accounts were read (``list_accounts`` of this customer, or ``get_account`` of one of
    ``account_ids``) — the record whose balance or status justifies the decision."""
    patterns = [{"tool": "list_accounts", "args": {"customer_id": customer_id}}]
    patterns += [{"tool": "get_account", "args": {"account_id": account_id}} for account_id in account_ids]
    return looked_up(name, *patterns, weight=weight)


def never(tool: str, name: str, *, gate: bool = True, **args: Any) -> ToolNotCalled:
    """A forbidden call: even a refused attempt counts (trying is the violation)."""
    return ToolNotCalled(name=name, tool=tool, args=args, gate=gate)


# -- planting setup rows --------------------------------------------------------------------------------


def plant_txn(
    world: World,
    account: dict[str, Any],
    day: date,
    amount: int,
    kind: str,
    category: str,
    *,
    merchant: str | None = None,
    country: str | None = None,
    memo: str | None = None,
    reference: str,
    card_id: str | None = None,
    transfer_id: str | None = None,
    status: str = "posted",
    lag: int = 0,
) -> str:
    """Insert a ledger row (posted rows move the balance, keeping balance = sum of posted rows)."""
    txn_id = next_id(world, "transactions")
    posted = (day + timedelta(days=lag)).isoformat() if status == "posted" else None
    world.execute(
        "INSERT INTO transactions (txn_id, account_id, txn_date, posted_on, amount_minor, currency, status, kind, merchant, "
        "merchant_country, category, memo, reference, card_id, transfer_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (txn_id, account["account_id"], day.isoformat(), posted, amount, account["currency"], status, kind, merchant, country,
         category, memo, reference, card_id, transfer_id),
    )
    if status == "posted":
        world.execute("UPDATE accounts SET balance_minor = balance_minor + ? WHERE account_id = ?", (amount, account["account_id"]))
    return txn_id


def plant_audit(world: World, at: str, actor: str, action: str, entity_type: str, entity_id: str, **details: Any) -> None:
    """An audit row for a planted staff action (the back office's trail stays complete)."""
    world.execute(
        "INSERT INTO audit_log (audit_id, at, actor, action, entity_type, entity_id, details) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (next_id(world, "audit_log"), at, actor, action, entity_type, entity_id, json.dumps(details, sort_keys=True)),
    )


def plant_note(world: World, customer_id: str, body: str, *, category: str, author: str, at: str) -> str:
    """A staff note on a customer's file."""
    note_id = next_id(world, "notes")
    world.execute(
        "INSERT INTO notes (note_id, customer_id, author_id, created_at, category, body) VALUES (?, ?, ?, ?, ?, ?)",
        (note_id, customer_id, author, at, category, body),
    )
    plant_audit(world, at, author, "add_note", "customer", customer_id, category=category)
    return note_id


def plant_payee(world: World, customer_id: str, name: str, *, currency: str, verified: bool, added_on: date,
                bank: str = "Chase Bank", number_: str = "4410927735", routing: str = "021000021") -> str:
    """An external payee of a customer."""
    payee_id = next_id(world, "payees")
    world.execute(
        "INSERT INTO payees (payee_id, customer_id, kind, name, bank_name, account_number, routing_code, internal_account_id, "
        "currency, verified, status, added_on) VALUES (?, ?, 'external', ?, ?, ?, ?, NULL, ?, ?, 'active', ?)",
        (payee_id, customer_id, name, bank, number_, routing, currency, int(verified), added_on.isoformat()),
    )
    return payee_id


def plant_pending_wire(world: World, account: dict[str, Any], payee: dict[str, Any], amount: int, *, requested_by: str,
                       at: str, memo: str) -> str:
    """A wire awaiting a supervisor's approval, with its reserved (pending) debit and fee, as send_wire makes it."""
    transfer_id = next_id(world, "transfers")
    reference = f"WIR-{transfer_id[4:]}"
    world.execute(
        "INSERT INTO transfers (transfer_id, kind, from_account_id, payee_id, amount_minor, currency, fee_minor, status, channel, "
        "requested_by, requested_at, memo, reference) VALUES (?, 'external_wire', ?, ?, ?, ?, 2500, 'pending_approval', "
        "'back_office', ?, ?, ?, ?)",
        (transfer_id, account["account_id"], payee["payee_id"], amount, account["currency"], requested_by, at, memo, reference),
    )
    day = date.fromisoformat(at[:10])
    plant_txn(world, account, day, -amount, "wire", "transfer", merchant=payee["name"],
              memo=f"Wire to {payee['name']} (awaiting approval)", reference=reference, transfer_id=transfer_id, status="pending")
    plant_txn(world, account, day, -2_500, "fee", "fees", memo="Outgoing wire fee", reference=reference,
              transfer_id=transfer_id, status="pending")
    plant_audit(world, at, requested_by, "send_wire", "transfer", transfer_id, amount_minor=amount, status="pending_approval")
    return transfer_id


def plant_alert(world: World, customer_id: str, account_id: str | None, txn_id: str | None, *, kind: str, severity: str,
                at: str, details: str) -> str:
    """An open compliance alert."""
    alert_id = next_id(world, "compliance_alerts")
    world.execute(
        "INSERT INTO compliance_alerts (alert_id, customer_id, account_id, txn_id, kind, severity, status, created_at, details) "
        "VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?)",
        (alert_id, customer_id, account_id, txn_id, kind, severity, at, details),
    )
    return alert_id


# -- finding a customer the way a person names them -------------------------------------------------------

_NAMED_ALONE_SQL = """
    SELECT c.customer_id FROM customers c
    WHERE (SELECT count(*) FROM customers o
           WHERE o.first_name || ' ' || o.last_name LIKE '%' || c.first_name || ' ' || c.last_name || '%'
              OR o.last_name || ' ' || o.first_name LIKE '%' || c.first_name || ' ' || c.last_name || '%') = 1
    ORDER BY c.customer_id"""


def named_customer_ids(world: World) -> set[str]:
    """Customers whom ``search_customers`` finds alone by their full name (``First Last``).

    Why: a prompt names the customer as a person would (the name, plus what they state), never by the
    customer id the oracle's calls need; the name must then lead to exactly one customer, or the task would
    be ambiguous. Call it before planting (on the untouched world the query is memoised).
    """
    return {r["customer_id"] for r in rows(world, _NAMED_ALONE_SQL)}


def find_customer(customer: dict[str, Any]) -> ToolCall:
    """The optional ``search_customers`` call by full name that turns the prompt's name into the customer id.

    Optional because the check proves required steps by dropping them: the reads and writes that follow use
    the id, and an episode that skipped the search with the right id would be no worse.
    """
    return optional_call("search_customers", query=full_name(customer))


def other_digits(rng: Any, real: str) -> str:
    """Four digits a caller might state that are not ``real`` (the record's ID digits).

    Why: a template whose twin is a failed identity check words the prompt the same in every case; only the
    digits differ, and only ``verify_identity`` tells whether they match.
    """
    stated = real
    while stated == real:
        stated = f"{rng.randrange(10_000):04d}"
    return stated
