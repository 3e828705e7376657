"""Every business rule refuses with its stable code and leaves the world exactly as it was (``Session.error``
checks the hash before and after each refused call)."""

from __future__ import annotations

import re
from pathlib import Path

from envs.support import rules
from envs.support.tasks.customer_setup import plant_ticket
from envs.support.tasks.order_setup import plant_order
from tests.envs.support.helpers import Session, support_session

async def _no(s: Session, tool: str, expected: str, /, **arguments: object) -> None:
    await s.refused(tool, expected, **arguments)


def _money(minor: int) -> str:
    return f"{minor // 100}.{minor % 100:02d}"


async def test_identity_and_order_rules() -> None:
    async with support_session() as s:
        order = s.one("SELECT * FROM orders WHERE status = 'processing' ORDER BY order_id LIMIT 1")
        cid, oid = order["customer_id"], order["order_id"]
        address = {"line1": "1 Main St", "city": "Austin", "region": "TX", "postcode": "78701"}
        await _no(s, "update_shipping_address", "identity_not_verified", order_id=oid, **address)
        for _ in range(3):
            await s.ok("verify_identity", customer_id=cid, email="wrong@example.com", date_of_birth="1900-01-01")
        row = s.one("SELECT email, date_of_birth FROM customers WHERE customer_id = ?", (cid,))
        await _no(s, "verify_identity", "verification_locked", customer_id=cid, email=row["email"], date_of_birth=row["date_of_birth"])
        other = s.one("SELECT * FROM orders WHERE status = 'processing' AND customer_id != ? ORDER BY order_id LIMIT 1", (cid,))
        await s.verify(other["customer_id"])
        same = {"line1": other["ship_line1"], "line2": other["ship_line2"], "city": other["ship_city"], "region": other["ship_region"],
                "postcode": other["ship_postcode"]}
        await _no(s, "update_shipping_address", "no_change", order_id=other["order_id"], **same)
        shipped = s.one("SELECT * FROM orders WHERE status = 'shipped' ORDER BY order_id LIMIT 1")
        await s.verify(shipped["customer_id"])
        await _no(s, "update_shipping_address", "already_shipped", order_id=shipped["order_id"], **address)
        await _no(s, "cancel_order", "already_shipped", order_id=shipped["order_id"], reason="Changed my mind")
        cancelled = s.one("SELECT * FROM orders WHERE status = 'cancelled' ORDER BY order_id LIMIT 1")
        line = s.one("SELECT line_id FROM order_lines WHERE order_id = ? LIMIT 1", (cancelled["order_id"],))
        await _no(s, "cancel_order", "order_cancelled", order_id=cancelled["order_id"], reason="Again")
        await _no(s, "create_return", "order_cancelled", order_id=cancelled["order_id"], line_id=line["line_id"], quantity=1,
                  reason="changed_mind")
        pending = s.one("SELECT line_id FROM order_lines WHERE order_id = ? LIMIT 1", (other["order_id"],))
        await _no(s, "create_return", "not_delivered", order_id=other["order_id"], line_id=pending["line_id"], quantity=1, reason="changed_mind")


DELIVERED = """SELECT l.*, p.category, p.product_id, sh.delivered_on, o.customer_id, o.shipping_minor FROM order_lines l
    JOIN orders o USING (order_id) JOIN variants v USING (variant_id) JOIN products p USING (product_id)
    JOIN shipment_items i ON i.line_id = l.line_id JOIN shipments sh ON sh.shipment_id = i.shipment_id AND sh.status = 'delivered'
    WHERE NOT EXISTS (SELECT 1 FROM returns r WHERE r.line_id = l.line_id)
      AND NOT EXISTS (SELECT 1 FROM payments y WHERE y.order_id = o.order_id AND y.status = 'chargeback')
      AND NOT EXISTS (SELECT 1 FROM fraud_signals g WHERE g.customer_id = o.customer_id AND g.severity = 'high' AND g.status = 'open')
      AND (SELECT count(*) FROM shipments x WHERE x.order_id = o.order_id) = 1 AND {where} ORDER BY l.line_id LIMIT 1"""


