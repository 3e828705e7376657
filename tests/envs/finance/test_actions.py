"""Each action changes exactly the rows it should (per-call changes in the record, net diff of the world)."""

from __future__ import annotations

import json
from decimal import ROUND_DOWN, Decimal

from tests.envs.finance.helpers import Session, changed_keys, finance_session

VERIFIED_CUSTOMER = "SELECT c.customer_id FROM customers c WHERE c.kyc_status = 'verified' "


def _audit(s: Session) -> tuple[str, str, tuple[str]]:
    return ("audit_log", "insert", (s.next_id("audit_log", "audit_id"),))


def _balance(s: Session, account_id: str) -> int:
    return int(s.one("SELECT balance_minor FROM accounts WHERE account_id = ?", (account_id,))["balance_minor"])


async def test_verify_identity_and_add_note() -> None:
    async with finance_session() as s:
        customer_id = s.one(VERIFIED_CUSTOMER + "ORDER BY customer_id LIMIT 1")["customer_id"]
        expected = {("verifications", "insert", (s.next_id("verifications", "verification_id"),)), _audit(s)}
        await s.verify(customer_id)
        assert s.touched() == expected
        verified = expected
        assert (await s.ok("get_customer", customer_id=customer_id))["identity_verified"] is True
        note_id = s.next_id("notes", "note_id")
        expected = {("notes", "insert", (note_id,)), _audit(s)}
        note = await s.ok("add_note", customer_id=customer_id, body="Customer confirmed new phone number.", category="contact")
        assert s.touched() == expected and note["note_id"] == note_id and note["author_id"] == "STF-0100"
        audit = s.one("SELECT * FROM audit_log WHERE audit_id = ?", (expected - {("notes", "insert", (note_id,))}).pop()[2])
        assert audit["action"] == "add_note" and audit["actor"] == "STF-0100" and audit["at"] == "2026-03-31T17:00:00+00:00"
        assert changed_keys(s.world.diff()) == verified | expected


async def test_place_and_release_holds() -> None:
    async with finance_session() as s:
        account = s.one("SELECT account_id, currency FROM accounts WHERE status = 'open' AND type = 'checking' "
                        "AND balance_minor > 100000 ORDER BY account_id LIMIT 1")
        before = await s.ok("get_account", account_id=account["account_id"])
        hold_id = s.next_id("holds", "hold_id")
        expected = {("holds", "insert", (hold_id,)), _audit(s)}
        hold = await s.ok("place_hold", account_id=account["account_id"], amount="250.00", currency=account["currency"],
                          reason="Uncleared cheque deposit", kind="compliance")
        assert s.touched() == expected and hold["status"] == "active" and hold["kind"] == "compliance"
        after = await s.ok("get_account", account_id=account["account_id"])
        assert Decimal(before["available_balance"]) - Decimal(after["available_balance"]) == Decimal("250.00")
        assert after["balance"] == before["balance"]
        expected = {("holds", "update", (hold_id,)), _audit(s)}
        released = await s.ok("release_hold", hold_id=hold_id, reason="Review cleared", approver_id="STF-0005")
        assert s.touched() == expected and released["status"] == "released" and released["released_by"] == "STF-0100"
        legal = s.one("SELECT hold_id FROM holds WHERE kind = 'legal' AND status = 'active' ORDER BY hold_id LIMIT 1")["hold_id"]
        expected = {("holds", "update", (legal,)), _audit(s)}
        await s.ok("release_hold", hold_id=legal, reason="Garnishment order lifted by the court", approver_id="STF-0005")
        assert s.touched() == expected
        standard = s.one("SELECT hold_id FROM holds WHERE kind = 'standard' AND status = 'active' ORDER BY hold_id LIMIT 1")["hold_id"]
        await s.ok("release_hold", hold_id=standard, reason="Cheque cleared")
        assert s.touched() == {("holds", "update", (standard,)), ("audit_log", "insert", (s.one("SELECT max(audit_id) AS m FROM audit_log")["m"],))}


