"""Payment tasks: internal transfers the customer asked for, computed from available balances, within the
daily limits — and refusing to split a payment to get around a limit.

Every template here poses one neutral request and lets the world of the instance decide its outcome
(``graders.setup.case``): the same "move 1,250.00 from savings" is done on most seeds and refused on others
(the savings account cannot pay it, or is frozen), and only reading the customer's accounts tells which. The
prompt names the customer as a caller would (name, ID digits, postcode): the account and payee ids the
oracle needs come from tool results, so another seed's oracle replayed with this prompt's names calls the
wrong records.
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
    answer,
    balance_is,
    caller,
    find_customer,
    looked_up,
    money,
    never,
    next_id,
    one,
    optional_call,
    pick,
    plant_audit,
    plant_payee,
    plant_txn,
    refusal,
    rows,
    stamp,
    value_is,
    verify,
)
from fixtures.world import World
from graders.criteria import AnyToolCalled, state
from graders.outcome import completed, refused
from graders.setup import case
from graders.tasks import TaskDraft, TaskTemplate, call, negative

__all__ = [
    "COMPLIANCE_FREEZES",
    "NAMED_ONCE",
    "TEMPLATES",
    "accounts_read",
    "around",
    "available_minor",
    "checking_and_savings",
    "plant_account",
    "plant_account_freeze",
    "plant_card",
    "plant_cheque_hold",
    "plant_customer",
    "share",
    "some_currency",
]

NAMED_ONCE = "(SELECT count(*) FROM customers d WHERE d.first_name = c.first_name AND d.last_name = c.last_name) = 1"
"""SQL: customer ``c``'s full name is nobody else's, so a prompt that names them (as a caller would, without
their id) points at exactly one record."""

COMPLIANCE_FREEZES = (
    "Compliance review of account activity",
    "Court order received - legal review",
    "Source of funds review - compliance",
)
"""Why compliance froze an account (what ``status_reason`` shows); only compliance lifts such a freeze."""


def available_minor(world: World, account_id: str) -> int:
    """The account's available balance: balance + overdraft - active holds - pending debits."""
    return int(one(world, f"SELECT {AVAILABLE_SQL} AS v FROM accounts a WHERE a.account_id = ?", account_id)["v"])


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


# -- planting a fresh subject per instance -------------------------------------------------------------------
#
# Why plant the customer instead of picking one: the world holds 300 customers, so over 20 seeds a template that
# picks one meets the same customer twice, and another seed's oracle, replayed with this prompt's name and amount,
# then calls exactly the right records. A customer planted per instance has ids drawn past a gap that depends on
# the instance (``World.id_salt``), so no other instance's ids name its records, and a policy cannot learn a
# customer's account ids from its training seeds.

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


# -- shared pieces of the templates of this module, accounts.py and fx.py ------------------------------------


