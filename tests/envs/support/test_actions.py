"""Each action changes exactly the rows it should, plus one audit row (per-call changes in the record)."""

from __future__ import annotations

from decimal import Decimal

from envs.support.tasks.customer_setup import plant_ticket
from tests.envs.support.helpers import Session, support_session

LOST_IN_STOCK = """SELECT o.order_id, o.customer_id, s.shipment_id FROM orders o JOIN shipments s ON s.order_id = o.order_id AND s.status = 'lost'
    WHERE (SELECT count(*) FROM shipments x WHERE x.order_id = o.order_id) = 1
      AND NOT EXISTS (SELECT 1 FROM refunds f WHERE f.order_id = o.order_id)
      AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.order_id AND p.status = 'chargeback')
      AND NOT EXISTS (SELECT 1 FROM fraud_signals g WHERE g.customer_id = o.customer_id AND g.severity = 'high' AND g.status = 'open')
      AND NOT EXISTS (SELECT 1 FROM shipment_items i JOIN order_lines l USING (line_id) JOIN variants v USING (variant_id)
                      WHERE i.shipment_id = s.shipment_id AND v.stock < i.quantity)
    ORDER BY o.order_id LIMIT 1"""


def _lines(s: Session, order_id: str) -> list[dict[str, object]]:
    return s.world.query("SELECT * FROM order_lines WHERE order_id = ? ORDER BY line_id", (order_id,))


async def test_verify_identity_and_address_change_and_cancellation() -> None:
    async with support_session() as s:
        order = s.one("SELECT * FROM orders WHERE status = 'processing' ORDER BY order_id LIMIT 1")
        cid, oid = order["customer_id"], order["order_id"]
        verification = s.next_id("verifications", "verification_id")
        await s.verify(cid)
        assert s.touched() == {("verifications", "insert", (verification,))} and s.audited() == ["verify_identity"]
        updated = await s.ok("update_shipping_address", order_id=oid, line1="12 Harbor Way", city="Seattle", region="WA", postcode="98101")
        assert s.touched() == {("orders", "update", (oid,))} and s.audited() == ["update_shipping_address"]
        assert updated["ship_to"] == "12 Harbor Way, Seattle, WA 98101"
        refund = s.next_id("refunds", "refund_id")
        cancelled = await s.ok("cancel_order", order_id=oid, reason="Customer changed their mind")
        lines = _lines(s, oid)
        assert s.touched() == {("orders", "update", (oid,)), ("refunds", "insert", (refund,))} | {
            ("variants", "update", (line["variant_id"],)) for line in lines}
        assert cancelled["status"] == "cancelled" and cancelled["refunded"] == cancelled["total"]


async def test_replacement_for_a_lost_parcel() -> None:
    async with support_session() as s:
        row = s.one(LOST_IN_STOCK)
        new_order, first_line = s.next_id("orders", "order_id"), s.next_id("order_lines", "line_id")
        items = s.world.query("SELECT l.variant_id FROM shipment_items i JOIN order_lines l USING (line_id) WHERE i.shipment_id = ?",
                              (row["shipment_id"],))
        replacement = await s.ok("send_replacement", order_id=row["order_id"], reason="Carrier lost the parcel")
        assert replacement["order_id"] == new_order and replacement["replacement_for"] == row["order_id"] and replacement["total"] == "0.00"
        touched = s.touched()
        assert ("orders", "insert", (new_order,)) in touched and ("order_lines", "insert", (first_line,)) in touched
        assert {t for t in touched if t[0] == "variants"} == {("variants", "update", (i["variant_id"],)) for i in items}
        assert len(touched) == 1 + 2 * len(items) and s.audited() == ["send_replacement"]


