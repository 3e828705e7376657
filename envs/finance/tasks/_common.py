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

from envs.finance.catalog import NOW, OPENING_DAY, TODAY
from envs.finance.ledger import next_world_id as next_id
from fixtures.money import format_minor
from fixtures.world import World
from graders.criteria import AnswerCheck, Seen, StateCheck, ToolCalled, ToolNotCalled, fact, number, seen, state
from graders.outcome import refused
from graders.setup import need, one, pick, rows
from graders.tasks import TaskDraft, ToolCall, call, negative, optional_call
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
    "seen",
    "fact",
    "account_seen",
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
    "stated_digits",
    "identity_refused",
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


def value_is(field: str, expected: str, currency: str | None = None, *, weight: float = 2.0, name: str | None = None,
             gate: bool = True) -> AnswerCheck:
    """A gate: the answer's ``values.<field>`` equals ``expected`` as a Decimal (tolerance 0: money is exact).

    ``currency``: the currency the figure is in (a money figure labelled with another currency fails, as a customer
    told "4.37" in the wrong currency would be misled); every finance template gives it for money and leaves it out
    only for a count (units of a fund) — tests/envs/finance/test_credit.py holds them to it. A gate because the policy
    says so: a figure the task asks for that no tool gave is a wrong answer, whatever else was right.
    """
    return AnswerCheck(name=name or f"answer gives {field}", field=f"values.{field}", expect=number(expected, currency=currency),
                       weight=weight, gate=gate)


def status_is(expected: str, *, weight: float = 1.0) -> AnswerCheck:
    """The answer's ``values.status`` is exactly ``expected`` (one status, not a list of candidates)."""
    return AnswerCheck(name="answer gives the status", field="values.status", expect=expected, weight=weight)


def account_seen(name: str, account_id: str, *fields: str, weight: float = 2.0, before: Any = None) -> Seen:
    """A gate: the account's ``fields`` (its ``status``, ``available_balance``, ``daily_limits``...) were shown before the
    decision, by whichever tool showed them (the customer's account list, the account itself, the brokerage view).

    Why a gate on what was seen rather than on a tool: a decision is only evidence of work when the agent read the
    fact that justifies it; which read showed the fact is the agent's choice.
    """
    return seen(name, "accounts", account_id, *fields, weight=weight, before=before)


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
    """An external payee of a customer, added on ``added_on`` — or on the day they joined, if that is later (nobody
    registers a payee before becoming a customer)."""
    since = date.fromisoformat(one(world, "SELECT customer_since FROM customers WHERE customer_id = ?", customer_id)["customer_since"])
    added_on = max(added_on, since)
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

_IN_TIME_SQL = """
    SELECT c.customer_id FROM customers c
    WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.customer_id = c.customer_id AND (a.opened_on > ? OR a.opened_on < c.customer_since))
      AND NOT EXISTS (SELECT 1 FROM cards k JOIN transactions t ON t.card_id = k.card_id
                      WHERE k.customer_id = c.customer_id AND t.txn_date < k.issued_on)
      AND NOT EXISTS (SELECT 1 FROM payees p WHERE p.customer_id = c.customer_id AND p.added_on < c.customer_since)
      AND NOT EXISTS (SELECT 1 FROM payees p JOIN accounts a ON a.account_id = p.internal_account_id
                      WHERE (p.customer_id = c.customer_id OR a.customer_id = c.customer_id) AND p.added_on < a.opened_on)
      AND NOT EXISTS (SELECT 1 FROM notes n WHERE n.customer_id = c.customer_id AND substr(n.created_at, 1, 10) < c.customer_since)
    ORDER BY c.customer_id"""
"""Customers whose records keep their timeline: every account opened after they joined and before the six months of
history began (so every ledger row, and every row a story plants in that window, comes after it), no card used before
it was issued, no payee added before they joined or before the account it pays was opened, no note before they joined."""


def named_customer_ids(world: World) -> set[str]:
    """Customers whom ``search_customers`` finds alone by their full name (``First Last``), and whose records keep
    their timeline (``_IN_TIME_SQL``).

    Why: a prompt names the customer as a person would (the name, plus what they state), never by the
    customer id the oracle's calls need; the name must then lead to exactly one customer, or the task would
    be ambiguous. And a story told about a customer plants rows beside theirs (a charge, a freeze, a dispute): a
    record that already contradicts itself (a card used before it was issued, an account whose ledger starts
    before it was opened) makes the story one a careful agent cannot trust. Call it before planting (on the
    untouched world the query is memoised).
    """
    alone = {r["customer_id"] for r in rows(world, _NAMED_ALONE_SQL)}
    in_time = {r["customer_id"] for r in rows(world, _IN_TIME_SQL, OPENING_DAY.isoformat())}
    return alone & in_time


def find_customer(customer: dict[str, Any]) -> ToolCall:
    """The optional ``search_customers`` call by full name that turns the prompt's name into the customer id.

    Optional because the check proves required steps by dropping them: the reads and writes that follow use
    the id, and an episode that skipped the search with the right id would be no worse.
    """
    return optional_call("search_customers", query=full_name(customer))


def stated_digits(rng: random.Random, customer: dict[str, Any], wrong: bool) -> str:
    """The ID digits the caller states: their own, or (``wrong``) four others (a misremembered ID, or an impostor)."""
    return other_digits(rng, customer["id_last4"]) if wrong else customer["id_last4"]


def identity_refused(customer: dict[str, Any], stated: str, prompt: str, action: ToolCall, *, metadata: dict[str, Any]) -> TaskDraft:
    """The twin of a caller's request in which the ID digits they state do not match the record: verify with what they
    said, do nothing sensitive, decline (``identity_not_verified``).

    Why a twin of many requests: every sensitive action needs the caller verified (policy section 2), the prompt reads
    the same in every case but for the digits, and only ``verify_identity`` tells — so a policy that declares a
    refusal without checking earns nothing, and one that acts without checking is caught.
    """
    cid = customer["customer_id"]
    check = verify(customer, last4=stated)
    decline = refusal("identity_not_verified", "The caller's answers did not pass identity verification, so I did not act on the "
                                               "request; they can try again with the right details or visit a branch with photo ID.")
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), check, decline],
        outcome=refused("identity_not_verified"),
        rubric=[
            ToolCalled(name="checked the caller's answers", tool="verify_identity", args={"customer_id": cid, "id_last4": stated},
                       weight=2, gate=True),
            never(action.tool, "nothing done for an unverified caller"),
        ],
        negatives=[
            negative("acts_anyway", "checks the caller's answers, then tries the request anyway", check, action,
                     refusal("identity_not_verified", "The caller could not be verified.")),
            negative("refuses_unchecked", "declines without checking the caller's answers",
                     refusal("identity_not_verified", "The caller could not be verified.")),
            negative("claims_done", "tells the caller it was done", answer("Done as requested.")),
        ],
        metadata={**metadata, "case": "wrong_digits", "stated_last4": stated},
    )


def other_digits(rng: Any, real: str) -> str:
    """Four digits a caller might state that are not ``real`` (the record's ID digits).

    Why: a template whose twin is a failed identity check words the prompt the same in every case; only the
    digits differ, and only ``verify_identity`` tells whether they match.
    """
    stated = real
    while stated == real:
        stated = f"{rng.randrange(10_000):04d}"
    return stated