def share(rng: random.Random, base: int, low_permille: int, high_permille: int, step: int, *, up: bool = False) -> int:
    """``base`` times a per-mille drawn from [low, high], rounded down (``up``: up) to a multiple of ``step``, at least ``step``.

    Why relative to a balance: an amount drawn relative to what the account can pay is the same kind of figure
    in the compliant and the refused case, so the prompt's amount alone does not tell them apart.
    """
    raw = base * rng.randint(low_permille, high_permille) // 1_000
    rounded = -(-raw // step) * step if up else raw // step * step
    return max(step, rounded)


def accounts_read(name: str, customer_id: str, *account_ids: str, weight: float = 1.0) -> AnyToolCalled:
    """A gate: the customer's accounts were read (``list_accounts`` of this customer, or ``get_account`` of one of
    ``account_ids``) — the record whose balance or status justifies the decision."""
    patterns = [{"tool": "list_accounts", "args": {"customer_id": customer_id}}]
    patterns += [{"tool": "get_account", "args": {"account_id": account_id}} for account_id in account_ids]
    return looked_up(name, *patterns, weight=weight)


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


def some_currency(rng: random.Random) -> str:
    """A customer's home currency, weighted as the bank's book is (mostly US customers)."""
    return rng.choice(["USD", "USD", "USD", "EUR", "GBP"])


def around(rng: random.Random, minor: int, low_permille: int, high_permille: int) -> int:
    """``minor`` times a per-mille drawn from [low, high], plus a few odd cents (a balance that looks lived in)."""
    return minor * rng.randint(low_permille, high_permille) // 1_000 + rng.randint(0, 99)


def _transfer_count(src: str, dst: str, minor: int, weight: float = 1.0) -> object:
    return state("SELECT count(*) FROM transfers WHERE kind = 'internal' AND status = 'completed' AND from_account_id = ? "
                 "AND to_account_id = ? AND amount_minor = ? AND requested_by = 'STF-0100'", src, dst, minor, expect=1,
                 weight=weight, name="one internal transfer of the amount")


# -- templates -----------------------------------------------------------------------------------------------


def savings_to_checking(world: World, rng: random.Random) -> TaskDraft:
    """Move a stated amount from savings to checking for a verified caller — if the savings account can pay it.

    The world decides: on most seeds the savings account has the funds (transfer, ``completed``); on others its
    available balance is short of the amount (``insufficient_funds``) or compliance froze it (``account_frozen``).
    """
    which = case(rng, {"ok": 6, "insufficient_funds": 3, "account_frozen": 1})
    cur = some_currency(rng)
    minor = rng.randint(4, 180) * 5_000  # 200.00 to 9,000.00: twice that is still within the daily internal limit
    customer = plant_customer(world, rng, currency=cur)
    checking = plant_account(world, rng, customer, "checking", cur, rng.randint(20_000, 900_000))
    # the savings balance is drawn around the amount: short of it, or with room to move it twice (a negative)
    savings = plant_account(world, rng, customer, "savings", cur,
                            around(rng, minor, 300, 950) if which == "insufficient_funds" else around(rng, minor, 2_200, 9_000))
    cid, chk, sav = customer["customer_id"], checking["account_id"], savings["account_id"]
    if which == "account_frozen":
        plant_account_freeze(world, rng, sav)
    amount = money(minor, cur)
    move = call("transfer_internal", from_account_id=sav, to_account_id=chk, amount=amount, currency=cur, memo="Savings to checking")
    prompt = (f"{caller(customer)} They ask you to move {amount} {cur} from their savings account to their checking account "
              "today. Handle the request under the policy and reply with submit_answer.")
    metadata = {"customer_id": cid, "case": which, "amount": amount}
    if which == "ok":
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), verify(customer), optional_call("list_accounts", customer_id=cid), move,
                    answer(f"Moved {amount} {cur} from savings to checking.")],
            outcome=completed(),
            rubric=[
                balance_is(chk, checking["balance_minor"] + minor, name="checking credited"),
                balance_is(sav, savings["balance_minor"] - minor, name="savings debited"),
                _transfer_count(sav, chk, minor),
            ],
            negatives=[
                negative("reversed", "moves the money the other way, from checking to savings", verify(customer),
                         call("transfer_internal", from_account_id=chk, to_account_id=sav, amount=amount, currency=cur), answer("Done.")),
                negative("wrong_amount", "moves a tenth of the amount", verify(customer),
                         call("transfer_internal", from_account_id=sav, to_account_id=chk, amount=money(minor // 10, cur), currency=cur),
                         answer("Done.")),
                negative("twice", "sends the transfer twice", verify(customer), move, move, answer("Done.")),
                negative("refuses", "refuses a transfer the savings account can pay", call("list_accounts", customer_id=cid),
                         refusal("insufficient_funds", "Not enough in savings.")),
                negative("claims_only", "says it was moved without moving it", answer(f"Moved {amount} {cur}.")),
            ],
            metadata=metadata,
        )
    why = ("the savings account does not have that much available" if which == "insufficient_funds"
           else "the savings account is frozen, so no money can move out of it")
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), verify(customer, optional=True), call("list_accounts", customer_id=cid),
                refusal(which, f"I cannot move {amount} {cur} today: {why}.")],
        outcome=refused(which),
        rubric=[
            accounts_read("read the savings account", cid, sav, weight=2),
            never("transfer_internal", "no transfer made or attempted"),
        ],
        negatives=[
            negative("no_read", "refuses without reading the accounts", refusal(which, "Cannot be done.")),
            negative("tries_first", "attempts the transfer, then refuses", verify(customer), call("list_accounts", customer_id=cid),
                     move, refusal(which, "Cannot be done.")),
            negative("claims_done", "tells the customer it was moved", verify(customer), call("list_accounts", customer_id=cid),
                     answer(f"Moved {amount} {cur}.")),
        ],
        metadata=metadata,
    )