async def test_return_exchange_and_replacement_rules() -> None:
    async with support_session() as s:
        grocery = s.one(DELIVERED.format(where="p.category = 'grocery' AND sh.delivered_on >= '2026-04-01'"))
        await _no(s, "create_return", "final_sale", order_id=grocery["order_id"], line_id=grocery["line_id"], quantity=1, reason="changed_mind")
        old = s.one(DELIVERED.format(where="p.category = 'electronics' AND sh.delivered_on < '2026-02-01'"))
        await _no(s, "create_return", "return_window_expired", order_id=old["order_id"], line_id=old["line_id"], quantity=1, reason="changed_mind")
        fresh = s.one(DELIVERED.format(where="p.category = 'apparel' AND sh.delivered_on >= '2026-04-01' AND l.quantity = 1"))
        await _no(s, "create_return", "already_returned", order_id=fresh["order_id"], line_id=fresh["line_id"], quantity=2, reason="changed_mind")
        await _no(s, "create_return", "photo_required", order_id=fresh["order_id"], line_id=fresh["line_id"], quantity=1, reason="damaged")
        await _no(s, "create_return", "not_found", order_id=fresh["order_id"], line_id=fresh["line_id"], quantity=1, reason="damaged",
                  photo_id="ATT-99999")
        foreign = s.one("SELECT variant_id FROM variants WHERE product_id != ? AND stock > 0 ORDER BY variant_id LIMIT 1", (fresh["product_id"],))
        await _no(s, "create_exchange", "not_same_product", order_id=fresh["order_id"], line_id=fresh["line_id"],
                  new_variant_id=foreign["variant_id"])
        sibling = s.one("SELECT variant_id FROM variants WHERE product_id = ? AND variant_id != ? ORDER BY variant_id LIMIT 1",
                        (fresh["product_id"], fresh["variant_id"]))
        s.world.execute("UPDATE variants SET stock = 0 WHERE variant_id = ?", (sibling["variant_id"],))
        await _no(s, "create_exchange", "out_of_stock", order_id=fresh["order_id"], line_id=fresh["line_id"], new_variant_id=sibling["variant_id"])
        await _no(s, "send_replacement", "not_lost", order_id=fresh["order_id"], reason="Customer says lost")
        customer = s.one("SELECT * FROM customers WHERE customer_id = ?", (fresh["customer_id"],))
        variant = s.one("SELECT * FROM variants WHERE stock > 3 ORDER BY variant_id LIMIT 1")
        lost = plant_order(s.world, customer, [(variant, 1)], placed_days_ago=15, fate="lost")
        s.world.execute("UPDATE variants SET stock = 0 WHERE variant_id = ?", (variant["variant_id"],))
        await _no(s, "send_replacement", "out_of_stock", order_id=lost["order_id"], reason="Lost")
        s.world.execute("UPDATE variants SET stock = 5 WHERE variant_id = ?", (variant["variant_id"],))
        await s.ok("send_replacement", order_id=lost["order_id"], reason="Lost")
        await _no(s, "send_replacement", "already_replaced", order_id=lost["order_id"], reason="Lost again")
        await _no(s, "issue_refund", "already_replaced", order_id=lost["order_id"], amount="1.00", method="original_payment", reason="lost_parcel")


async def test_refund_rules() -> None:
    async with support_session() as s:
        fresh = s.one(DELIVERED.format(where="p.category = 'apparel' AND sh.delivered_on >= '2026-04-01' AND l.quantity = 1 "
                                             "AND sh.delivered_on <= sh.promised_by AND o.shipping_minor > 0"))
        oid = fresh["order_id"]
        refund = {"order_id": oid, "method": "original_payment"}
        await _no(s, "issue_refund", "invalid_amount", amount="0.00", reason="late_delivery", **refund)
        await _no(s, "issue_refund", "not_late", amount="1.00", reason="late_delivery", **refund)
        await _no(s, "issue_refund", "not_lost", amount="1.00", reason="lost_parcel", **refund)
        await _no(s, "issue_refund", "photo_required", amount="1.00", reason="damaged_item", **refund)
        await _no(s, "issue_refund", "inspection_required", amount="1.00", reason="returned_item", **refund)
        rma = await s.ok("create_return", order_id=oid, line_id=fresh["line_id"], quantity=1, reason="changed_mind")
        await _no(s, "issue_refund", "inspection_required", amount="1.00", reason="returned_item", rma_id=rma["rma_id"], **refund)
        await _no(s, "issue_refund", "photo_required", amount="1.00", reason="damaged_item", rma_id=rma["rma_id"], **refund)
        late = s.one(DELIVERED.format(where="sh.delivered_on > sh.promised_by AND o.shipping_minor > 0 "
                                            "AND NOT EXISTS (SELECT 1 FROM refunds f WHERE f.order_id = o.order_id)"))
        await _no(s, "issue_refund", "amount_exceeds_eligible", order_id=late["order_id"], amount=_money(late["shipping_minor"] + 1),
                  method="original_payment", reason="late_delivery")
        chargeback = s.one("SELECT order_id FROM payments WHERE status = 'chargeback' AND order_id IS NOT NULL ORDER BY order_id LIMIT 1")
        await _no(s, "issue_refund", "chargeback_open", order_id=chargeback["order_id"], amount="1.00", method="original_payment",
                  reason="late_delivery")
        flagged = s.one("SELECT o.order_id FROM orders o JOIN fraud_signals g ON g.customer_id = o.customer_id AND g.severity = 'high' "
                        "AND g.status = 'open' WHERE NOT EXISTS (SELECT 1 FROM payments y WHERE y.order_id = o.order_id AND y.status = 'chargeback') "
                        "AND o.status != 'cancelled' ORDER BY o.order_id LIMIT 1")
        await _no(s, "issue_refund", "fraud_review_required", order_id=flagged["order_id"], amount="1.00", method="original_payment",
                  reason="late_delivery")
        customer = s.one("SELECT * FROM customers WHERE customer_id = ?", (fresh["customer_id"],))
        pricey = s.world.query("SELECT * FROM variants WHERE price_minor >= 17000 ORDER BY variant_id LIMIT 3")
        lost = plant_order(s.world, customer, [(v, 1) for v in pricey], placed_days_ago=15, fate="lost")
        await _no(s, "issue_refund", "refund_limit_exceeded", order_id=lost["order_id"], amount=_money(lost["subtotal"]),
                  method="original_payment", reason="lost_parcel")


