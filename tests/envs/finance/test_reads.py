"""Every read tool, through a real MCP client, returns data consistent with the world and writes nothing."""

from __future__ import annotations

from decimal import Decimal

from tests.envs.finance.helpers import finance_session


async def test_search_and_get_customer() -> None:
    async with finance_session() as s:
        row = s.one("SELECT * FROM customers WHERE segment = 'wealth' ORDER BY customer_id LIMIT 1")
        page = await s.ok("search_customers", query=row["last_name"].upper(), limit=100)
        assert row["customer_id"] in [c["customer_id"] for c in page["customers"]]
        assert all(row["last_name"].lower() in c["name"].lower() for c in page["customers"])
        assert page["total"] == len(page["customers"]) and page["next_offset"] is None
        by_email = await s.ok("search_customers", query=row["email"])
        assert [c["customer_id"] for c in by_email["customers"]] == [row["customer_id"]]
        wealth = await s.ok("search_customers", query="example", segment="wealth", limit=5)
        expected = s.one("SELECT count(*) AS n FROM customers WHERE segment = 'wealth'")["n"]
        assert wealth["total"] == expected and len(wealth["customers"]) == 5 and wealth["next_offset"] == 5
        second = await s.ok("search_customers", query="example", segment="wealth", limit=5, offset=5)
        assert {c["customer_id"] for c in second["customers"]}.isdisjoint(c["customer_id"] for c in wealth["customers"])
        customer = await s.ok("get_customer", customer_id=row["customer_id"])
        assert customer["last_name"] == row["last_name"] and customer["risk_profile"] == row["risk_profile"]
        assert customer["identity_verified"] is False
        assert "id_last4" not in customer and row["id_last4"] not in str(customer.values())
        accounts = s.world.query("SELECT account_id FROM accounts WHERE customer_id = ? ORDER BY 1", (row["customer_id"],))
        assert customer["account_ids"] == [a["account_id"] for a in accounts]
        assert s.world.diff() == []


async def test_accounts_balances_and_limits() -> None:
    async with finance_session() as s:
        held = s.one("SELECT account_id FROM holds WHERE status = 'active' AND kind = 'standard' ORDER BY hold_id LIMIT 1")
        account = await s.ok("get_account", account_id=held["account_id"])
        row = s.one("SELECT * FROM accounts WHERE account_id = ?", (held["account_id"],))
        posted = s.one("SELECT sum(amount_minor) AS s FROM transactions WHERE account_id = ? AND status = 'posted'",
                       (row["account_id"],))["s"]
        assert Decimal(account["balance"]) == Decimal(posted) / 100 == Decimal(row["balance_minor"]) / 100
        assert Decimal(account["available_balance"]) == (
            Decimal(account["balance"]) + Decimal(account["overdraft_limit"]) - Decimal(account["holds_total"])
            - Decimal(account["pending_debits"]))
        assert Decimal(account["holds_total"]) > 0 and account["active_holds"]
        assert {limit["channel"] for limit in account["daily_limits"]} == {"external_wire", "internal_transfer"}
        listing = await s.ok("list_accounts", customer_id=row["customer_id"])
        mine = next(a for a in listing["accounts"] if a["account_id"] == row["account_id"])
        assert mine["available_balance"] == account["available_balance"]
        pending = s.one("SELECT from_account_id, amount_minor FROM transfers WHERE status = 'pending_approval' "
                        "AND substr(requested_at, 1, 10) = '2026-03-31' ORDER BY transfer_id LIMIT 1")
        waiting = await s.ok("get_account", account_id=pending["from_account_id"])
        wire_limit = next(limit for limit in waiting["daily_limits"] if limit["channel"] == "external_wire")
        assert Decimal(wire_limit["used_today"]) * 100 >= pending["amount_minor"]
        assert Decimal(waiting["pending_debits"]) * 100 >= pending["amount_minor"] + 2500
        assert s.world.diff() == []