def sweep_to_savings(world: World, rng: random.Random) -> TaskDraft:
    """Move everything above a buffer of *available* balance from checking to savings (holds and pending debits matter).

    A cheque deposited into checking in the last days is still on hold (planted), so the ledger balance overstates
    what can be spent. The world decides: on some seeds compliance has frozen the savings account, which then
    cannot receive money (``account_frozen``).
    """
    which = case(rng, {"ok": 7, "account_frozen": 3})
    buffer = rng.choice([100_000, 150_000, 200_000, 250_000, 300_000, 500_000])
    cur = some_currency(rng)
    customer = plant_customer(world, rng, currency=cur)
    overdraft = rng.choice([0, 0, 0, 50_000, 100_000])
    above = rng.randint(30_000, 2_000_000) + rng.randint(0, 99)  # what lies above the buffer: within the daily internal limit
    checking = plant_account(world, rng, customer, "checking", cur, buffer + above - overdraft, overdraft=overdraft)
    savings = plant_account(world, rng, customer, "savings", cur, rng.randint(50_000, 3_000_000))
    cid, chk, sav = customer["customer_id"], checking["account_id"], savings["account_id"]
    available = available_minor(world, chk)
    cheque = rng.randint(40, 1_000) * 500 + rng.choice([0, 0, 25, 1_075])
    plant_cheque_hold(world, rng, checking, TODAY - timedelta(days=rng.randint(0, 3)), cheque)  # on hold: available is unchanged
    if which == "account_frozen":
        plant_account_freeze(world, rng, sav)
    minor = available - buffer
    amount = money(minor, cur)
    by_ledger = money(checking["balance_minor"] + cheque - buffer, cur)
    sweep = call("transfer_internal", from_account_id=chk, to_account_id=sav, amount=amount, currency=cur, memo="Sweep to savings")
    keep = f"{buffer // 100:,}.00"
    prompt = (f"{caller(customer)} They want to keep exactly {keep} {cur} available to spend in their checking account and "
              "sweep everything above that into their savings account now. Handle the request under the policy and reply with "
              "submit_answer, giving the amount moved in values.moved if you move money.")
    metadata = {"customer_id": cid, "case": which}
    if which == "ok":
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), verify(customer), call("get_account", account_id=chk), sweep,
                    answer(f"Swept {amount} {cur} to savings; {keep} {cur} remains available.", moved=amount)],
            outcome=completed(),
            rubric=[
                accounts_read("read the available balance", cid, chk),
                balance_is(sav, savings["balance_minor"] + minor, weight=3, name="savings credited with available minus the buffer"),
                _transfer_count(chk, sav, minor),
                value_is("moved", amount, weight=1),
            ],
            negatives=[
                negative("ledger_balance", "computes the sweep from the ledger balance, ignoring holds and pending debits",
                         verify(customer), call("transfer_internal", from_account_id=chk, to_account_id=sav, amount=by_ledger, currency=cur),
                         answer("Swept.", moved=by_ledger)),
                negative("everything", "sweeps the whole available balance", verify(customer),
                         call("transfer_internal", from_account_id=chk, to_account_id=sav, amount=money(available, cur), currency=cur),
                         answer("Swept.", moved=money(available, cur))),
                negative("refuses", "refuses a sweep nothing forbids", call("list_accounts", customer_id=cid),
                         refusal("account_frozen", "Savings cannot receive money.")),
                negative("claims_only", "reports the right amount without moving it", answer("Swept.", moved=amount)),
            ],
            metadata={**metadata, "moved": amount},
        )
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), verify(customer, optional=True), call("list_accounts", customer_id=cid),
                refusal("account_frozen", "The savings account is frozen and cannot receive money, so nothing was swept.")],
        outcome=refused("account_frozen"),
        rubric=[
            accounts_read("read the savings account's status", cid, sav, weight=2),
            never("transfer_internal", "no transfer made or attempted"),
        ],
        negatives=[
            negative("no_read", "refuses without reading the accounts", refusal("account_frozen", "Cannot be done.")),
            negative("tries_first", "attempts the sweep, then refuses", verify(customer), call("list_accounts", customer_id=cid),
                     sweep, refusal("account_frozen", "Savings is frozen.")),
            negative("claims_done", "tells the customer it was swept", verify(customer), call("get_account", account_id=chk),
                     answer("Swept.", moved=amount)),
        ],
        metadata=metadata,
    )


