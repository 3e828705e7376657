"""Every read tool, through a real MCP client, returns data consistent with the world and writes nothing."""

from __future__ import annotations

from decimal import Decimal

from tests.envs.support.helpers import support_session


async def test_customers_search_and_profile() -> None:
    async with support_session() as s:
        row = s.one("SELECT * FROM customers WHERE status = 'active' AND tier = 'gold' ORDER BY customer_id LIMIT 1")
        page = await s.ok("search_customers", query=row["last_name"].upper(), limit=100)
        assert row["customer_id"] in [c["customer_id"] for c in page["customers"]]
        assert page["total"] == len(page["customers"]) and page["next_offset"] is None
        assert [c["customer_id"] for c in (await s.ok("search_customers", query=row["email"]))["customers"]] == [row["customer_id"]]
        first = await s.ok("search_customers", query="example", limit=5)
        second = await s.ok("search_customers", query="example", limit=5, offset=5)
        assert first["next_offset"] == 5 and {c["customer_id"] for c in first["customers"]}.isdisjoint(
            c["customer_id"] for c in second["customers"])
        customer = await s.ok("get_customer", customer_id=row["customer_id"])
        assert customer["tier"] == "gold" and customer["identity_verified"] is False
        assert "date_of_birth" not in customer and row["date_of_birth"] not in str(customer)
        balance = s.one("SELECT coalesce(sum(amount_minor), 0) AS s FROM credit_ledger WHERE customer_id = ?", (row["customer_id"],))["s"]
        assert Decimal(customer["store_credit"]) * 100 == balance
        assert customer["order_count"] == s.one("SELECT count(*) AS n FROM orders WHERE customer_id = ?", (row["customer_id"],))["n"]
        assert s.world.diff() == []


async def test_orders_lines_payments_and_shipments() -> None:
    async with support_session() as s:
        row = s.one("SELECT o.* FROM orders o WHERE status = 'delivered' AND (SELECT count(*) FROM order_lines l WHERE l.order_id = o.order_id) > 1 "
                    "ORDER BY order_id LIMIT 1")
        listing = await s.ok("list_orders", customer_id=row["customer_id"])
        assert row["order_id"] in [o["order_id"] for o in listing["orders"]]
        dates = [o["placed_at"] for o in listing["orders"]]
        assert dates == sorted(dates, reverse=True)
        only = await s.ok("list_orders", customer_id=row["customer_id"], status="delivered")
        assert all(o["status"] == "delivered" for o in only["orders"])
        order = await s.ok("get_order", order_id=row["order_id"])
        assert Decimal(order["total"]) == Decimal(order["subtotal"]) + Decimal(order["shipping"]) - Decimal(order["discount"])
        assert Decimal(order["total"]) * 100 == row["total_minor"]
        assert sum(Decimal(p["amount"]) for p in order["payments"]) == Decimal(order["total"])
        assert {line["line_id"] for line in order["lines"]} == {i for s_ in order["shipments"] for i in s_["line_ids"]}
        line = order["lines"][0]
        assert line["delivered_on"] and (line["return_by"] or line["category"] == "grocery")
        assert s.world.diff() == []


async def test_tracking_reads_late_and_lost() -> None:
    async with support_session() as s:
        lost = s.one("SELECT shipment_id FROM shipments WHERE status = 'lost' ORDER BY shipment_id LIMIT 1")["shipment_id"]
        shipment = await s.ok("track_shipment", shipment_id=lost)
        assert shipment["lost"] is True and shipment["events"][-1]["status"] == "lost"
        stalled = s.one("SELECT s.shipment_id FROM shipments s WHERE s.status = 'in_transit' AND (SELECT max(at) FROM tracking_events t "
                        "WHERE t.shipment_id = s.shipment_id) < '2026-04-09' ORDER BY shipment_id LIMIT 1")["shipment_id"]
        shipment = await s.ok("track_shipment", shipment_id=stalled)
        assert shipment["lost"] is True and shipment["days_since_last_scan"] >= 7
        late = s.one("SELECT shipment_id FROM shipments WHERE status = 'delivered' AND delivered_on > promised_by LIMIT 1")["shipment_id"]
        assert (await s.ok("track_shipment", shipment_id=late))["late"] is True
        on_time = s.one("SELECT shipment_id FROM shipments WHERE status = 'delivered' AND delivered_on <= promised_by LIMIT 1")["shipment_id"]
        shipment = await s.ok("track_shipment", shipment_id=on_time)
        assert shipment["late"] is False and shipment["lost"] is False
        assert [e["at"] for e in shipment["events"]] == sorted(e["at"] for e in shipment["events"])
        assert s.world.diff() == []