async def test_search_transactions_filters_and_totals() -> None:
    async with finance_session() as s:
        account_id = s.one("SELECT account_id, count(*) AS n FROM transactions GROUP BY 1 ORDER BY n DESC LIMIT 1")["account_id"]
        everything = await s.ok("search_transactions", account_id=account_id, limit=100)
        rows = s.world.query("SELECT amount_minor, txn_date FROM transactions WHERE account_id = ?", (account_id,))
        assert everything["total"] == len(rows) and everything["next_offset"] == 100
        assert Decimal(everything["total_amount"]) * 100 == sum(r["amount_minor"] for r in rows)
        dates = [t["txn_date"] for t in everything["transactions"]]
        assert dates == sorted(dates, reverse=True)
        march = await s.ok("search_transactions", account_id=account_id, date_from="2026-03-01", date_to="2026-03-15",
                           direction="debit", min_amount="10.00", max_amount="500", limit=100)
        assert march["total"] == sum(1 for r in rows if "2026-03-01" <= r["txn_date"] <= "2026-03-15"
                                     and -50_000 <= r["amount_minor"] <= -1_000)
        for t in march["transactions"]:
            assert "2026-03-01" <= t["txn_date"] <= "2026-03-15" and Decimal("-500") <= Decimal(t["amount"]) <= Decimal("-10")
        groceries = await s.ok("search_transactions", category="groceries", merchant="trader", limit=5)
        assert groceries["total"] > 0 and all(t["merchant"] == "Trader Joe's" for t in groceries["transactions"])
        customer_id = s.one("SELECT customer_id FROM accounts WHERE account_id = ?", (account_id,))["customer_id"]
        by_customer = await s.ok("search_transactions", customer_id=customer_id, status="pending", limit=100)
        assert all(t["status"] == "pending" and t["posted_on"] is None for t in by_customer["transactions"])
        disputed = s.one("SELECT txn_id, dispute_id FROM disputes ORDER BY dispute_id LIMIT 1")
        txn = await s.ok("get_transaction", txn_id=disputed["txn_id"])
        assert txn["dispute_id"] == disputed["dispute_id"] and txn["kind"] == "card" and txn["card_id"]
        assert s.world.diff() == []


async def test_payees_cards_disputes_notes() -> None:
    async with finance_session() as s:
        customer_id = s.one("SELECT customer_id FROM disputes ORDER BY dispute_id LIMIT 1")["customer_id"]
        cards = await s.ok("list_cards", customer_id=customer_id)
        assert cards["cards"] and all(c["customer_id"] == customer_id for c in cards["cards"])
        assert all(len(c["last4"]) == 4 and c["currency"] in ("USD", "EUR", "GBP") for c in cards["cards"])
        disputes = await s.ok("list_disputes", customer_id=customer_id)
        assert disputes["disputes"] and all(Decimal(d["amount"]) > 0 for d in disputes["disputes"])
        payer = s.one("SELECT customer_id FROM payees WHERE status = 'active' GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")
        payees = await s.ok("list_payees", customer_id=payer["customer_id"])
        assert payees["payees"] and all(p["status"] == "active" for p in payees["payees"])
        external = [p for p in payees["payees"] if p["kind"] == "external"]
        assert all(isinstance(p["verified"], bool) and p["routing_code"] for p in external)
        noted = s.one("SELECT customer_id, count(*) AS n FROM notes GROUP BY 1 ORDER BY n DESC LIMIT 1")
        notes = await s.ok("list_notes", customer_id=noted["customer_id"], limit=1)
        assert notes["total"] == noted["n"] and len(notes["notes"]) == 1
        assert notes["next_offset"] == (1 if noted["n"] > 1 else None)
        assert s.world.diff() == []


