"""The support fixture's generator: five months of an online retailer's life, deterministic from the rng.

Reference data (teams, staff, the range, plans, promotions, help-centre articles) comes from the catalog;
customers (some with a second account), their orders, shipments and tracking, returns and refunds, store
credit and gift cards (``commerce.py``), subscriptions and invoices, and the help desk's tickets, reviews,
fraud signals and audit trail (``helpdesk.py``) are drawn with the ``rng`` only, against the catalog's fixed
clock. Rows are collected in memory with references to each other, then given time-ordered ids and written.
"""

from __future__ import annotations

import json
import random
from datetime import date, timedelta
from typing import Any

import sqlite_utils

from envs.support import catalog as cat
from envs.support.catalog import TODAY

__all__ = ["generate", "CUSTOMERS_PER_SCALE", "Builder", "Row", "stamp"]

CUSTOMERS_PER_SCALE = 800
Row = dict[str, Any]

TABLES = (
    "teams", "staff", "customers", "addresses", "products", "variants", "reviews", "promotions", "coupons", "orders",
    "order_lines", "payments", "shipments", "shipment_items", "tracking_events", "attachments", "returns", "inspections",
    "refunds", "credit_ledger", "gift_cards", "plans", "subscriptions", "invoices", "tickets", "ticket_messages",
    "ticket_tags", "escalations", "fraud_signals", "verifications", "kb_articles", "audit_log",
)
"""Tables in insertion order (parents before children)."""

_ORDERING: dict[str, tuple[str, str, int, Any]] = {
    "orders": ("order_id", "ORD", 6, lambda r: (r["placed_at"], r["customer_id"])),
    "order_lines": ("line_id", "LIN", 7, lambda r: (r["order_id"]["placed_at"], r["_pos"])),
    "payments": ("payment_id", "PAY", 6, lambda r: (r["captured_at"], r["_order"])),
    "shipments": ("shipment_id", "SHP", 6, lambda r: (r["shipped_on"], r["order_id"]["placed_at"], r["_pos"])),
    "tracking_events": ("event_id", "TRK", 7, lambda r: (r["at"], r["_order"])),
    "attachments": ("attachment_id", "ATT", 5, lambda r: (r["uploaded_at"], r["customer_id"])),
    "returns": ("rma_id", "RMA", 5, lambda r: (r["created_at"], r["_order"])),
    "inspections": ("inspection_id", "INS", 5, lambda r: (r["inspected_at"], r["_order"])),
    "refunds": ("refund_id", "RFD", 6, lambda r: (r["issued_at"], r["_order"])),
    "credit_ledger": ("entry_id", "SCL", 6, lambda r: (r["created_at"], r["_order"])),
    "subscriptions": ("subscription_id", "SUB", 5, lambda r: (r["started_on"], r["customer_id"])),
    "invoices": ("invoice_id", "INV", 6, lambda r: (r["issued_at"], r["_order"])),
    "tickets": ("ticket_id", "TCK", 5, lambda r: (r["created_at"], r["customer_id"])),
    "ticket_messages": ("message_id", "MSG", 6, lambda r: (r["at"], r["_order"])),
    "escalations": ("escalation_id", "ESC", 5, lambda r: (r["created_at"], r["_order"])),
    "fraud_signals": ("signal_id", "FRS", 5, lambda r: (r["created_at"], r["customer_id"])),
    "verifications": ("verification_id", "VER", 6, lambda r: (r["verified_at"], r["customer_id"])),
    "reviews": ("review_id", "REV", 5, lambda r: (r["created_on"], r["_order"])),
    "audit_log": ("audit_id", "AUD", 7, lambda r: (r["at"], r["_order"])),
}
"""Tables whose ids follow time: (id column, prefix, width, sort key)."""


def stamp(day: date, hour: int = 12, minute: int = 0) -> str:
    """An instant as the tables store it (UTC)."""
    return f"{day.isoformat()}T{hour:02d}:{minute:02d}:00+00:00"