async def test_freeze_account_and_close_accounts() -> None:
    async with finance_session() as s:
        target = s.one("SELECT account_id FROM accounts WHERE status = 'open' ORDER BY account_id LIMIT 1")["account_id"]
        expected = {("accounts", "update", (target,)), _audit(s)}
        frozen = await s.ok("freeze_account", account_id=target, reason="Suspected account takeover")
        assert s.touched() == expected and frozen["status"] == "frozen" and frozen["status_reason"] == "Suspected account takeover"
        # a checking account with cards, emptied into the same customer's savings, then closed
        row = s.one(
            "SELECT a.account_id, a.customer_id, a.currency, a.balance_minor, b.account_id AS savings FROM accounts a "
            "JOIN accounts b ON b.customer_id = a.customer_id AND b.type = 'savings' AND b.status = 'open' AND b.currency = a.currency "
            "WHERE a.type = 'checking' AND a.status = 'open' AND a.balance_minor BETWEEN 100 AND 2000000 "
            "AND EXISTS (SELECT 1 FROM cards c WHERE c.account_id = a.account_id AND c.status != 'cancelled') "
            "AND NOT EXISTS (SELECT 1 FROM transactions t WHERE t.account_id = a.account_id AND t.status = 'pending') "
            "AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.account_id = a.account_id AND h.status = 'active') "
            "ORDER BY a.account_id LIMIT 1")
        await s.verify(row["customer_id"])
        amount = f"{row['balance_minor'] // 100}.{row['balance_minor'] % 100:02d}"
        await s.ok("transfer_internal", from_account_id=row["account_id"], to_account_id=row["savings"], amount=amount,
                   currency=row["currency"], memo="Closing balance")
        cards = [c["card_id"] for c in s.world.query(
            "SELECT card_id FROM cards WHERE account_id = ? AND status != 'cancelled' ORDER BY card_id", (row["account_id"],))]
        expected = {("accounts", "update", (row["account_id"],)), _audit(s)} | {("cards", "update", (c,)) for c in cards}
        closure = await s.ok("close_account", account_id=row["account_id"], reason="Customer moving abroad")
        assert s.touched() == expected
        assert closure["cards_cancelled"] == cards and closure["account"]["status"] == "closed"
        assert closure["account"]["closed_on"] == "2026-03-31"
        assert {c["status"] for c in s.world.query("SELECT status FROM cards WHERE account_id = ?", (row["account_id"],))} == {"cancelled"}


async def test_add_payee() -> None:
    async with finance_session() as s:
        customer_id = s.one(VERIFIED_CUSTOMER + "ORDER BY customer_id LIMIT 1 OFFSET 3")["customer_id"]
        await s.verify(customer_id)
        payee_id = s.next_id("payees", "payee_id")
        expected = {("payees", "insert", (payee_id,)), _audit(s)}
        payee = await s.ok("add_payee", customer_id=customer_id, name="Marta Keller", bank_name="Deutsche Bank",
                           account_number="DE89 3704 0044 0532 0130 00", routing_code="deutdeff", currency="EUR")
        assert s.touched() == expected
        assert payee["account_number"] == "DE89370400440532013000" and payee["routing_code"] == "DEUTDEFF"
        assert payee["verified"] is False and payee["kind"] == "external" and payee["added_on"] == "2026-03-31"


async def test_internal_transfer_to_a_registered_internal_payee() -> None:
    async with finance_session() as s:
        row = s.one(
            "SELECT a.account_id AS source, p.internal_account_id AS target, a.currency, a.customer_id FROM payees p "
            "JOIN accounts a ON a.customer_id = p.customer_id AND a.status = 'open' AND a.type = 'checking' "
            "JOIN accounts t ON t.account_id = p.internal_account_id AND t.status = 'open' AND t.currency = a.currency "
            "WHERE p.kind = 'internal' AND p.status = 'active' AND a.balance_minor > 10000 ORDER BY p.payee_id LIMIT 1")
        await s.verify(row["customer_id"])
        source, target = _balance(s, row["source"]), _balance(s, row["target"])
        transfer_id = s.next_id("transfers", "transfer_id")
        txns = s.next_ids("transactions", "txn_id", 2)
        expected = {("transfers", "insert", (transfer_id,)), ("accounts", "update", (row["source"],)),
                    ("accounts", "update", (row["target"],)), _audit(s)} | {("transactions", "insert", (t,)) for t in txns}
        transfer = await s.ok("transfer_internal", from_account_id=row["source"], to_account_id=row["target"], amount="42.50",
                              currency=row["currency"], memo="Birthday present")
        assert s.touched() == expected
        assert transfer["status"] == "completed" and transfer["amount"] == "42.50" and transfer["memo"] == "Birthday present"
        assert _balance(s, row["source"]) == source - 4250 and _balance(s, row["target"]) == target + 4250