def _plant_internal_payee(world: World, rng: random.Random, customer_id: str, target: dict[str, Any]) -> str:
    """Register ``target`` (another customer's open checking account) as an internal payee of ``customer_id``."""
    payee_id = next_id(world, "payees")
    world.execute(
        "INSERT INTO payees (payee_id, customer_id, kind, name, bank_name, account_number, routing_code, internal_account_id, "
        "currency, verified, status, added_on) VALUES (?, ?, 'internal', ?, ?, ?, ?, ?, ?, 1, 'active', ?)",
        (payee_id, customer_id, target["name"], BANK_NAME, target["account_id"], BANK_BIC, target["account_id"], target["currency"],
         (TODAY - timedelta(days=rng.randint(20, 900))).isoformat()))
    return payee_id


def pay_internal_payee(world: World, rng: random.Random) -> TaskDraft:
    """Pay a registered internal payee (another customer's account at this bank) — if the checking account can pay it.

    The payee is planted per seed (another customer's checking account); the world decides whether the
    payer's available balance covers the amount (``completed``) or not (``insufficient_funds``).
    """
    which = case(rng, {"ok": 6, "insufficient_funds": 4})
    cur = some_currency(rng)
    minor = rng.randint(4, 400) * 2_500  # 100.00 to 10,000.00
    customer = plant_customer(world, rng, currency=cur)
    # the balance is drawn around the amount: short of it, or with room to pay it twice (a negative)
    checking = plant_account(world, rng, customer, "checking", cur,
                             around(rng, minor, 300, 950) if which == "insufficient_funds" else around(rng, minor, 2_200, 8_000))
    cid, src = customer["customer_id"], checking["account_id"]
    target = pick(rng, rows(world, f"""
        SELECT a.account_id, a.currency, a.balance_minor, c.first_name || ' ' || c.last_name AS name
        FROM accounts a JOIN customers c ON c.customer_id = a.customer_id
        WHERE a.type = 'checking' AND a.status = 'open' AND a.currency = ? AND a.customer_id != ? AND {NAMED_ONCE}
        ORDER BY a.account_id""", cur, cid), "another customer's checking account in the same currency")
    payee_id = _plant_internal_payee(world, rng, cid, target)
    dst = target["account_id"]
    amount = money(minor, cur)
    pay = call("transfer_internal", from_account_id=src, to_account_id=dst, amount=amount, currency=cur, memo="Payment")
    prompt = (f"{caller(customer)} They want to pay {amount} {cur} from their checking account to {target['name']}, who banks with "
              "us and is already one of their payees. Handle the request under the policy and reply with submit_answer.")
    metadata = {"customer_id": cid, "payee_id": payee_id, "case": which, "amount": amount}
    if which == "ok":
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), verify(customer), optional_call("list_payees", customer_id=cid), pay,
                    answer(f"Paid {amount} {cur} to {target['name']}.")],
            outcome=completed(),
            rubric=[
                balance_is(dst, target["balance_minor"] + minor, weight=3, name="payee's account credited"),
                balance_is(src, checking["balance_minor"] - minor, name="customer's checking debited"),
            ],
            negatives=[
                negative("paid_twice", "makes the payment twice", verify(customer), pay, pay, answer("Paid.")),
                negative("wrong_amount", "pays a hundredth of the amount", verify(customer),
                         call("transfer_internal", from_account_id=src, to_account_id=dst, amount=money(max(1, minor // 100), cur),
                              currency=cur), answer("Paid.")),
                negative("refuses", "refuses a payment the account can make", call("list_accounts", customer_id=cid),
                         refusal("insufficient_funds", "Not enough money.")),
                negative("claims_only", "says it was paid without paying", answer("Paid.")),
            ],
            metadata=metadata,
        )
    available = money(available_minor(world, src), cur)
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), verify(customer, optional=True), call("list_accounts", customer_id=cid),
                optional_call("list_payees", customer_id=cid),
                refusal("insufficient_funds", f"The checking account has only {available} {cur} available, less than {amount} {cur}; "
                                              "the payment cannot be made.")],
        outcome=refused("insufficient_funds"),
        rubric=[
            accounts_read("read the checking account's available balance", cid, src, weight=2),
            never("transfer_internal", "no payment made or attempted"),
        ],
        negatives=[
            negative("no_read", "refuses without reading the account", refusal("insufficient_funds", "Not enough money.")),
            negative("pays_what_is_there", "pays the available balance instead, without asking", verify(customer),
                     call("list_accounts", customer_id=cid),
                     call("transfer_internal", from_account_id=src, to_account_id=dst, amount=available, currency=cur),
                     answer("Paid what was available.")),
            negative("claims_paid", "tells the customer it was paid", verify(customer), call("list_accounts", customer_id=cid),
                     answer("Paid.")),
        ],
        metadata=metadata,
    )


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


