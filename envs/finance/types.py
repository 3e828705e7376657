"""Argument types shared by the finance tools, declared once so every tool's schema says the same thing.

Ids are patterns (ASCII digits only: ``[0-9]``, never ``\\d``, which would admit other scripts' digits),
counts are strict integers (``true`` or ``"5"`` are refused, not coerced), dates must be ISO strings
(never epoch numbers), and free text is bounded and must contain something other than whitespace.
Money arguments use :data:`fixtures.money.Amount`.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from fixtures.ids import id_type
from fixtures.money import Amount

__all__ = [
    "Amount",
    "CustomerId",
    "AccountId",
    "TxnId",
    "TransferId",
    "PayeeId",
    "CardId",
    "AlertId",
    "HoldId",
    "StaffId",
    "Symbol",
    "Currency",
    "IsoDate",
    "Limit",
    "Offset",
    "Reason",
    "Memo",
    "Quantity",
]


CustomerId = id_type("CUS", 5, 42)
AccountId = id_type("ACC", 6, 100231)
TxnId = id_type("TXN", 7, 1234)
TransferId = id_type("TRF", 6, 123)
PayeeId = id_type("PAY", 5, 17)
CardId = id_type("CRD", 6, 400123)
AlertId = id_type("ALR", 5, 12)
HoldId = id_type("HLD", 5, 7)
StaffId = id_type("STF", 4, 1)

Symbol = Annotated[str, Field(pattern=r"^[A-Z0-9]{1,10}$", max_length=10, description="Ticker symbol, e.g. VTI")]
Currency = Literal["USD", "EUR", "GBP"]


def _iso_string(value: Any) -> Any:
    if not isinstance(value, str):
        raise ValueError("dates are ISO strings such as 2026-03-01")
    return value


IsoDate = Annotated[date, BeforeValidator(_iso_string), Field(description="A date as YYYY-MM-DD")]
Limit = Annotated[int, Field(strict=True, ge=1, le=100, description="Page size (1-100)")]
Offset = Annotated[int, Field(strict=True, ge=0, le=1_000_000, description="Rows to skip (from next_offset)")]
Reason = Annotated[
    str, Field(min_length=3, max_length=500, pattern=r"\S", description="Why, in a sentence (stored in the audit log)")
]
Memo = Annotated[str, Field(max_length=140, description="Free-text memo shown on the statement")]
Quantity = Annotated[int, Field(strict=True, ge=1, le=1_000_000, description="Number of units (whole shares)")]