class Builder:
    """Accumulates every table's rows in memory, then assigns time-ordered ids and writes them."""

    def __init__(self, rng: random.Random, scale: int) -> None:
        self.rng = rng
        self.scale = scale
        self.rows: dict[str, list[Row]] = {t: [] for t in TABLES}
        self.emails: set[str] = set()
        self.variants: list[Row] = []
        self.product: dict[str, Row] = {}
        self.customer_orders: dict[str, list[Row]] = {}
        self.addresses: dict[str, list[Row]] = {}

    def add(self, table: str, row: Row) -> Row:
        """Append ``row`` to ``table`` (with its creation order, for stable id assignment)."""
        row["_order"] = len(self.rows[table])
        self.rows[table].append(row)
        return row

    def audit(self, at: str, actor: str, action: str, entity_type: str, entity: Row | str, **details: Any) -> None:
        """A staff action in the audit trail (``entity`` may be a row whose id is assigned later)."""
        self.add("audit_log", {"audit_id": None, "at": at, "actor": actor, "action": action, "entity_type": entity_type,
                               "entity_id": entity, "details": json.dumps(details, sort_keys=True)})

    def agent(self) -> str:
        """A frontline agent of the history (never the agent the episode plays)."""
        return self.rng.choice(["STF-0010", "STF-0011", "STF-0012", "STF-0013"])

    # -- reference data ----------------------------------------------------------------------------

    def reference(self) -> None:
        for team_id, name, handles in cat.TEAMS:
            self.add("teams", {"team_id": team_id, "name": name, "handles": handles})
        for staff_id, name, role, team in cat.STAFF:
            self.add("staff", {"staff_id": staff_id, "name": name, "role": role, "team_id": team})
        for plan_id, name, tier, price in cat.PLANS:
            self.add("plans", {"plan_id": plan_id, "name": name, "family": " ".join(name.split()[:2]), "tier": tier,
                               "price_minor": price})
        for promo_id, name, kind, value, minimum, category, starts, ends, code in cat.PROMOTIONS:
            self.add("promotions", {"promo_id": promo_id, "name": name, "kind": kind, "value": value,
                                    "min_subtotal_minor": minimum, "category": category, "starts_on": starts, "ends_on": ends})
            self.add("coupons", {"code": code, "promo_id": promo_id, "once_per_customer": int(code == "WELCOME10")})
        for number, (article_id, category, title, body) in enumerate(cat.ARTICLES, start=1):
            self.add("kb_articles", {"article_id": article_id, "doc": number, "category": category, "title": title, "body": body})
        number = 0
        for index, product in enumerate(cat.PRODUCTS, start=1):
            row = self.add("products", {"product_id": f"PRD-{index:04d}", "name": product.name, "brand": product.brand,
                                        "category": product.category})
            self.product[row["product_id"]] = row
            for option in product.options:
                number += 1
                stock = 0 if self.rng.random() < 0.15 else self.rng.randint(3, 120)
                variant = self.add("variants", {"variant_id": f"VAR-{number:05d}", "product_id": row["product_id"],
                                                "option": option, "price_minor": product.price, "stock": stock,
                                                "_category": product.category, "_name": product.name})
                self.variants.append(variant)

    # -- customers ---------------------------------------------------------------------------------

    def email_for(self, first: str, last: str) -> str:
        local = "".join(ch for ch in f"{first}.{last}".lower() if ch.isascii() and (ch.isalnum() or ch == "."))
        email = f"{local}@{self.rng.choice(cat.EMAIL_DOMAINS)}"
        while email in self.emails:
            email = f"{local}{self.rng.randint(2, 99)}@{self.rng.choice(cat.EMAIL_DOMAINS)}"
        self.emails.add(email)
        return email

    def new_customer(self, number: int, *, like: Row | None = None) -> Row:
        rng = self.rng
        first = like["first_name"] if like else rng.choice(cat.FIRST_NAMES)
        last = like["last_name"] if like else rng.choice(cat.LAST_NAMES)
        dob = like["date_of_birth"] if like else (date(1950, 1, 1) + timedelta(days=rng.randint(0, 18_000))).isoformat()
        created = TODAY - timedelta(days=rng.randint(20, 120) if like else rng.randint(160, 2_200))
        tier = rng.choices(["standard", "silver", "gold", "platinum"], (0.6, 0.22, 0.13, 0.05))[0]
        row = self.add("customers", {
            "customer_id": f"CUS-{number:05d}", "first_name": first, "last_name": last, "email": self.email_for(first, last),
            "phone": like["phone"] if like and rng.random() < 0.7 else f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
            "date_of_birth": dob, "tier": "standard" if like else tier, "status": "active", "merged_into": None,
            "created_on": created.isoformat(),
        })
        city, region, postcodes = like["_place"] if like else rng.choice(cat.PLACES)
        row["_place"] = (city, region, postcodes)
        self.addresses[row["customer_id"]] = []
        for n in range(1 if like or rng.random() < 0.75 else 2):
            address = self.add("addresses", {
                "address_id": f"ADR-{len(self.rows['addresses']) + 1:06d}", "customer_id": row["customer_id"],
                "line1": f"{rng.randint(10, 9800)} {rng.choice(cat.STREETS)}",
                "line2": rng.choice([None, None, None, f"Apt {rng.randint(1, 40)}"]), "city": city, "region": region,
                "postcode": rng.choice(postcodes), "is_default": int(n == 0),
            })
            self.addresses[row["customer_id"]].append(address)
        return row

    def customers(self) -> None:
        total = CUSTOMERS_PER_SCALE * self.scale
        for number in range(1, total + 1):
            self.new_customer(number)
        originals = self.rng.sample(self.rows["customers"], k=24 * self.scale)
        for offset, original in enumerate(originals, start=1):
            twin = self.new_customer(total + offset, like=original)
            twin["_twin_of"] = original
            original["_twin"] = twin

    # -- ids and output ----------------------------------------------------------------------------

    def finish(self) -> None:
        for table, (column, prefix, width, key) in _ORDERING.items():
            rows = self.rows[table]
            rows.sort(key=key)
            start = 100_001 if table == "orders" else 1
            for number, row in enumerate(rows, start=start):
                row[column] = f"{prefix}-{number:0{width}d}"
        # rows refer to rows created before their ids existed; those references are the row dicts themselves
        ident: dict[int, str] = {}
        for table, rows in self.rows.items():
            column = _ORDERING[table][0] if table in _ORDERING else None
            for row in rows:
                key = column or next(iter(row))
                ident[id(row)] = row[key]
        for rows in self.rows.values():
            for row in rows:
                for column, value in row.items():
                    if column.startswith("_"):
                        continue  # private build-time links stay rows
                    if isinstance(value, dict):
                        row[column] = ident[id(value)]
                    elif isinstance(value, date):
                        row[column] = value.isoformat()

    def write(self, db: sqlite_utils.Database) -> None:
        # executemany with named parameters: the rows' private "_" keys are simply not bound
        for table in TABLES:
            columns = [row[1] for row in db.conn.execute(f'PRAGMA table_info("{table}")')]
            sql = f'INSERT INTO "{table}" ({", ".join(columns)}) VALUES ({", ".join(":" + c for c in columns)})'
            db.conn.executemany(sql, self.rows[table])


def generate(db: sqlite_utils.Database, rng: random.Random, scale: int) -> None:
    """Fill an empty support database: ``800 × scale`` customers (and 24 × scale second accounts) and five months
    of their orders, shipping, returns, subscriptions and help-desk tickets.

    Why: every episode clones this template, so it must hold every situation the tasks need (late and lost
    parcels, partial shipments, duplicate charges and tickets, chargebacks, injected text) and be identical for
    the same seed.
    """
    from envs.support.commerce import orders, subscriptions
    from envs.support.helpdesk import desk, fill_order_numbers

    builder = Builder(rng, scale)
    builder.reference()
    builder.customers()
    orders(builder)
    subscriptions(builder)
    desk(builder)
    builder.finish()
    fill_order_numbers(builder)
    builder.write(db)
