"""The toy help desk's fixture: three tables, a seeded generator and a frozen "today"."""

from __future__ import annotations

import random
from datetime import datetime, timezone

import sqlite_utils

from fixtures.fixture import Fixture

__all__ = ["fixture", "SCHEMA"]

SCHEMA = """
CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    passcode TEXT NOT NULL
);
CREATE TABLE accounts (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    kind TEXT NOT NULL CHECK (kind IN ('checking', 'savings')),
    currency TEXT NOT NULL,
    balance_minor INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'active'
);
CREATE TABLE transfers (
    id TEXT PRIMARY KEY,
    from_account INTEGER NOT NULL,
    to_account INTEGER NOT NULL,
    amount_minor INTEGER NOT NULL,
    memo TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX transfers_from ON transfers(from_account);
"""

_FIRST = ["Ada", "Brook", "Cyd", "Dana", "Eli", "Fern", "Gus", "Hana", "Ivo", "Jun"]
_LAST = ["Abbot", "Baker", "Chen", "Diaz", "Evans", "Fox", "Garcia", "Hill"]


def generate(db: sqlite_utils.Database, rng: random.Random, scale: int) -> None:
    """Fill 20×scale customers with a checking and a savings account each, and a few past transfers."""
    customers, accounts, transfers = [], [], []
    for n in range(1, 20 * scale + 1):
        name = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
        customers.append({"id": n, "name": name, "email": f"c{n}@example.test", "passcode": f"{rng.randint(0, 9999):04d}"})
        for offset, kind in enumerate(("checking", "savings")):
            accounts.append(
                {
                    "id": 2 * n - 1 + offset,
                    "customer_id": n,
                    "kind": kind,
                    "currency": "USD",
                    "balance_minor": rng.randint(50_00, 5_000_00),
                    "status": "active",
                }
            )
    for n in range(1, 30 * scale + 1):
        src, dst = rng.sample(range(1, len(accounts) + 1), 2)
        transfers.append(
            {
                "id": f"tr-h{n:05d}",
                "from_account": src,
                "to_account": dst,
                "amount_minor": rng.randint(1_00, 200_00),
                "memo": "history",
                "created_at": f"2025-05-{1 + n % 28:02d}T10:00:00+00:00",
            }
        )
    for name, rows in (("customers", customers), ("accounts", accounts), ("transfers", transfers)):
        db.table(name).insert_all(rows)


fixture = Fixture(
    name="grader-toy",
    schema=SCHEMA,
    generate=generate,
    today=datetime(2025, 6, 2, 9, 30, tzinfo=timezone.utc),
)
