"""The toy bank's schema and seeded generator."""

from __future__ import annotations

import random
from datetime import datetime, timezone

import sqlite_utils

from fixtures.fixture import Fixture

__all__ = ["fixture", "SCHEMA"]

SCHEMA = """
CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    currency TEXT NOT NULL,
    balance_minor INTEGER NOT NULL
);
CREATE TABLE transfers (
    id TEXT PRIMARY KEY,
    from_account TEXT NOT NULL REFERENCES accounts(id),
    to_account TEXT NOT NULL REFERENCES accounts(id),
    amount_minor INTEGER NOT NULL,
    currency TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE answers (
    id INTEGER PRIMARY KEY,
    text TEXT NOT NULL
);
"""

_OWNERS = ["ada", "bob", "cyd", "dee", "eve", "fay", "gus", "hal"]


def generate(db: sqlite_utils.Database, rng: random.Random, scale: int) -> None:
    """Five accounts per unit of scale, USD except every fifth (EUR), with seeded balances."""
    rows = []
    for n in range(1, 5 * scale + 1):
        rows.append(
            {
                "id": f"acc-{n:03d}",
                "owner": _OWNERS[(n - 1) % len(_OWNERS)],
                "currency": "EUR" if n % 5 == 0 else "USD",
                "balance_minor": rng.randint(1_000, 500_000),
            }
        )
    db["accounts"].insert_all(rows)


fixture = Fixture(
    name="toy",
    schema=SCHEMA,
    generate=generate,
    today=datetime(2025, 3, 14, 9, 30, tzinfo=timezone.utc),
)