def _wire_sender(s: Session, currency: str, room: int) -> dict[str, object]:
    return s.one(
        "SELECT a.account_id, a.customer_id, p.payee_id FROM accounts a JOIN customers c USING (customer_id) "
        "JOIN payees p ON p.customer_id = a.customer_id AND p.kind = 'external' AND p.verified = 1 AND p.status = 'active' "
        "AND p.currency = a.currency JOIN daily_limits l ON l.account_id = a.account_id AND l.channel = 'external_wire' "
        "WHERE a.status = 'open' AND a.type = 'checking' AND a.currency = ? AND c.kyc_status = 'verified' "
        "AND a.balance_minor > ? AND l.limit_minor >= ? "
        "AND NOT EXISTS (SELECT 1 FROM transfers t WHERE t.from_account_id = a.account_id AND t.status = 'pending_approval') "
        "AND NOT EXISTS (SELECT 1 FROM transactions x WHERE x.account_id = a.account_id AND x.status = 'pending') "
        "AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.account_id = a.account_id AND h.status = 'active') "
        "ORDER BY a.account_id LIMIT 1", (currency, room, room))


async def test_small_wire_completes_and_large_wire_waits_for_approval() -> None:
    async with finance_session() as s:
        row = _wire_sender(s, "USD", 1_300_000)
        account_id = str(row["account_id"])
        await s.verify(str(row["customer_id"]))
        start = _balance(s, account_id)
        transfer_id = s.next_id("transfers", "transfer_id")
        txns = s.next_ids("transactions", "txn_id", 2)
        expected = {("transfers", "insert", (transfer_id,)), ("accounts", "update", (account_id,)), _audit(s)}
        expected |= {("transactions", "insert", (t,)) for t in txns}
        small = await s.ok("send_wire", from_account_id=account_id, payee_id=row["payee_id"], amount="100.00", currency="USD")
        assert s.touched() == expected and small["status"] == "completed" and small["fee"] == "25.00"
        assert _balance(s, account_id) == start - 12_500
        big_id = s.next_id("transfers", "transfer_id")
        txns = s.next_ids("transactions", "txn_id", 2)
        expected = {("transfers", "insert", (big_id,)), _audit(s)} | {("transactions", "insert", (t,)) for t in txns}
        big = await s.ok("send_wire", from_account_id=account_id, payee_id=row["payee_id"], amount="12000.00", currency="USD",
                         memo="House deposit")
        assert s.touched() == expected and big["status"] == "pending_approval"
        assert _balance(s, account_id) == start - 12_500, "a wire awaiting approval only reserves funds"
        account = await s.ok("get_account", account_id=account_id)
        assert account["pending_debits"] == "12025.00"
        expected = {("transfers", "update", (big_id,)), ("accounts", "update", (account_id,)), _audit(s),
                    ("approvals", "insert", (s.next_id("approvals", "approval_id"),))}
        expected |= {("transactions", "update", (t,)) for t in txns}
        approved = await s.ok("approve_transfer", transfer_id=big_id, approver_id="STF-0001", comment="Called the customer back")
        assert s.touched() == expected
        assert approved["status"] == "completed" and approved["decided_by"] == "STF-0001"
        assert _balance(s, account_id) == start - 12_500 - 1_202_500
        assert (await s.ok("get_account", account_id=account_id))["pending_debits"] == "0.00"
        posted = s.world.query("SELECT status, posted_on, memo FROM transactions WHERE transfer_id = ?", (big_id,))
        assert all(p["status"] == "posted" and p["posted_on"] == "2026-03-31" and "awaiting" not in p["memo"] for p in posted)


