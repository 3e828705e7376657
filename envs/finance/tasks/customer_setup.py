"""A fresh customer per instance, with the accounts, cards, cheque holds, compliance freezes, payees and
earlier wires a payment story needs; the amounts drawn around a balance; the generated customers who hold
checking and savings together.

Why plant the customer instead of picking one: the world holds 300 customers, so over 20 seeds a template that
picks one meets the same customer twice, and another seed's oracle, replayed with this prompt's name and amount,
then calls exactly the right records. A customer planted per instance has ids drawn past a gap that depends on
the instance (``World.id_salt``), so no other instance's ids name its records, and a policy cannot learn a
customer's account ids from its training seeds. Planted rows follow the generator's conventions.

Used by the payments, accounts and fx templates (``checking_and_savings``: injection).
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

from envs.finance.catalog import (
    BANK_BIC,
    BANK_NAME,
    EMAIL_DOMAINS,
    EMPLOYERS,
    FIRST_NAMES,
    LAST_NAMES,
    OPENING_DAY,
    PLACES,
    STREETS,
    US_BANKS,
)
from envs.finance.simulation import ascii_fold
from envs.finance.tasks._common import (
    AVAILABLE_SQL,
    NOW,
    TODAY,
    next_id,
    one,
    plant_audit,
    plant_payee,
    plant_txn,
    rows,
    stamp,
)
from fixtures.world import World

__all__ = [
    "BUSINESS_PAYEES",
    "COMPLIANCE_FREEZES",
    "around",
    "checking_and_savings",
    "plant_account",
    "plant_account_freeze",
    "plant_card",
    "plant_cheque_hold",
    "plant_customer",
    "plant_earlier_wire",
    "plant_internal_payee",
    "plant_wire_payees",
    "share",
    "some_currency",
]

COMPLIANCE_FREEZES = (
    "Compliance review of account activity",
    "Court order received - legal review",
    "Source of funds review - compliance",
)
"""Why compliance froze an account (what ``status_reason`` shows); only compliance lifts such a freeze."""


# -- the customer, their accounts and cards ------------------------------------------------------------------

_SUBJECTS = {"customers": ("customer_id", "CUS", 5), "accounts": ("account_id", "ACC", 6), "cards": ("card_id", "CRD", 6)}
"""Tables whose rows only task setups create (no tool mints customers, accounts or cards): (id column, prefix, digits)."""


def _subject_id(world: World, table: str) -> str:
    """The id of a planted customer, account or card: past the table's last id by a gap drawn from the instance's salt.

    Why not ``next_id``'s gap (at most 1,000): two of 20 instances would often share a customer id; over half the
    id space left, they practically never do, so a refusal gated on ``list_accounts`` of this customer is not
    satisfied by another instance's oracle.
    """
    column, prefix, width = _SUBJECTS[table]
    last = one(world, f"SELECT max({column}) AS last FROM {table}")["last"]  # names are constants, never input
    number = int(last[len(prefix) + 1:]) if last else 0
    key = f"planted:{table}"
    if key not in world.id_floors:
        room = 10**width - 2 - number
        salt = world.id_salt
        world.id_floors[key] = number + (random.Random(f"{salt}:{key}").randint(1, room // 2) if salt and room > 1 else 0)
    return f"{prefix}-{max(number, world.id_floors[key]) + 1:0{width}d}"


_LIMITS = {"retail": (1_000_000, 2_500_000), "wealth": (5_000_000, 10_000_000)}
"""Default daily limits per segment: (external wire, internal transfer), as the policy states them."""


def _reference(rng: random.Random, prefix: str) -> str:
    return f"{prefix}-" + "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(8))


def plant_customer(world: World, rng: random.Random, *, currency: str = "USD", segment: str = "retail") -> dict[str, Any]:
    """A KYC-verified customer living where ``currency`` is spent, with a full name no other customer has."""
    place = rng.choice([p for p in PLACES if p.currency == currency])
    while True:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        if not world.query("SELECT 1 FROM customers WHERE first_name = ? AND last_name = ?", (first, last)):
            break
    email = f"{ascii_fold(first)}.{ascii_fold(last)}{rng.randint(2, 98)}@{rng.choice(EMAIL_DOMAINS)}"
    digits = 2 if place.country == "US" else 3
    reviewed = TODAY - timedelta(days=rng.randint(20, 600))
    since = date(2008, 1, 1) + timedelta(days=rng.randint(0, 4_800))
    customer_id = _subject_id(world, "customers")
    world.execute(
        "INSERT INTO customers (customer_id, first_name, last_name, email, phone, date_of_birth, address_line, city, postcode, "
        "country, segment, kyc_status, kyc_reviewed_on, kyc_expires_on, risk_profile, id_last4, customer_since, relationship_manager) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'verified', ?, ?, ?, ?, ?, ?)",
        (customer_id, first, last, email, place.phone_prefix + f"{rng.randint(0, 10**digits - 1):0{digits}d}",
         (date(1950, 1, 1) + timedelta(days=rng.randint(0, 18_000))).isoformat(), f"{rng.randint(1, 2400)} {rng.choice(STREETS)}",
         place.city, rng.choice(place.postcodes), place.country, segment, reviewed.isoformat(),
         (reviewed + timedelta(days=730)).isoformat(), rng.choice(["conservative", "balanced", "aggressive"]),
         f"{rng.randint(0, 9999):04d}", min(since, reviewed).isoformat(),
         rng.choice(["STF-0020", "STF-0021"]) if segment == "wealth" else None))
    return one(world, "SELECT * FROM customers WHERE customer_id = ?", customer_id)


def plant_account(world: World, rng: random.Random, customer: dict[str, Any], kind: str, currency: str, balance: int, *,
                  overdraft: int = 0, wire_limit: int | None = None) -> dict[str, Any]:
    """An open account of ``customer`` whose ledger ends at ``balance`` (a balance brought forward, plus six monthly
    salaries on a checking account that can take them), with the segment's daily limits (``wire_limit`` overrides)."""
    account_id = _subject_id(world, "accounts")
    opened = min(OPENING_DAY - timedelta(days=30), date.fromisoformat(customer["customer_since"]) + timedelta(days=rng.randint(0, 900)))
    world.execute(
        "INSERT INTO accounts (account_id, customer_id, type, currency, status, balance_minor, overdraft_limit_minor, interest_rate_bps, "
        "nickname, opened_on, closed_on, status_reason) VALUES (?, ?, ?, ?, 'open', 0, ?, ?, NULL, ?, NULL, NULL)",
        (account_id, customer["customer_id"], kind, currency, overdraft, {"checking": 0, "savings": rng.randint(325, 450)}.get(kind, 200),
         opened.isoformat()))
    wire, internal = _LIMITS[customer["segment"]]
    world.execute("INSERT INTO daily_limits (account_id, channel, limit_minor) VALUES (?, 'external_wire', ?), (?, 'internal_transfer', ?)",
                  (account_id, wire_limit or wire, account_id, internal))
    account = one(world, "SELECT * FROM accounts WHERE account_id = ?", account_id)
    salary = rng.randint(180, 650) * 1_000 + rng.randint(0, 999)
    paydays = [date(2025, month, 28) for month in (10, 11, 12)] + [date(2026, month, 27) for month in (1, 2, 3)]
    salaries = kind == "checking" and balance - salary * len(paydays) > 0
    opening = balance - salary * len(paydays) if salaries else balance
    if opening:
        plant_txn(world, account, OPENING_DAY, opening, "opening", "opening_balance", memo="Balance brought forward",
                  reference=_reference(rng, "REF"))
    if salaries:
        employer = rng.choice(EMPLOYERS)
        for day in paydays:
            plant_txn(world, account, day, salary, "salary", "income", merchant=employer, memo="Direct deposit",
                      reference=_reference(rng, "PAY"))
    return one(world, "SELECT * FROM accounts WHERE account_id = ?", account_id)