async def test_goodwill_coupon_and_account_rules() -> None:
    async with support_session() as s:
        fresh = s.one("""SELECT c.* FROM customers c WHERE c.status = 'active' AND c.tier = 'standard' AND NOT EXISTS (SELECT 1 FROM credit_ledger e
            WHERE e.customer_id = c.customer_id AND e.kind = 'goodwill' AND e.created_at >= '2026-03-10')
            AND NOT EXISTS (SELECT 1 FROM fraud_signals g WHERE g.customer_id = c.customer_id AND g.severity = 'high' AND g.status = 'open')
            ORDER BY customer_id LIMIT 1""")
        await _no(s, "issue_goodwill_credit", "goodwill_cap_exceeded", customer_id=fresh["customer_id"], amount="10.01", reason="Sorry")
        recent = s.one("SELECT customer_id FROM credit_ledger WHERE kind = 'goodwill' AND created_at >= '2026-03-20' ORDER BY entry_id LIMIT 1")
        await _no(s, "issue_goodwill_credit", "goodwill_too_soon", customer_id=recent["customer_id"], amount="1.00", reason="Sorry")
        flagged = s.one("SELECT c.customer_id FROM customers c JOIN fraud_signals g ON g.customer_id = c.customer_id AND g.severity = 'high' "
                        "AND g.status = 'open' WHERE NOT EXISTS (SELECT 1 FROM credit_ledger e WHERE e.customer_id = c.customer_id AND "
                        "e.kind = 'goodwill' AND e.created_at >= '2026-03-10') ORDER BY c.customer_id LIMIT 1")
        await _no(s, "issue_goodwill_credit", "fraud_review_required", customer_id=flagged["customer_id"], amount="1.00", reason="Sorry")
        with_coupon = s.one("SELECT order_id FROM orders WHERE coupon_code IS NOT NULL AND status != 'cancelled' ORDER BY order_id LIMIT 1")
        await _no(s, "apply_coupon", "coupon_already_applied", order_id=with_coupon["order_id"], code="SPRING15")
        base = "SELECT o.* FROM orders o WHERE o.coupon_code IS NULL AND o.status != 'cancelled' AND NOT EXISTS (SELECT 1 FROM payments p " \
               "WHERE p.order_id = o.order_id AND p.status = 'chargeback') AND {where} ORDER BY o.order_id LIMIT 1"
        old = s.one(base.format(where="o.placed_at < '2026-03-01'"))
        await _no(s, "apply_coupon", "adjustment_window_expired", order_id=old["order_id"], code="SPRING15")
        recent_order = s.one(base.format(where="o.placed_at >= '2026-04-01' AND o.subtotal_minor < 5000"))
        await _no(s, "apply_coupon", "coupon_expired", order_id=recent_order["order_id"], code="GIFT25")
        await _no(s, "apply_coupon", "coupon_min_not_met", order_id=recent_order["order_id"], code="SPRING15")
        await _no(s, "apply_coupon", "not_found", order_id=recent_order["order_id"], code="NOSUCHCODE")
        big = s.one(base.format(where="o.placed_at >= '2026-03-20' AND o.subtotal_minor >= 15000 AND NOT EXISTS (SELECT 1 FROM order_lines l "
                                      "JOIN variants v USING (variant_id) JOIN products p USING (product_id) WHERE l.order_id = o.order_id "
                                      "AND p.category = 'electronics')"))
        await _no(s, "apply_coupon", "coupon_not_applicable", order_id=big["order_id"], code="TECH10")
        used = s.one("SELECT o.customer_id FROM orders o WHERE o.coupon_code = 'WELCOME10' ORDER BY o.order_id LIMIT 1")
        again = s.one(base.format(where="o.customer_id = ? AND o.placed_at >= '2026-03-20' AND o.subtotal_minor >= 4000")
                      .replace("?", f"'{used['customer_id']}'")) if s.world.query(base.format(
                          where=f"o.customer_id = '{used['customer_id']}' AND o.placed_at >= '2026-03-20' AND o.subtotal_minor >= 4000")) else None
        if again is None:
            customer = s.one("SELECT * FROM customers WHERE customer_id = ?", (used["customer_id"],))
            variant = s.one("SELECT * FROM variants WHERE price_minor >= 5000 ORDER BY variant_id LIMIT 1")
            again = {"order_id": plant_order(s.world, customer, [(variant, 1)], placed_days_ago=3, fate="delivered")["order_id"]}
        await _no(s, "apply_coupon", "coupon_already_used", order_id=again["order_id"], code="WELCOME10")
        pair = s.one("""SELECT t.customer_id AS twin, o.customer_id AS original FROM customers t JOIN customers o ON o.first_name = t.first_name
            AND o.last_name = t.last_name AND o.date_of_birth = t.date_of_birth AND o.customer_id < t.customer_id
            WHERE NOT EXISTS (SELECT 1 FROM fraud_signals g WHERE g.customer_id IN (t.customer_id, o.customer_id) AND g.severity = 'high'
                              AND g.status = 'open') ORDER BY t.customer_id LIMIT 1""")
        merge = {"source_customer_id": pair["twin"], "target_customer_id": pair["original"], "reason": "Same person"}
        await _no(s, "merge_accounts", "same_account", source_customer_id=pair["twin"], target_customer_id=pair["twin"], reason="x y z")
        await _no(s, "merge_accounts", "not_same_person", source_customer_id=pair["twin"], target_customer_id=fresh["customer_id"], reason="x y z")
        await _no(s, "merge_accounts", "identity_not_verified", **merge)
        flagged_pair = s.one("""SELECT t.customer_id AS twin, o.customer_id AS original FROM customers t JOIN customers o ON o.first_name = t.first_name
            AND o.last_name = t.last_name AND o.date_of_birth = t.date_of_birth AND o.customer_id < t.customer_id
            WHERE EXISTS (SELECT 1 FROM fraud_signals g WHERE g.customer_id = t.customer_id AND g.severity = 'high' AND g.status = 'open')
            ORDER BY t.customer_id LIMIT 1""")
        await _no(s, "merge_accounts", "fraud_review_required", source_customer_id=flagged_pair["twin"],
                  target_customer_id=flagged_pair["original"], reason="Same person")
        await s.verify(pair["twin"])
        await s.verify(pair["original"])
        await s.ok("merge_accounts", **merge)
        await _no(s, "merge_accounts", "account_not_active", **merge)
        await _no(s, "issue_goodwill_credit", "account_not_active", customer_id=pair["twin"], amount="1.00", reason="Sorry")