async def test_return_keep_it_refund_to_store_credit_and_exchange() -> None:
    async with support_session() as s:
        line = s.one("""SELECT l.*, o.customer_id, v.product_id FROM order_lines l JOIN orders o USING (order_id) JOIN variants v USING (variant_id)
            JOIN shipment_items i ON i.line_id = l.line_id JOIN shipments sh ON sh.shipment_id = i.shipment_id AND sh.status = 'delivered'
            JOIN products p ON p.product_id = v.product_id AND p.category = 'apparel'
            WHERE sh.delivered_on >= '2026-03-25' AND l.quantity = 1 AND l.unit_price_minor <= 10000
              AND NOT EXISTS (SELECT 1 FROM returns r WHERE r.line_id = l.line_id)
              AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.order_id AND p.status = 'chargeback')
              AND NOT EXISTS (SELECT 1 FROM fraud_signals g WHERE g.customer_id = o.customer_id AND g.severity = 'high' AND g.status = 'open')
              AND (SELECT coalesce(sum(amount_minor), 0) FROM refunds f WHERE f.order_id = o.order_id) = 0
              AND EXISTS (SELECT 1 FROM variants w WHERE w.product_id = v.product_id AND w.variant_id != v.variant_id AND w.stock > 0)
            ORDER BY l.line_id LIMIT 1""")
        photo = s.next_id("attachments", "attachment_id")
        s.world.execute("INSERT INTO attachments VALUES (?, ?, 'photo', 'torn seam', '2026-04-16T14:00:00+00:00')", (photo, line["customer_id"]))
        rma = s.next_id("returns", "rma_id")
        keep = await s.ok("create_return", order_id=line["order_id"], line_id=line["line_id"], quantity=1, reason="damaged", photo_id=photo)
        assert s.touched() == {("returns", "insert", (rma,))} and s.audited() == ["create_return"]
        assert keep["kind"] == "keep" and Decimal(keep["refundable"]) * 100 == line["unit_price_minor"]
        refund, entry = s.next_id("refunds", "refund_id"), s.next_id("credit_ledger", "entry_id")
        amount = f"{line['unit_price_minor'] // 100}.{line['unit_price_minor'] % 100:02d}"
        await s.ok("issue_refund", order_id=line["order_id"], amount=amount, method="store_credit", reason="damaged_item", rma_id=rma)
        assert s.touched() == {("refunds", "insert", (refund,)), ("credit_ledger", "insert", (entry,)), ("returns", "update", (rma,))}
        assert s.one("SELECT status FROM returns WHERE rma_id = ?", (rma,))["status"] == "closed"
        other = s.one("SELECT * FROM variants WHERE product_id = ? AND variant_id != ? AND stock > 0 ORDER BY variant_id LIMIT 1",
                      (line["product_id"], line["variant_id"]))
        order2 = s.one("""SELECT l.* FROM order_lines l JOIN variants v USING (variant_id) JOIN shipment_items i ON i.line_id = l.line_id
            JOIN shipments sh ON sh.shipment_id = i.shipment_id AND sh.status = 'delivered' AND sh.delivered_on >= '2026-03-01'
            WHERE v.product_id = ? AND l.line_id != ? AND NOT EXISTS (SELECT 1 FROM returns r WHERE r.line_id = l.line_id)
              AND v.variant_id != ? ORDER BY l.line_id LIMIT 1""", (line["product_id"], line["line_id"], other["variant_id"]))
        exchange = s.next_id("returns", "rma_id")
        await s.ok("create_exchange", order_id=order2["order_id"], line_id=order2["line_id"], new_variant_id=other["variant_id"])
        assert s.touched() == {("returns", "insert", (exchange,)), ("variants", "update", (other["variant_id"],))}


async def test_goodwill_coupon_and_subscription_changes() -> None:
    async with support_session() as s:
        customer = s.one("""SELECT c.* FROM customers c WHERE c.status = 'active' AND NOT EXISTS (SELECT 1 FROM credit_ledger e
            WHERE e.customer_id = c.customer_id AND e.kind = 'goodwill' AND e.created_at >= '2026-03-10')
            AND NOT EXISTS (SELECT 1 FROM fraud_signals g WHERE g.customer_id = c.customer_id AND g.severity = 'high' AND g.status = 'open')
            ORDER BY customer_id LIMIT 1""")
        entry = s.next_id("credit_ledger", "entry_id")
        credit = await s.ok("issue_goodwill_credit", customer_id=customer["customer_id"], amount="5.00", reason="Late parcel")
        assert s.touched() == {("credit_ledger", "insert", (entry,))} and credit["amount"] == "5.00"
        order = s.one("""SELECT o.* FROM orders o WHERE o.coupon_code IS NULL AND o.status != 'cancelled' AND o.subtotal_minor >= 5000
            AND o.placed_at >= '2026-03-20' AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.order_id AND p.status = 'chargeback')
            ORDER BY order_id LIMIT 1""")
        refund = s.next_id("refunds", "refund_id")
        adjusted = await s.ok("apply_coupon", order_id=order["order_id"], code="SPRING15")
        assert s.touched() == {("orders", "update", (order["order_id"],)), ("refunds", "insert", (refund,))}
        assert Decimal(adjusted["discount"]) * 100 == order["subtotal_minor"] * 15 // 100
        sub = s.one("SELECT s.* FROM subscriptions s JOIN plans p USING (plan_id) WHERE s.status = 'active' AND p.tier != 'basic' "
                    "AND s.period_start < '2026-04-16' ORDER BY subscription_id LIMIT 1")
        await s.verify(sub["customer_id"])
        basic = s.one("SELECT plan_id FROM plans WHERE family = (SELECT family FROM plans WHERE plan_id = ?) AND tier = 'basic'", (sub["plan_id"],))
        await s.ok("change_plan", subscription_id=sub["subscription_id"], plan_id=basic["plan_id"])
        assert s.touched() == {("subscriptions", "update", (sub["subscription_id"],))}
        refund = s.next_id("refunds", "refund_id")
        cancelled = await s.ok("cancel_subscription", subscription_id=sub["subscription_id"], timing="immediately", reason="Moving abroad")
        assert s.touched() == {("subscriptions", "update", (sub["subscription_id"],)), ("refunds", "insert", (refund,))}
        assert cancelled["status"] == "cancelled" and s.audited() == ["cancel_subscription"]
        other = s.one("SELECT * FROM subscriptions WHERE status = 'active' AND customer_id != ? ORDER BY subscription_id LIMIT 1",
                      (sub["customer_id"],))
        await s.verify(other["customer_id"])
        paused = await s.ok("pause_subscription", subscription_id=other["subscription_id"], periods=2)
        assert s.touched() == {("subscriptions", "update", (other["subscription_id"],))} and paused["status"] == "paused"