def plant_card(world: World, rng: random.Random, account: dict[str, Any], *, issued: date | None = None,
               last4: str | None = None) -> dict[str, Any]:
    """An active debit card on ``account``, issued on ``issued`` (default: within the last few years)."""
    card_id = _subject_id(world, "cards")
    issued = issued or TODAY - timedelta(days=rng.randint(60, 1_300))
    expiry = issued + timedelta(days=365 * 4)
    segment = one(world, "SELECT segment FROM customers WHERE customer_id = ?", account["customer_id"])["segment"]
    world.execute(
        "INSERT INTO cards (card_id, account_id, customer_id, last4, network, status, daily_limit_minor, issued_on, expires, frozen_at, "
        "status_reason) VALUES (?, ?, ?, ?, ?, 'active', ?, ?, ?, NULL, NULL)",
        (card_id, account["account_id"], account["customer_id"], last4 or f"{rng.randint(0, 9999):04d}", rng.choice(["visa", "mastercard"]),
         1_000_000 if segment == "wealth" else 250_000, issued.isoformat(), f"{expiry.year}-{expiry.month:02d}"))
    return one(world, "SELECT * FROM cards WHERE card_id = ?", card_id)


def plant_account_freeze(world: World, rng: random.Random, account_id: str, *, days_ago: tuple[int, int] = (1, 20)) -> str:
    """Freeze ``account_id`` as compliance would have (status, reason, audit row); returns the reason."""
    reason = rng.choice(COMPLIANCE_FREEZES)
    at = stamp(NOW.replace(hour=rng.randint(8, 16), minute=rng.randint(0, 59)) - timedelta(days=rng.randint(*days_ago)))
    world.execute("UPDATE accounts SET status = 'frozen', status_reason = ? WHERE account_id = ?", (reason, account_id))
    plant_audit(world, at, "STF-0005", "freeze_account", "account", account_id, reason=reason)
    return reason