async def test_subscription_rules() -> None:
    async with support_session() as s:
        def sub(where: str) -> dict[str, object]:
            return s.one(f"SELECT s.*, p.family FROM subscriptions s JOIN plans p USING (plan_id) WHERE {where} ORDER BY subscription_id LIMIT 1")

        active = sub("s.status = 'active' AND p.tier != 'basic' AND s.next_plan_id IS NULL")
        sid = active["subscription_id"]
        await _no(s, "pause_subscription", "identity_not_verified", subscription_id=sid, periods=1)
        await s.verify(str(active["customer_id"]))
        await _no(s, "change_plan", "same_plan", subscription_id=sid, plan_id=active["plan_id"])
        other = s.one("SELECT plan_id FROM plans WHERE family != ? ORDER BY plan_id LIMIT 1", (active["family"],))
        await _no(s, "change_plan", "plan_family_mismatch", subscription_id=sid, plan_id=other["plan_id"])
        await _no(s, "change_plan", "not_found", subscription_id=sid, plan_id="PLN-999")
        basic = s.one("SELECT plan_id FROM plans WHERE family = ? AND tier = 'basic'", (active["family"],))
        await s.ok("change_plan", subscription_id=sid, plan_id=basic["plan_id"])
        await _no(s, "change_plan", "no_change", subscription_id=sid, plan_id=basic["plan_id"])
        await s.ok("cancel_subscription", subscription_id=sid, timing="end_of_period", reason="Moving")
        await _no(s, "cancel_subscription", "already_cancelled", subscription_id=sid, timing="end_of_period", reason="Moving")
        await s.ok("pause_subscription", subscription_id=sid, periods=1)
        await _no(s, "pause_subscription", "subscription_not_active", subscription_id=sid, periods=1)
        past_due = sub("s.status = 'past_due'")
        await s.verify(str(past_due["customer_id"]))
        await _no(s, "pause_subscription", "past_due_balance", subscription_id=past_due["subscription_id"], periods=1)
        cancelled = sub("s.status = 'cancelled'")
        await s.verify(str(cancelled["customer_id"]))
        await _no(s, "cancel_subscription", "already_cancelled", subscription_id=cancelled["subscription_id"], timing="immediately", reason="x y")
        single = s.one("SELECT invoice_id FROM invoices i WHERE status = 'paid' AND (SELECT count(*) FROM invoices j WHERE "
                       "j.subscription_id = i.subscription_id AND j.period_start = i.period_start) = 1 ORDER BY invoice_id LIMIT 1")
        await _no(s, "refund_invoice", "not_duplicate", invoice_id=single["invoice_id"], reason="Claimed twice")
        dup = s.one("SELECT b.invoice_id FROM invoices a JOIN invoices b ON b.subscription_id = a.subscription_id AND b.period_start = "
                    "a.period_start AND b.invoice_id > a.invoice_id ORDER BY b.invoice_id LIMIT 1")
        await s.ok("refund_invoice", invoice_id=dup["invoice_id"], reason="Charged twice")
        await _no(s, "refund_invoice", "already_refunded", invoice_id=dup["invoice_id"], reason="Charged twice")


