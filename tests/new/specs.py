"""Rules files the tests write over a generated default spec, as a user would after reading the README."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["chinook_rules"]

CHINOOK_RULES = {
    "verify": {"entity": "customer", "fields": ["email", "postal_code"]},
    "actions": [
        {"name": "update_customer_contact", "kind": "update", "entity": "customer", "fields": ["phone", "address", "city"],
         "requires_verified": True, "description": "Change a customer's phone, address or city."},
        {"name": "reprice_track", "kind": "update", "entity": "track", "fields": ["unit_price"],
         "description": "Set a track's price.",
         "rules": [{"check": "unit_price <= 1.99", "code": "price_over_limit", "message": "A track costs at most 1.99."},
                   {"check": "track.milliseconds < 600000", "code": "long_track_fixed_price",
                    "message": "Tracks of ten minutes or more keep their price."}]},
        {"name": "add_invoice_line", "kind": "create", "entity": "invoice_line", "parent": "invoice_id",
         "fields": ["track_id", "quantity"], "description": "Add a track to an invoice.",
         "rules": [{"check": "quantity <= 3", "code": "quantity_over_limit", "message": "At most 3 copies of a track per line."},
                   {"check": "invoice.total < 15", "code": "invoice_closed",
                    "message": "Invoices of 15.00 or more are closed to changes."}]},
    ],
}


def chinook_rules(spec_path: Path, target: Path) -> Path:
    """The generated spec at ``spec_path`` with Chinook's rules added, written to ``target``."""
    spec = json.loads(spec_path.read_text())
    spec.update(CHINOOK_RULES)
    target.write_text(json.dumps(spec, indent=2))
    return target