async def test_products_reviews_returns_and_coupons() -> None:
    async with support_session() as s:
        hits = await s.ok("search_products", query="kettle")
        assert [p["name"] for p in hits["products"]] == ["Electric Kettle"]
        assert (await s.ok("search_products", query="fernwood", category="apparel"))["total"] == 3
        product = await s.ok("get_product", product_id="PRD-0009")
        assert product["category"] == "apparel" and product["return_window_days"] == 60 and len(product["variants"]) == 4
        reviews = await s.ok("list_reviews", product_id="PRD-0001", limit=3)
        assert len(reviews["reviews"]) <= 3 and reviews["total"] >= len(reviews["reviews"])
        rma = s.one("SELECT r.rma_id FROM returns r JOIN inspections i USING (rma_id) WHERE i.result = 'pass' AND r.status = 'closed' LIMIT 1")
        closed = await s.ok("get_return", rma_id=rma["rma_id"])
        assert closed["inspection"]["result"] == "pass" and Decimal(closed["refundable"]) == 0
        coupon = await s.ok("get_coupon", code="TECH10")
        assert coupon["category"] == "electronics" and coupon["value"] == "10" and coupon["min_subtotal"] == "150.00"
        assert s.world.diff() == []


async def test_subscriptions_and_plans() -> None:
    async with support_session() as s:
        row = s.one("SELECT * FROM subscriptions WHERE status = 'active' ORDER BY subscription_id LIMIT 1")
        sub = await s.ok("get_subscription", subscription_id=row["subscription_id"])
        assert sub["period_end"] == row["period_end"] and sub["days_left_in_period"] > 0
        assert sub["invoices"] and all(i["status"] in ("paid", "open", "void") for i in sub["invoices"])
        plans = await s.ok("list_plans")
        assert {p["family"] for p in plans["plans"]} == {"Coffee Club", "Snack Box"}
        assert s.world.diff() == []


async def test_tickets_queue_and_thread() -> None:
    async with support_session() as s:
        queue = await s.ok("list_tickets", status="new", limit=50)
        dues = [t["first_response_due"] for t in queue["tickets"]]
        assert dues == sorted(dues) and all(t["status"] == "new" for t in queue["tickets"])
        within = await s.ok("list_tickets", status="new", sla="within", limit=100)
        breached = await s.ok("list_tickets", status="new", sla="breached", limit=100)
        assert not any(t["sla_breached"] for t in within["tickets"]) and all(t["sla_breached"] for t in breached["tickets"])
        assert within["total"] + breached["total"] == (await s.ok("list_tickets", status="new"))["total"]
        ticket = await s.ok("get_ticket", ticket_id=queue["tickets"][0]["ticket_id"])
        assert ticket["messages"] and ticket["tags"] and ticket["messages"][0]["kind"] == "customer"
        assert s.world.diff() == []


async def test_help_centre_full_text_search() -> None:
    async with support_session() as s:
        hits = await s.ok("search_kb", query="restocking fee")
        assert hits["articles"][0]["article_id"] == "KB-0002"
        assert (await s.ok("search_kb", query="pausing subscriptions"))["articles"][0]["article_id"] == "KB-0013"  # porter stemming
        assert (await s.ok("search_kb", query="zzzz qqqq"))["articles"] == []
        article = await s.ok("get_kb_article", article_id="KB-0008")
        assert "before the order ships" in article["body"]
        assert s.world.diff() == []