async def test_reject_pending_wire_releases_funds() -> None:
    async with finance_session() as s:
        wire = s.one("SELECT * FROM transfers WHERE status = 'pending_approval' ORDER BY transfer_id LIMIT 1")
        before = await s.ok("get_account", account_id=wire["from_account_id"])
        txns = [r["txn_id"] for r in s.world.query("SELECT txn_id FROM transactions WHERE transfer_id = ?", (wire["transfer_id"],))]
        expected = {("transfers", "update", (wire["transfer_id"],)), _audit(s),
                    ("approvals", "insert", (s.next_id("approvals", "approval_id"),))}
        expected |= {("transactions", "update", (t,)) for t in txns}
        rejected = await s.ok("reject_transfer", transfer_id=wire["transfer_id"], reason="Customer cancelled the purchase")
        assert s.touched() == expected and rejected["status"] == "rejected"
        after = await s.ok("get_account", account_id=wire["from_account_id"])
        released = Decimal(after["available_balance"]) - Decimal(before["available_balance"])
        assert released * 100 == wire["amount_minor"] + wire["fee_minor"] and after["balance"] == before["balance"]


async def test_cards_and_disputes() -> None:
    async with finance_session() as s:
        txn = s.one(
            "SELECT t.txn_id, t.card_id, t.amount_minor, a.customer_id FROM transactions t JOIN accounts a USING (account_id) "
            "JOIN cards c ON c.card_id = t.card_id WHERE t.kind = 'card' AND t.status = 'posted' AND t.amount_minor < -5000 "
            "AND t.posted_on >= '2026-03-01' AND c.status = 'active' AND a.status = 'open' "
            "AND NOT EXISTS (SELECT 1 FROM disputes d WHERE d.txn_id = t.txn_id) ORDER BY t.txn_id LIMIT 1")
        expected = {("cards", "update", (txn["card_id"],)), _audit(s)}
        card = await s.ok("freeze_card", card_id=txn["card_id"], reason="Customer does not recognise a charge")
        assert s.touched() == expected and card["status"] == "frozen" and card["frozen_at"] == "2026-03-31T17:00:00+00:00"
        await s.verify(txn["customer_id"])
        dispute_id = s.next_id("disputes", "dispute_id")
        expected = {("disputes", "insert", (dispute_id,)), _audit(s)}
        dispute = await s.ok("open_dispute", txn_id=txn["txn_id"], reason="fraud", description="Not me", amount="20.00")
        assert s.touched() == expected and dispute["amount"] == "20.00" and dispute["status"] == "open"
        assert (await s.ok("get_transaction", txn_id=txn["txn_id"]))["dispute_id"] == dispute_id
        expected = {("cards", "update", (txn["card_id"],)), _audit(s)}
        card = await s.ok("unfreeze_card", card_id=txn["card_id"])
        assert s.touched() == expected and card["status"] == "active" and card["frozen_at"] is None


async def test_orders_update_cash_and_positions() -> None:
    async with finance_session() as s:
        row = s.one(
            "SELECT a.account_id, a.customer_id FROM accounts a JOIN customers c USING (customer_id) WHERE a.type = 'brokerage' "
            "AND a.status = 'open' AND a.currency = 'USD' AND c.kyc_status = 'verified' AND c.risk_profile = 'aggressive' "
            "AND a.balance_minor > 500000 AND NOT EXISTS (SELECT 1 FROM positions p WHERE p.account_id = a.account_id "
            "AND p.symbol = 'NVDA') ORDER BY a.account_id LIMIT 1")
        account_id = str(row["account_id"])
        await s.verify(str(row["customer_id"]))
        cash = _balance(s, account_id)
        price = int(s.one("SELECT close_minor FROM prices WHERE symbol = 'NVDA' AND price_date = '2026-03-31'")["close_minor"])
        order_id = s.next_id("orders", "order_id")
        expected = {("orders", "insert", (order_id,)), ("transactions", "insert", (s.next_id("transactions", "txn_id"),)),
                    ("accounts", "update", (account_id,)), ("positions", "insert", (account_id, "NVDA")), _audit(s)}
        order = await s.ok("place_order", account_id=account_id, symbol="NVDA", side="buy", quantity=3)
        assert s.touched() == expected
        assert order["gross"] == f"{3 * price // 100}.{3 * price % 100:02d}" and order["position_after"] == 3
        assert _balance(s, account_id) == cash - 3 * price
        await s.ok("place_order", account_id=account_id, symbol="NVDA", side="buy", quantity=2)
        assert ("positions", "update", (account_id, "NVDA")) in s.touched()
        await s.ok("place_order", account_id=account_id, symbol="NVDA", side="sell", quantity=4)
        assert ("positions", "update", (account_id, "NVDA")) in s.touched()
        sold = await s.ok("place_order", account_id=account_id, symbol="NVDA", side="sell", quantity=1)
        assert ("positions", "delete", (account_id, "NVDA")) in s.touched() and sold["position_after"] == 0
        assert _balance(s, account_id) == cash
        net = changed_keys(s.world.diff())
        assert ("positions", "insert", (account_id, "NVDA")) not in net and ("accounts", "update", (account_id,)) not in net