async def test_approvals_queue_and_transfers() -> None:
    async with finance_session() as s:
        queue = await s.ok("list_pending_approvals")
        expected = s.one("SELECT count(*) AS n FROM transfers WHERE status = 'pending_approval'")["n"]
        assert queue["total"] == expected >= 5
        for wire in queue["transfers"]:
            assert wire["status"] == "pending_approval" and wire["kind"] == "external_wire" and wire["payee_name"]
            assert Decimal(wire["usd_equivalent"]) > Decimal("10000.00") and wire["fee"] == "25.00"
        first = queue["transfers"][0]
        assert await s.ok("get_transfer", transfer_id=first["transfer_id"]) == first
        fx = s.one("SELECT transfer_id FROM transfers WHERE kind = 'fx' ORDER BY transfer_id LIMIT 1")
        conversion = await s.ok("get_transfer", transfer_id=fx["transfer_id"])
        assert conversion["to_currency"] and conversion["rate"] and conversion["to_amount"]
        assert s.world.diff() == []


async def test_wealth_desk_reads() -> None:
    async with finance_session() as s:
        quote = await s.ok("get_quote", symbol="VTI")
        assert quote["price_date"] == "2026-03-31" and quote["price"] == "286.50" and quote["risk_level"] == "medium"
        closes = s.world.query("SELECT close_minor FROM prices WHERE symbol = 'VTI' AND price_date <= '2026-03-01' "
                               "ORDER BY price_date DESC LIMIT 1")
        basis = Decimal(closes[0]["close_minor"])
        change = ((Decimal(28_650) - basis) / basis * 100).quantize(Decimal("0.01"), rounding="ROUND_DOWN")
        assert quote["previous_close"] and Decimal(quote["change_30d_pct"]) == change
        low = await s.ok("list_instruments", risk_level="low", currency="USD")
        assert low["instruments"] and all(i["risk_level"] == "low" and i["currency"] == "USD" for i in low["instruments"])
        account_id = s.one("SELECT account_id FROM positions GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")["account_id"]
        book = await s.ok("get_positions", account_id=account_id)
        assert book["positions"]
        assert Decimal(book["total_market_value"]) == sum(Decimal(p["market_value"]) for p in book["positions"])
        for p in book["positions"]:
            assert Decimal(p["market_value"]) == p["quantity"] * Decimal(p["price"])
            assert Decimal(p["unrealized_pl"]) == Decimal(p["market_value"]) - p["quantity"] * Decimal(p["avg_cost"])
        rate = await s.ok("get_fx_rate", from_currency="GBP", to_currency="EUR")
        assert rate["spread_bps"] == 75
        mid = Decimal(rate["mid_rate"])
        assert Decimal(rate["customer_rate"]) == (mid * (1 - Decimal(75) / 10_000)).quantize(Decimal("0.000001"), rounding="ROUND_DOWN")
        assert s.world.diff() == []


async def test_alerts_queue() -> None:
    async with finance_session() as s:
        high = await s.ok("list_alerts", severity="high", status="open", limit=100)
        assert high["total"] > 0 and all(a["severity"] == "high" and a["status"] == "open" for a in high["alerts"])
        kinds = {a["kind"] for a in (await s.ok("list_alerts", limit=100))["alerts"]}
        assert {"charge_after_freeze", "large_foreign_charge", "structuring", "possible_duplicate"} <= kinds
        alert = high["alerts"][0]
        assert alert["txn_id"] and (await s.ok("get_transaction", txn_id=alert["txn_id"]))["account_id"] == alert["account_id"]
        mine = await s.ok("list_alerts", customer_id=alert["customer_id"])
        assert alert["alert_id"] in [a["alert_id"] for a in mine["alerts"]]
        assert s.world.diff() == []


async def test_submit_answer_writes_nothing() -> None:
    async with finance_session() as s:
        receipt = await s.ok("submit_answer", answer="The balance is 10.00 USD", outcome="completed",
                             values={"balance": "10.00", "currency": "USD"})
        assert receipt == {"received": True, "submitted_at": "2026-03-31T17:00:00+00:00", "value_names": ["balance", "currency"]}
        assert s.last_event().arguments["values"] == {"balance": "10.00", "currency": "USD"}
        await s.ok("submit_answer", answer="Declined.", outcome="refused", reason_code="kyc_not_verified")
        assert s.last_event().arguments == {"answer": "Declined.", "outcome": "refused", "reason_code": "kyc_not_verified"}
        assert s.world.diff() == []