async def test_ticket_rules() -> None:
    async with support_session() as s:
        a, b = s.world.query("SELECT customer_id FROM customers WHERE status = 'active' ORDER BY customer_id LIMIT 2")
        older = plant_ticket(s.world, a["customer_id"], "Where?", "Where is it?", tag="where_is_order", hours_ago=5)
        newer = plant_ticket(s.world, a["customer_id"], "Where?!", "Still nothing", tag="where_is_order", hours_ago=1)
        stranger = plant_ticket(s.world, b["customer_id"], "Hello", "Hi", tag="feedback", hours_ago=2)
        await _no(s, "merge_tickets", "wrong_merge_direction", ticket_id=older, into_ticket_id=newer)
        await _no(s, "merge_tickets", "wrong_merge_direction", ticket_id=older, into_ticket_id=older)
        await _no(s, "merge_tickets", "not_same_customer", ticket_id=stranger, into_ticket_id=older)
        await s.ok("triage_ticket", ticket_id=older, priority="normal")  # new → open: a change
        await _no(s, "triage_ticket", "no_change", ticket_id=older, priority="normal")
        await s.ok("merge_tickets", ticket_id=newer, into_ticket_id=older)
        await _no(s, "reply_to_ticket", "ticket_merged", ticket_id=newer, body="Hello")
        await _no(s, "escalate_ticket", "ticket_merged", ticket_id=newer, team_id="billing", reason_code="chargeback_open", note="CB case")
        safety = plant_ticket(s.world, b["customer_id"], "Burned", "It burned me", tag="safety", hours_ago=1)
        await _no(s, "reply_to_ticket", "escalation_required", ticket_id=safety, body="Sorry", status="solved")
        await s.ok("escalate_ticket", ticket_id=safety, team_id="product_safety", reason_code="escalation_required", note="Burn")
        await _no(s, "escalate_ticket", "already_escalated", ticket_id=safety, team_id="product_safety", reason_code="escalation_required",
                  note="Burn again")
        await s.ok("reply_to_ticket", ticket_id=safety, body="Our safety team will call you.", status="solved")


def test_every_reason_code_is_exercised_here_or_elsewhere() -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in Path(__file__).parent.glob("test_*.py"))
    elsewhere = set(re.findall(r'"([a-z_]+)"', source)) & set(rules.REASON_CODES)
    assert set(rules.REASON_CODES) - elsewhere == set(), "a reason code no test refuses with"