async def test_duplicate_invoice_refund() -> None:
    async with support_session() as s:
        pair = s.one("""SELECT b.invoice_id FROM invoices a JOIN invoices b ON b.subscription_id = a.subscription_id
            AND b.period_start = a.period_start AND b.invoice_id > a.invoice_id WHERE a.status = 'paid' AND b.status = 'paid'
            ORDER BY b.invoice_id LIMIT 1""")
        refund = s.next_id("refunds", "refund_id")
        receipt = await s.ok("refund_invoice", invoice_id=pair["invoice_id"], reason="Charged twice")
        assert s.touched() == {("refunds", "insert", (refund,))} and receipt["invoice_id"] == pair["invoice_id"]


async def test_merge_accounts_moves_everything() -> None:
    async with support_session() as s:
        pair = s.one("""SELECT t.customer_id AS twin, o.customer_id AS original FROM customers t JOIN customers o ON o.first_name = t.first_name
            AND o.last_name = t.last_name AND o.date_of_birth = t.date_of_birth AND o.customer_id < t.customer_id
            WHERE NOT EXISTS (SELECT 1 FROM fraud_signals g WHERE g.customer_id IN (t.customer_id, o.customer_id) AND g.severity = 'high'
                              AND g.status = 'open')
              AND EXISTS (SELECT 1 FROM orders x WHERE x.customer_id = t.customer_id) ORDER BY t.customer_id LIMIT 1""")
        moved = {("orders", "update", (r["order_id"],)) for r in s.world.query("SELECT order_id FROM orders WHERE customer_id = ?", (pair["twin"],))}
        moved |= {("addresses", "update", (r["address_id"],)) for r in s.world.query("SELECT address_id FROM addresses WHERE customer_id = ?",
                                                                                      (pair["twin"],))}
        moved |= {("tickets", "update", (r["ticket_id"],)) for r in s.world.query("SELECT ticket_id FROM tickets WHERE customer_id = ?", (pair["twin"],))}
        await s.verify(pair["original"])
        await s.verify(pair["twin"])
        merged = await s.ok("merge_accounts", source_customer_id=pair["twin"], target_customer_id=pair["original"], reason="Same person")
        assert s.touched() == moved | {("customers", "update", (pair["twin"],))}
        assert merged["orders_moved"] == len({m for m in moved if m[0] == "orders"})
        assert s.one("SELECT status, merged_into FROM customers WHERE customer_id = ?", (pair["twin"],)) == {"status": "merged",
                                                                                                            "merged_into": pair["original"]}


async def test_ticket_actions() -> None:
    async with support_session() as s:
        ticket = s.one("SELECT * FROM tickets WHERE status = 'new' AND priority = 'normal' ORDER BY ticket_id LIMIT 1")
        tid = ticket["ticket_id"]
        triaged = await s.ok("triage_ticket", ticket_id=tid, priority="high", assign_to_me=True)
        assert s.touched() == {("tickets", "update", (tid,))} and triaged["assignee"] == "STF-0100" and triaged["status"] == "open"
        assert triaged["first_response_due"] > ticket["created_at"]
        message = s.next_id("ticket_messages", "message_id")
        await s.ok("reply_to_ticket", ticket_id=tid, body="We're on it.", status="pending")
        assert s.touched() == {("tickets", "update", (tid,)), ("ticket_messages", "insert", (message,))}
        escalation = s.next_id("escalations", "escalation_id")
        escalated = await s.ok("escalate_ticket", ticket_id=tid, team_id="billing", reason_code="refund_limit_exceeded", note="Big refund")
        assert s.touched() == {("tickets", "update", (tid,)), ("escalations", "insert", (escalation,))} and escalated["team_id"] == "billing"
        older = plant_ticket(s.world, ticket["customer_id"], "Where is it?", "Where is my order?", tag="where_is_order", hours_ago=5)
        newer = plant_ticket(s.world, ticket["customer_id"], "Re: where is it?", "Still waiting!", tag="where_is_order", hours_ago=1)
        message = s.next_id("ticket_messages", "message_id")
        await s.ok("merge_tickets", ticket_id=newer, into_ticket_id=older)
        assert s.touched() == {("tickets", "update", (newer,)), ("ticket_messages", "insert", (message,))}
        assert s.one("SELECT status, merged_into FROM tickets WHERE ticket_id = ?", (newer,)) == {"status": "merged", "merged_into": older}