async def test_currency_conversion_applies_the_spread() -> None:
    async with finance_session() as s:
        row = s.one(
            "SELECT a.account_id AS source, b.account_id AS target, a.customer_id, a.currency AS c1, b.currency AS c2 "
            "FROM accounts a JOIN accounts b ON b.customer_id = a.customer_id AND b.currency != a.currency AND b.status = 'open' "
            "WHERE a.status = 'open' AND a.balance_minor > 200000 ORDER BY a.account_id LIMIT 1")
        await s.verify(row["customer_id"])
        rate = await s.ok("get_fx_rate", from_currency=row["c1"], to_currency=row["c2"])
        source, target = _balance(s, row["source"]), _balance(s, row["target"])
        transfer_id = s.next_id("transfers", "transfer_id")
        expected = {("transfers", "insert", (transfer_id,)), ("accounts", "update", (row["source"],)),
                    ("accounts", "update", (row["target"],)), _audit(s)}
        expected |= {("transactions", "insert", (t,)) for t in s.next_ids("transactions", "txn_id", 2)}
        conversion = await s.ok("convert_currency", from_account_id=row["source"], to_account_id=row["target"], amount="1234.57",
                                currency=row["c1"])
        assert s.touched() == expected
        credited = (Decimal("1234.57") * Decimal(rate["customer_rate"])).quantize(Decimal("0.01"), rounding=ROUND_DOWN)
        assert conversion["credited"] == str(credited) and conversion["rate"] == rate["customer_rate"]
        assert _balance(s, row["source"]) == source - 123_457 and _balance(s, row["target"]) == target + int(credited * 100)


async def test_alert_escalation_and_closing() -> None:
    async with finance_session() as s:
        high = s.one("SELECT alert_id FROM compliance_alerts WHERE status = 'open' AND severity = 'high' ORDER BY alert_id LIMIT 1")
        expected = {("compliance_alerts", "update", (high["alert_id"],)), _audit(s)}
        alert = await s.ok("escalate_alert", alert_id=high["alert_id"], reason="Charge after the card was frozen")
        assert s.touched() == expected
        assert alert["status"] == "escalated" and alert["escalated_to"] == "Financial Crimes Unit"
        low = s.one("SELECT alert_id FROM compliance_alerts WHERE status = 'open' AND severity != 'high' ORDER BY alert_id LIMIT 1")
        audit_key = _audit(s)
        closed = await s.ok("close_alert", alert_id=low["alert_id"], resolution="Customer confirmed both charges")
        assert s.touched() == {("compliance_alerts", "update", (low["alert_id"],)), audit_key}
        assert closed["status"] == "closed" and closed["resolved_at"] == "2026-03-31T17:00:00+00:00"
        details = json.loads(s.one("SELECT details FROM audit_log WHERE audit_id = ?", (audit_key[2][0],))["details"])
        assert details == {"resolution": "Customer confirmed both charges"}


async def test_the_same_calls_make_the_same_world() -> None:
    hashes = []
    for _ in range(2):
        async with finance_session() as s:
            customer_id = s.one(VERIFIED_CUSTOMER + "ORDER BY customer_id LIMIT 1 OFFSET 7")["customer_id"]
            await s.verify(customer_id)
            await s.ok("add_note", customer_id=customer_id, body="Called about a new card.")
            wire = s.one("SELECT transfer_id FROM transfers WHERE status = 'pending_approval' ORDER BY transfer_id LIMIT 1")
            await s.ok("reject_transfer", transfer_id=wire["transfer_id"], reason="Customer cancelled")
            hashes.append(s.world.hash())
            ids = [e.result for e in s.episode.record.tool_calls]
    assert hashes[0] == hashes[1], "ids and timestamps come from the world, never from uuids or the machine clock"
    assert ids[1]["note_id"] and ids[0]["verification_id"]
