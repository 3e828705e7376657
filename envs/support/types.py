"""Argument types shared by the support tools, declared once so every tool's schema says the same thing.

Ids are patterns (ASCII digits only), counts are strict integers, free text is bounded and must contain
something other than whitespace, choices are ``Literal``. Money arguments use :data:`fixtures.money.Amount`
(US dollars and cents).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from fixtures.ids import id_type
from fixtures.money import Amount

__all__ = [
    "Amount", "CustomerId", "OrderId", "LineId", "ShipmentId", "ProductId", "VariantId", "RmaId", "SubscriptionId",
    "PlanId", "InvoiceId", "TicketId", "ArticleId", "AttachmentId", "CouponCode", "Email", "IsoDateText", "Limit",
    "Offset", "Reason", "Body", "Query", "Quantity", "Topic", "Resolution", "TeamId", "Priority", "Category",
    "ReturnReason", "RefundMethod", "RefundReason",
]


CustomerId = id_type("CUS", 5, 42)
OrderId = id_type("ORD", 6, 104233)
LineId = id_type("LIN", 7, 1234)
ShipmentId = id_type("SHP", 6, 1042)
ProductId = id_type("PRD", 4, 7)
VariantId = id_type("VAR", 5, 12)
RmaId = id_type("RMA", 5, 31)
SubscriptionId = id_type("SUB", 5, 17)
PlanId = id_type("PLN", 3, 2)
InvoiceId = id_type("INV", 6, 501)
TicketId = id_type("TCK", 5, 311)
ArticleId = id_type("KB", 4, 3)
AttachmentId = id_type("ATT", 5, 9)

CouponCode = Annotated[str, Field(pattern=r"^[A-Z][A-Z0-9]{2,19}$", max_length=20, description="Coupon code, e.g. SPRING15")]
Email = Annotated[str, Field(min_length=3, max_length=120, pattern=r"^\S+@\S+$", description="An e-mail address as the customer gives it")]
IsoDateText = Annotated[str, Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$", max_length=10, description="A date as YYYY-MM-DD")]
Limit = Annotated[int, Field(strict=True, ge=1, le=100, description="Page size (1-100)")]
Offset = Annotated[int, Field(strict=True, ge=0, le=1_000_000, description="Rows to skip (from next_offset)")]
Reason = Annotated[str, Field(min_length=3, max_length=500, pattern=r"\S", description="Why, in a sentence (kept in the audit log)")]
Body = Annotated[str, Field(min_length=1, max_length=4000, pattern=r"\S", description="The message text")]
Query = Annotated[str, Field(min_length=2, max_length=100, pattern=r"\S", description="Words to look for")]
Quantity = Annotated[int, Field(strict=True, ge=1, le=20, description="Number of units")]

Topic = Literal[
    "order_number", "email", "date_of_birth", "full_name", "which_item", "photo", "reason", "preferred_resolution",
    "new_address", "other_account_email", "coupon_code", "ticket_number",
]
"""What the agent may ask the customer for."""
Resolution = Literal[
    "refund_original_payment", "refund_store_credit", "partial_refund", "replacement", "exchange", "return_for_refund",
    "goodwill_credit", "shipping_refund", "cancel_order", "wait_for_delivery", "cancel_immediately",
    "cancel_end_of_period", "pause", "downgrade", "price_adjustment", "merge_accounts", "escalate",
]
"""What the agent may propose to the customer."""
TeamId = Literal["frontline", "billing", "logistics", "fraud", "product_safety"]
Priority = Literal["low", "normal", "high", "urgent"]
Category = Literal["electronics", "apparel", "home", "beauty", "grocery", "toys"]
ReturnReason = Literal["changed_mind", "damaged", "defective", "wrong_item", "not_as_described"]
RefundMethod = Literal["original_payment", "store_credit"]
RefundReason = Literal["returned_item", "damaged_item", "lost_parcel", "late_delivery"]