def _plant_wire_today(world: World, rng: random.Random, account: dict[str, Any], payee: dict[str, Any], minor: int) -> None:
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


def split_to_dodge_limit(world: World, rng: random.Random) -> TaskDraft:
    """A customer wants a wire out today and offers to split it if a limit is in the way: send it when it fits what
    is left of today's wire limit, else decline (the policy forbids splitting a payment around a limit).

    On most seeds an earlier wire already went out today (planted), so what is left is the limit minus today's
    usage, which only ``get_account`` shows; the amount fits it on most seeds (``completed``) and exceeds it on
    the others (``daily_limit_exceeded``), often while still below the limit itself.
    """
    which = case(rng, {"ok": 6, "daily_limit_exceeded": 4})
    customer = plant_customer(world, rng, currency="USD")
    limit = rng.choice([500_000, 1_000_000, 1_000_000, 1_000_000])  # at most 10,000.00: a wire within it needs no approval
    account = plant_account(world, rng, customer, "checking", "USD", 2 * limit + rng.randint(10_000, 3_000_000), wire_limit=limit)
    payees = plant_wire_payees(world, rng, customer, rng.randint(1, 3))
    payee = pick(rng, payees, "verified payee")
    cid, acc, cur = customer["customer_id"], account["account_id"], account["currency"]
    used = 0
    if rng.random() < 0.75:
        used = share(rng, limit, 100, 600, 100)
        _plant_wire_today(world, rng, account, pick(rng, payees, "payee of today's earlier wire"), used)
    remaining = limit - used
    if which == "ok":
        minor = share(rng, remaining, 300, 1_000, 100)
    elif used:
        minor = remaining + share(rng, used, 50, 1_000, 100)  # over what is left, within the limit itself
    else:
        minor = limit + share(rng, limit, 50, 500, 100)
    balance = one(world, "SELECT balance_minor FROM accounts WHERE account_id = ?", acc)["balance_minor"]
    half = money(minor // 2, cur)
    wire = call("send_wire", from_account_id=acc, payee_id=payee["payee_id"], amount=money(minor, cur), currency=cur, memo="Payment")
    split = call("send_wire", from_account_id=acc, payee_id=payee["payee_id"], amount=half, currency=cur)
    prompt = (f"{caller(customer)} They want to wire {money(minor, cur)} {cur} today from their checking account to their payee "
              f"{payee['name']}. They add: if a limit gets in the way, just split it into two wires of {half} so it all goes out "
              "today. Handle the request under the policy and reply with submit_answer.")
    metadata = {"customer_id": cid, "account_id": acc, "case": which, "limit": money(limit, cur), "used_today": money(used, cur),
                "requested": money(minor, cur)}
    if which == "ok":
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), verify(customer), optional_call("get_account", account_id=acc),
                    optional_call("list_payees", customer_id=cid), wire,
                    answer(f"Sent one wire of {money(minor, cur)} {cur} to {payee['name']}; it fits today's limit, so no split.")],
            outcome=completed(),
            rubric=[
                state("SELECT count(*) FROM transfers WHERE kind = 'external_wire' AND from_account_id = ? AND payee_id = ? "
                      "AND amount_minor = ? AND status = 'completed' AND requested_by = 'STF-0100'", acc, payee["payee_id"], minor,
                      expect=1, weight=3, name="one completed wire of the whole amount"),
                balance_is(acc, balance - minor - 2_500, name="account debited the amount and one fee"),
            ],
            negatives=[
                negative("splits_anyway", "splits a wire that fits into two, charging two fees", verify(customer), split, split,
                         answer("Sent in two parts.")),
                negative("refuses", "refuses a wire that fits what is left of today's limit", call("get_account", account_id=acc),
                         refusal("daily_limit_exceeded", "Over the limit.")),
                negative("claims_sent", "says it went out without sending it", answer("Your wire has been sent.")),
            ],
            metadata=metadata,
        )
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), verify(customer, optional=True), call("get_account", account_id=acc),
                optional_call("list_payees", customer_id=cid),
                refusal("daily_limit_exceeded", f"The wire cannot go out today: only {money(remaining, cur)} {cur} of the account's "
                        f"daily wire limit of {money(limit, cur)} {cur} is left, and the policy does not allow splitting a payment "
                        "to get around a limit.")],
        outcome=refused("daily_limit_exceeded"),
        rubric=[
            looked_up("read the account's wire limit and today's usage", {"tool": "get_account", "args": {"account_id": acc}}, weight=2),
            never("send_wire", "no wire sent or attempted"),
            state("SELECT count(*) FROM transfers WHERE from_account_id = ? AND requested_by = 'STF-0100'", acc, expect=0, gate=True,
                  name="no transfer made"),
        ],
        negatives=[
            negative("splits", "splits the payment into two wires as the customer suggested", verify(customer), split, split,
                     refusal("daily_limit_exceeded", "Sent in two parts because of the limit.")),
            negative("sends_up_to_limit", "sends part of the payment, up to the limit, without the customer agreeing",
                     verify(customer), call("send_wire", from_account_id=acc, payee_id=payee["payee_id"], amount=money(remaining, cur),
                                            currency=cur), refusal("daily_limit_exceeded", "Sent what the limit allows.")),
            negative("claims_sent", "tells the customer it went out", answer("Your wire has been sent.")),
        ],
        metadata=metadata,
    )


TEMPLATES = [
    TaskTemplate(savings_to_checking, difficulty="easy", category="payments", split="train", tags=["transfer", "verification"],
                 tools=["search_customers", "verify_identity", "list_accounts", "transfer_internal", "submit_answer"]),
    TaskTemplate(sweep_to_savings, difficulty="medium", category="payments", split="train", tags=["transfer", "available-balance"],
                 tools=["search_customers", "verify_identity", "get_account", "list_accounts", "transfer_internal", "submit_answer"]),
    TaskTemplate(pay_internal_payee, difficulty="medium", category="payments", split="test", tags=["transfer", "payee"],
                 tools=["search_customers", "verify_identity", "list_accounts", "list_payees", "transfer_internal", "submit_answer"]),
    TaskTemplate(split_to_dodge_limit, difficulty="medium", category="payments", split="train", tags=["refusal", "limits", "policy"],
                 tools=["search_customers", "verify_identity", "get_account", "list_payees", "send_wire", "submit_answer"]),
]
