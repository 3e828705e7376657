"""A wealth client for the trading templates: a brokerage account with its cash and holdings, the facts a
case turns on (the risk profiles an instrument suits, a lapsed KYC review, cash moved out, a compliance
freeze), and the price and account reads they need (``brokerage_accounts`` and ``last_close``: multistep too).

Why plant rather than pick: the generated world has a few dozen brokerage clients, so 20 seeds would draw the
same client again and again, and another seed's oracle (its customer and account ids) would then be right here
too. A client of this seed's own, with ids from a seed-dependent sequence, can only be reached by finding them.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

from envs.finance import catalog as cat
from envs.finance.rules import SUITABILITY
from envs.finance.simulation import ascii_fold
from envs.finance.tasks._common import (
    AVAILABLE_SQL,
    NOW,
    TODAY,
    need,
    one,
    plant_audit,
    plant_txn,
    reference,
    rows,
    stamp,
)
from fixtures.ids import IdSequences
from fixtures.world import World

__all__ = [
    "affordable_instruments",
    "brokerage_accounts",
    "client_currency",
    "lapse_kyc",
    "last_close",
    "plant_client",
    "plant_freeze",
    "plant_holding",
    "plant_other_holdings",
    "risk_profiles",
    "units_held",
    "withdraw_cash",
]

_FREEZE_REASONS = ("Suspected account takeover: compliance review in progress", "Court order 2026-CV-31877: assets restrained",
                   "Sanctions screening match under review")
"""Why a planted frozen brokerage account is frozen (set by a compliance officer)."""


def last_close(world: World, symbol: str) -> int:
    """The instrument's last close on or before the frozen date (the price orders fill at)."""
    return int(one(world, "SELECT close_minor FROM prices WHERE symbol = ? AND price_date <= '2026-03-31' "
                          "ORDER BY price_date DESC LIMIT 1", symbol)["close_minor"])


def brokerage_accounts(world: World, extra: str = "", *params: object) -> list[dict]:
    """Each customer's only open brokerage account, with the owner's risk profile and KYC and the cash available.

    ``extra`` adds conditions; inside its subqueries name the account ``b0.account_id``.
    """
    return rows(world, f"""
        SELECT * FROM (
          SELECT a.*, c.risk_profile, c.kyc_status, {AVAILABLE_SQL} AS avail FROM accounts a
          JOIN customers c ON c.customer_id = a.customer_id
          WHERE a.type = 'brokerage' AND a.status = 'open'
            AND (SELECT count(*) FROM accounts b WHERE b.customer_id = a.customer_id AND b.type = 'brokerage' AND b.status = 'open') = 1
        ) AS b0 WHERE 1 = 1 {extra} ORDER BY account_id""", *params)


def units_held(world: World, account_id: str, symbol: str) -> int:
    """Units of ``symbol`` the account holds now (0 when it holds none)."""
    found = rows(world, "SELECT quantity FROM positions WHERE account_id = ? AND symbol = ?", account_id, symbol)
    return int(found[0]["quantity"]) if found else 0


# -- planting the client --------------------------------------------------------------------------------

_CLIENT_IDS = IdSequences({"customers": ("customer_id", "CUS", 5), "accounts": ("account_id", "ACC", 6)})
"""Sequences of the rows a planted client needs (tools never create customers or accounts, so the environment's
own sequences leave them out). In a task world they start at a seed-dependent point (``World.id_salt``)."""


def _unused_name(world: World, rng: random.Random) -> tuple[str, str]:
    """A seeded first and last name that no customer's name contains yet, so the name finds the client alone."""
    for _ in range(200):
        first, last = rng.choice(cat.FIRST_NAMES), rng.choice(cat.LAST_NAMES)
        pattern = f"%{first} {last}%"
        if not world.query("SELECT 1 FROM customers WHERE first_name || ' ' || last_name LIKE ? OR last_name || ' ' || first_name LIKE ? "
                           "LIMIT 1", (pattern, pattern)):
            return first, last
    need(False, "no unused customer name left in the catalogue")
    raise AssertionError("unreachable")