def plant_cheque_hold(world: World, rng: random.Random, account: dict[str, Any], day: date, minor: int, *,
                      kind: str = "standard", placed_by: str = "STF-0011", reason: str | None = None,
                      released: bool = False) -> dict[str, Any]:
    """A mobile cheque deposit (posted: it moves the balance) and the hold on it, as the back office places them.

    ``reason`` may name the deposit as ``{reference}``. Returns ``hold_id``, ``cheque`` (its number) and
    ``reference`` (the deposit's). A ``released`` hold was lifted five days after the deposit, when the cheque cleared.
    """
    cheque = rng.randint(1000, 9999)
    reference = f"DEP-{rng.randint(10**7, 10**8 - 1)}"
    plant_txn(world, account, day, minor, "deposit", "income", merchant="Mobile cheque deposit", memo=f"Cheque no. {cheque}",
              reference=reference)
    hold_id = next_id(world, "holds")
    at = stamp(NOW.replace(year=day.year, month=day.month, day=day.day, hour=rng.randint(9, 15), minute=rng.randint(0, 59)))
    world.execute(
        "INSERT INTO holds (hold_id, account_id, amount_minor, currency, kind, reason, status, placed_at, placed_by) "
        "VALUES (?, ?, ?, ?, ?, ?, 'active', ?, ?)",
        (hold_id, account["account_id"], minor, account["currency"], kind,
         (reason or "Cheque deposit {reference} held for 5 business days").format(reference=reference), at, placed_by))
    plant_audit(world, at, placed_by, "place_hold", "hold", hold_id, amount_minor=minor, kind=kind)
    if released:
        lifted = stamp(NOW.replace(year=day.year, month=day.month, day=day.day, hour=9, minute=5) + timedelta(days=5))
        world.execute("UPDATE holds SET status = 'released', released_at = ?, released_by = ?, release_reason = 'Cheque cleared' "
                      "WHERE hold_id = ?", (lifted, placed_by, hold_id))
        plant_audit(world, lifted, placed_by, "release_hold", "hold", hold_id, reason="Cheque cleared")
    return {"hold_id": hold_id, "cheque": cheque, "reference": reference}


# -- payees and an earlier wire ------------------------------------------------------------------------------


def plant_internal_payee(world: World, rng: random.Random, customer_id: str, target: dict[str, Any]) -> str:
    """Register ``target`` (another customer's open checking account) as an internal payee of ``customer_id``, some
    time after both the customer joined and the target account was opened."""
    known = one(world, "SELECT max(c.customer_since, a.opened_on) AS d FROM customers c, accounts a WHERE c.customer_id = ? "
                       "AND a.account_id = ?", customer_id, target["account_id"])["d"]
    added = max(TODAY - timedelta(days=rng.randint(20, 900)), date.fromisoformat(known))
    payee_id = next_id(world, "payees")
    world.execute(
        "INSERT INTO payees (payee_id, customer_id, kind, name, bank_name, account_number, routing_code, internal_account_id, "
        "currency, verified, status, added_on) VALUES (?, ?, 'internal', ?, ?, ?, ?, ?, ?, 1, 'active', ?)",
        (payee_id, customer_id, target["name"], BANK_NAME, target["account_id"], BANK_BIC, target["account_id"], target["currency"],
         added.isoformat()))
    return payee_id


BUSINESS_PAYEES = ("Hudson Contractors LLC", "Bright Smile Dental", "Evergreen Tuition Services", "Summit Roofing Co",
                   "Lakeside Veterinary Clinic", "Meridian Tax Advisors", "Atlas Moving & Storage", "Crescent Law Group")
"""Names of businesses customers pay by wire (the generator's own)."""