def plant_client(world: World, rng: random.Random, *, currency: str, profile: str, cash: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A wealth client with one brokerage account holding ``cash``, every detail seeded; (customer, account) rows.

    Why plant rather than pick: the generated world has a few dozen brokerage clients, so 20 seeds would draw
    the same client again and again, and another seed's oracle (its customer and account ids) would then be
    right here too. A client of this seed's own, with ids from a seed-dependent sequence, can only be reached by
    finding them. The rows follow the generator's conventions (``envs/finance/generator.py``).
    """
    place = rng.choice([p for p in cat.PLACES if p.currency == currency])
    first, last = _unused_name(world, rng)
    local = f"{ascii_fold(first)}.{ascii_fold(last)}"
    email = f"{local}@{rng.choice(cat.EMAIL_DOMAINS)}"
    while world.query("SELECT 1 FROM customers WHERE email = ?", (email,)):
        email = f"{local}{rng.randint(2, 99)}@{rng.choice(cat.EMAIL_DOMAINS)}"
    reviewed = TODAY - timedelta(days=rng.randint(10, 600))
    since = min(reviewed, date(2006, 1, 1) + timedelta(days=rng.randint(0, 6_000)))
    digits = 2 if place.country == "US" else 3
    customer = {
        "customer_id": _CLIENT_IDS.next(world, "customers"), "first_name": first, "last_name": last, "email": email,
        "phone": place.phone_prefix + f"{rng.randint(0, 10**digits - 1):0{digits}d}",
        "date_of_birth": (date(1945, 1, 1) + timedelta(days=rng.randint(0, 16_000))).isoformat(),
        "address_line": f"{rng.randint(1, 2400)} {rng.choice(cat.STREETS)}", "city": place.city,
        "postcode": rng.choice(place.postcodes), "country": place.country, "segment": "wealth", "kyc_status": "verified",
        "kyc_reviewed_on": reviewed.isoformat(), "kyc_expires_on": (reviewed + timedelta(days=730)).isoformat(),
        "risk_profile": profile, "id_last4": f"{rng.randint(0, 9999):04d}", "customer_since": since.isoformat(),
        "relationship_manager": rng.choice(["STF-0020", "STF-0021"]),
    }
    world.execute(f"INSERT INTO customers ({', '.join(customer)}) VALUES ({', '.join('?' * len(customer))})", tuple(customer.values()))
    opened = min(TODAY - timedelta(days=30), since + timedelta(days=rng.randint(0, 3_000)))
    account = {"account_id": _CLIENT_IDS.next(world, "accounts"), "customer_id": customer["customer_id"], "type": "brokerage",
               "currency": currency, "status": "open", "balance_minor": 0, "overdraft_limit_minor": 0, "interest_rate_bps": 200,
               "nickname": None, "opened_on": opened.isoformat(), "closed_on": None, "status_reason": None}
    world.execute(f"INSERT INTO accounts ({', '.join(account)}) VALUES ({', '.join('?' * len(account))})", tuple(account.values()))
    for channel, limit in (("external_wire", 5_000_000), ("internal_transfer", 10_000_000)):
        world.execute("INSERT INTO daily_limits (account_id, channel, limit_minor) VALUES (?, ?, ?)", (account["account_id"], channel, limit))
    if opened <= cat.OPENING_DAY:
        plant_txn(world, account, cat.OPENING_DAY, cash, "opening", "opening_balance", memo="Balance brought forward",
                  reference=reference(rng, "REF"))
    else:
        plant_txn(world, account, opened, cash, "deposit", "income", merchant="Initial deposit", reference=reference(rng, "DEP"))
    return customer, {**account, "balance_minor": cash, "avail": cash}


def plant_holding(world: World, rng: random.Random, account_id: str, symbol: str, quantity: int) -> None:
    """Units of ``symbol`` held in the account, bought at a seeded average cost near today's price."""
    world.execute("INSERT INTO positions (account_id, symbol, quantity, avg_cost_minor) VALUES (?, ?, ?, ?)",
                  (account_id, symbol, quantity, max(1, last_close(world, symbol) * rng.randint(70, 115) // 100)))


def plant_other_holdings(world: World, rng: random.Random, account: dict[str, Any], *, besides: set[str],
                          levels: tuple[str, ...] = ("low", "medium", "high")) -> None:
    """Zero to two holdings of ``levels`` the client already has (so the positions list is not just the subject)."""
    others = [i["symbol"] for i in rows(world, "SELECT symbol, risk_level FROM instruments WHERE currency = ? ORDER BY symbol",
                                        account["currency"]) if i["symbol"] not in besides and i["risk_level"] in levels]
    for symbol in rng.sample(others, k=min(len(others), rng.randint(0, 2))):
        plant_holding(world, rng, account["account_id"], symbol, rng.randint(5, 300))


def client_currency(rng: random.Random) -> str:
    """Most wealth clients hold USD; some EUR or GBP (each has low- and medium-risk instruments)."""
    return rng.choices(["USD", "EUR", "GBP"], weights=[6, 2, 2])[0]


# -- setting the deciding fact --------------------------------------------------------------------------


def risk_profiles(level: str, *, suitable: bool) -> list[str]:
    """The risk profiles that may (``suitable``) or may not buy an instrument of ``level`` (policy §7)."""
    return [profile for profile, levels in SUITABILITY.items() if (level in levels) == suitable]


def lapse_kyc(world: World, rng: random.Random, customer_id: str) -> None:
    """Setup: the customer's KYC review expired some days ago (buying is barred until it is renewed, policy §3)."""
    expired = TODAY - timedelta(days=rng.randint(2, 150))
    reviewed = (expired - timedelta(days=730)).isoformat()  # a review is valid for two years (as the generator's)
    world.execute("UPDATE customers SET kyc_status = 'expired', kyc_reviewed_on = ?, kyc_expires_on = ?, "
                  "customer_since = min(customer_since, ?) WHERE customer_id = ?", (reviewed, expired.isoformat(), reviewed, customer_id))


def withdraw_cash(world: World, rng: random.Random, account: dict[str, Any], leave: int) -> None:
    """Setup: cash withdrawn to the customer's linked bank last week, leaving ``leave`` available to trade."""
    taken = account["avail"] - leave
    need(taken > 0, f"account {account['account_id']} already has no more than {leave} available")
    plant_txn(world, account, TODAY - timedelta(days=rng.randint(1, 6)), -taken, "transfer", "transfer",
              memo="ACH withdrawal to linked bank account", reference=reference(rng, "ACH"))


def plant_freeze(world: World, rng: random.Random, account_id: str) -> None:
    """Setup: compliance froze the account last week (no money may move in or out, policy §9)."""
    reason = rng.choice(_FREEZE_REASONS)
    world.execute("UPDATE accounts SET status = 'frozen', status_reason = ? WHERE account_id = ?", (reason, account_id))
    plant_audit(world, stamp(NOW - timedelta(days=rng.randint(1, 8), hours=rng.randint(1, 6))), rng.choice(["STF-0005", "STF-0006"]),
                "freeze_account", "account", account_id, reason=reason)


def affordable_instruments(world: World, currency: str, budget: int, *, risky_only: bool) -> list[dict[str, Any]]:
    """Instruments in ``currency`` of which two units cost at most ``budget`` (risky only: medium or high risk)."""
    found = rows(world, "SELECT symbol, risk_level FROM instruments WHERE currency = ? ORDER BY symbol", currency)
    return [{**i, "price": last_close(world, i["symbol"])} for i in found
            if last_close(world, i["symbol"]) * 2 <= budget and not (risky_only and i["risk_level"] == "low")]