def plant_wire_payees(world: World, rng: random.Random, customer: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """``count`` verified external USD payees of ``customer`` at US banks, with distinct names, added long ago."""
    names: list[str] = []
    while len(names) < count:
        name = rng.choice([*BUSINESS_PAYEES, f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"])
        if name not in names:
            names.append(name)
    payees = []
    for name in names:
        bank, routing = rng.choice(US_BANKS)
        payee_id = plant_payee(world, customer["customer_id"], name, currency="USD", verified=True,
                               added_on=TODAY - timedelta(days=rng.randint(40, 900)), bank=bank,
                               number_="".join(str(rng.randint(0, 9)) for _ in range(rng.randint(9, 12))), routing=routing)
        payees.append(one(world, "SELECT * FROM payees WHERE payee_id = ?", payee_id))
    return payees


def plant_earlier_wire(world: World, rng: random.Random, account: dict[str, Any], payee: dict[str, Any], minor: int) -> None:
    """A wire an analyst sent from ``account`` earlier today (completed, fee charged): it counts toward today's limit."""
    transfer_id = next_id(world, "transfers")
    reference = f"WIR-{transfer_id[4:]}"
    analyst = rng.choice(["STF-0010", "STF-0011", "STF-0012", "STF-0013"])
    at = stamp(NOW.replace(hour=rng.randint(9, 14), minute=rng.randint(0, 59)))
    world.execute(
        "INSERT INTO transfers (transfer_id, kind, from_account_id, payee_id, amount_minor, currency, fee_minor, status, channel, "
        "requested_by, requested_at, memo, reference) VALUES (?, 'external_wire', ?, ?, ?, ?, 2500, 'completed', 'back_office', "
        "?, ?, ?, ?)",
        (transfer_id, account["account_id"], payee["payee_id"], minor, account["currency"], analyst, at,
         rng.choice(["Invoice payment", "Rent", "Deposit", "Family support"]), reference))
    plant_txn(world, account, TODAY, -minor, "wire", "transfer", merchant=payee["name"], memo=f"Wire to {payee['name']}",
              reference=reference, transfer_id=transfer_id)
    plant_txn(world, account, TODAY, -2_500, "fee", "fees", memo="Outgoing wire fee", reference=reference, transfer_id=transfer_id)
    plant_audit(world, at, analyst, "send_wire", "transfer", transfer_id, amount_minor=minor, status="completed")


# -- amounts and candidates ----------------------------------------------------------------------------------


def some_currency(rng: random.Random) -> str:
    """A customer's home currency, weighted as the bank's book is (mostly US customers)."""
    return rng.choice(["USD", "USD", "USD", "EUR", "GBP"])


def around(rng: random.Random, minor: int, low_permille: int, high_permille: int) -> int:
    """``minor`` times a per-mille drawn from [low, high], plus a few odd cents (a balance that looks lived in)."""
    return minor * rng.randint(low_permille, high_permille) // 1_000 + rng.randint(0, 99)


def share(rng: random.Random, base: int, low_permille: int, high_permille: int, step: int, *, up: bool = False) -> int:
    """``base`` times a per-mille drawn from [low, high], rounded down (``up``: up) to a multiple of ``step``, at least ``step``.

    Why relative to a balance: an amount drawn relative to what the account can pay is the same kind of figure
    in the compliant and the refused case, so the prompt's amount alone does not tell them apart.
    """
    raw = base * rng.randint(low_permille, high_permille) // 1_000
    rounded = -(-raw // step) * step if up else raw // step * step
    return max(step, rounded)


def checking_and_savings(world: World, extra: str = "", *params: object) -> list[dict]:
    """Customers with exactly one open checking and one open savings account in the same currency.

    Rows carry ``chk``/``sav`` ids and balances, their available balances (``chk_avail``/``sav_avail``) and
    the checking account's internal-transfer limit; ``extra`` adds SQL conditions on them.
    """
    return rows(world, f"""
        SELECT * FROM (
          SELECT c.customer_id, chk.account_id AS chk, sav.account_id AS sav, chk.currency AS currency,
                 chk.balance_minor AS chk_balance, sav.balance_minor AS sav_balance,
                 (SELECT {AVAILABLE_SQL} FROM accounts a WHERE a.account_id = chk.account_id) AS chk_avail,
                 (SELECT {AVAILABLE_SQL} FROM accounts a WHERE a.account_id = sav.account_id) AS sav_avail,
                 (SELECT limit_minor FROM daily_limits l WHERE l.account_id = chk.account_id AND l.channel = 'internal_transfer') AS chk_limit,
                 (SELECT limit_minor FROM daily_limits l WHERE l.account_id = sav.account_id AND l.channel = 'internal_transfer') AS sav_limit
          FROM customers c
          JOIN accounts chk ON chk.customer_id = c.customer_id AND chk.type = 'checking' AND chk.status = 'open'
          JOIN accounts sav ON sav.customer_id = c.customer_id AND sav.type = 'savings' AND sav.status = 'open'
                           AND sav.currency = chk.currency
          WHERE (SELECT count(*) FROM accounts x WHERE x.customer_id = c.customer_id AND x.type IN ('checking', 'savings')
                 AND x.status != 'closed') = 2
        ) WHERE 1 = 1 {extra} ORDER BY customer_id""", *params)
