"""Every business rule refuses with its stable code and leaves the world exactly as it was (hash included)."""

from __future__ import annotations

from decimal import Decimal

from tests.envs.finance.helpers import Session, finance_session


def _money(minor: int) -> str:
    return f"{minor // 100}.{minor % 100:02d}"


def _account(s: Session, where: str, params: tuple[object, ...] = ()) -> dict[str, object]:
    return s.one(f"SELECT a.*, c.kyc_status, c.risk_profile FROM accounts a JOIN customers c USING (customer_id) WHERE {where} "
                 "ORDER BY a.account_id LIMIT 1", params)


async def test_account_and_hold_rules() -> None:
    async with finance_session() as s:
        closed = _account(s, "a.status = 'closed'")
        frozen = _account(s, "a.status = 'frozen' AND a.type = 'checking'")
        checking = _account(s, "a.status = 'open' AND a.type = 'checking' AND a.currency = 'USD' AND a.balance_minor > 100000 "
                               "AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.account_id = a.account_id AND h.status = 'active')")
        await s.verify(str(checking["customer_id"]))
        start = s.world.hash()
        usd = {"currency": "USD", "reason": "Uncleared cheque"}
        await s.refused("place_hold", "account_closed", account_id=closed["account_id"], amount="1.00", **usd)
        await s.refused("place_hold", "currency_mismatch", account_id=checking["account_id"], amount="1.00",
                        currency="EUR", reason="Uncleared cheque")
        await s.refused("place_hold", "invalid_amount", account_id=checking["account_id"], amount="0.00", **usd)
        await s.refused("place_hold", "insufficient_funds", account_id=checking["account_id"], amount="9999999999.99", **usd)
        await s.refused("place_hold", "not_found", account_id="ACC-999999", amount="1.00", **usd)
        await s.refused("freeze_account", "already_frozen", account_id=frozen["account_id"], reason="Fraud review")
        await s.refused("freeze_account", "account_closed", account_id=closed["account_id"], reason="Fraud review")
        await s.refused("close_account", "account_frozen", account_id=frozen["account_id"], reason="Customer request")
        await s.refused("close_account", "account_closed", account_id=closed["account_id"], reason="Customer request")
        await s.refused("close_account", "balance_not_zero", account_id=checking["account_id"], reason="Customer request")
        other = _account(s, "a.status = 'open' AND a.customer_id != ?", (checking["customer_id"],))
        await s.refused("close_account", "identity_not_verified", account_id=other["account_id"], reason="Customer request")
        legal = s.one("SELECT * FROM holds WHERE kind = 'legal' AND status = 'active' ORDER BY hold_id LIMIT 1")
        released = s.one("SELECT * FROM holds WHERE status = 'released' ORDER BY hold_id LIMIT 1")
        reason = {"reason": "Court order lifted"}
        await s.refused("release_hold", "approval_required", hold_id=legal["hold_id"], **reason)
        await s.refused("release_hold", "same_approver", hold_id=legal["hold_id"], approver_id=legal["placed_by"], **reason)
        await s.refused("release_hold", "same_approver", hold_id=legal["hold_id"], approver_id="STF-0100", **reason)
        await s.refused("release_hold", "approver_not_authorized", hold_id=legal["hold_id"], approver_id="STF-0001", **reason)
        await s.refused("release_hold", "not_found", hold_id=legal["hold_id"], approver_id="STF-9999", **reason)
        await s.refused("release_hold", "hold_not_active", hold_id=released["hold_id"], **reason)
        await s.refused("release_hold", "not_found", hold_id="HLD-99999", **reason)
        assert s.world.hash() == start


async def test_closing_needs_an_empty_settled_account() -> None:
    async with finance_session() as s:
        pending = _account(s, "a.status = 'open' AND EXISTS (SELECT 1 FROM transactions t WHERE t.account_id = a.account_id "
                              "AND t.status = 'pending')")
        held = _account(s, "a.status = 'open' AND EXISTS (SELECT 1 FROM holds h WHERE h.account_id = a.account_id "
                           "AND h.status = 'active')")
        invested = _account(s, "a.status = 'open' AND a.type = 'brokerage' AND EXISTS (SELECT 1 FROM positions p "
                               "WHERE p.account_id = a.account_id)")
        # the balances are zeroed by setup SQL (as a task's setup would): only the rule under test remains
        for account in (pending, held, invested):
            s.world.execute("UPDATE accounts SET balance_minor = 0 WHERE account_id = ?", (account["account_id"],))
            await s.verify(str(account["customer_id"]))
        start = s.world.hash()
        await s.refused("close_account", "pending_items", account_id=pending["account_id"], reason="Customer request")
        await s.refused("close_account", "pending_items", account_id=held["account_id"], reason="Customer request")
        await s.refused("close_account", "positions_open", account_id=invested["account_id"], reason="Customer request")
        assert s.world.hash() == start


async def test_internal_transfer_rules() -> None:
    async with finance_session() as s:
        row = s.one(
            "SELECT a.account_id AS checking, b.account_id AS savings, a.customer_id, a.balance_minor FROM accounts a "
            "JOIN accounts b ON b.customer_id = a.customer_id AND b.type = 'savings' AND b.status = 'open' AND b.currency = a.currency "
            "JOIN customers c ON c.customer_id = a.customer_id AND c.segment = 'retail' "
            "WHERE a.type = 'checking' AND a.status = 'open' AND a.currency = 'USD' AND b.balance_minor > 2600000 "
            "ORDER BY a.account_id LIMIT 1")
        stranger = _account(s, "a.status = 'open' AND a.currency = 'USD' AND a.customer_id != ?", (row["customer_id"],))
        euro = _account(s, "a.status = 'open' AND a.currency = 'EUR'")
        frozen = _account(s, "a.status = 'frozen' AND a.currency = 'USD'")
        args = {"currency": "USD", "amount": "10.00"}
        start = s.world.hash()
        await s.refused("transfer_internal", "identity_not_verified", from_account_id=row["checking"], to_account_id=row["savings"], **args)
        await s.verify(str(row["customer_id"]))
        start = s.world.hash()
        await s.refused("transfer_internal", "same_account", from_account_id=row["checking"], to_account_id=row["checking"], **args)
        await s.refused("transfer_internal", "account_frozen", from_account_id=row["checking"], to_account_id=frozen["account_id"], **args)
        await s.refused("transfer_internal", "account_frozen", from_account_id=frozen["account_id"], to_account_id=row["checking"], **args)
        await s.refused("transfer_internal", "currency_mismatch", from_account_id=row["checking"], to_account_id=euro["account_id"], **args)
        await s.refused("transfer_internal", "currency_mismatch", from_account_id=row["checking"], to_account_id=row["savings"],
                        amount="10.00", currency="GBP")
        await s.refused("transfer_internal", "payee_not_registered", from_account_id=row["checking"],
                        to_account_id=stranger["account_id"], **args)
        await s.refused("transfer_internal", "daily_limit_exceeded", from_account_id=row["savings"], to_account_id=row["checking"],
                        amount="25000.01", currency="USD")
        too_much = _money(int(row["balance_minor"]) + 5_000_000)
        await s.refused("transfer_internal", "insufficient_funds", from_account_id=row["checking"], to_account_id=row["savings"],
                        amount="9999.99" if row["balance_minor"] < 900_000 else too_much, currency="USD")
        await s.refused("transfer_internal", "invalid_amount", from_account_id=row["checking"], to_account_id=row["savings"],
                        amount="0", currency="USD")
        assert s.world.hash() == start


def _sender(s: Session, extra: str = "", params: tuple[object, ...] = ()) -> dict[str, object]:
    return s.one(
        "SELECT a.account_id, a.customer_id, a.currency, a.balance_minor, p.payee_id, c.kyc_status, l.limit_minor "
        "FROM accounts a JOIN customers c USING (customer_id) JOIN payees p ON p.customer_id = a.customer_id "
        "JOIN daily_limits l ON l.account_id = a.account_id AND l.channel = 'external_wire' "
        f"WHERE a.status = 'open' AND a.type = 'checking' {extra} ORDER BY a.account_id, p.payee_id LIMIT 1", params)


async def test_wire_rules() -> None:
    async with finance_session() as s:
        good = "AND p.kind = 'external' AND p.verified = 1 AND p.status = 'active' AND p.currency = a.currency "
        ok = _sender(s, good + "AND c.kyc_status = 'verified' AND a.balance_minor > 700000 AND l.limit_minor = 500000 AND a.currency = 'USD'")
        poor = _sender(s, good + "AND c.kyc_status = 'verified' AND a.balance_minor + a.overdraft_limit_minor < 600000 "
                             "AND a.balance_minor > 10000 AND a.currency = 'USD'")
        expired = _sender(s, good + "AND c.kyc_status != 'verified'")
        unverified = _sender(s, "AND p.kind = 'external' AND p.verified = 0 AND p.status = 'active'")
        removed = _sender(s, "AND p.status = 'removed'")
        internal = _sender(s, "AND p.kind = 'internal'")
        foreign = _sender(s, "AND p.kind = 'external' AND p.verified = 1 AND p.status = 'active' AND p.currency != a.currency")
        stranger = s.one("SELECT payee_id FROM payees WHERE customer_id != ? ORDER BY payee_id LIMIT 1", (ok["customer_id"],))
        frozen = _account(s, "a.status = 'frozen'")
        for row in (ok, poor, expired):
            await s.verify(str(row["customer_id"]))
        start = s.world.hash()

        def wire(row: dict[str, object], **extra: object) -> dict[str, object]:
            return {"from_account_id": row["account_id"], "payee_id": row["payee_id"], "amount": "100.00",
                    "currency": row["currency"], **extra}

        await s.refused("send_wire", "account_frozen", **wire(ok, from_account_id=frozen["account_id"]))
        await s.refused("send_wire", "not_found", **wire(ok, payee_id=stranger["payee_id"]))
        await s.refused("send_wire", "not_found", **wire(ok, from_account_id="ACC-999999"))
        await s.refused("send_wire", "payee_removed", **wire(removed))
        await s.refused("send_wire", "invalid_payee", **wire(internal))
        await s.refused("send_wire", "payee_not_verified", **wire(unverified))
        await s.refused("send_wire", "currency_mismatch", **wire(foreign))
        await s.refused("send_wire", "currency_mismatch", **wire(ok, currency="GBP"))
        await s.refused("send_wire", "kyc_not_verified", **wire(expired))
        fresh = _sender(s, good + "AND c.kyc_status = 'verified' AND a.customer_id NOT IN (?, ?)", (ok["customer_id"], poor["customer_id"]))
        await s.refused("send_wire", "identity_not_verified", **wire(fresh))
        await s.refused("send_wire", "daily_limit_exceeded", **wire(ok, amount="5000.01"))
        available = Decimal((await s.ok("get_account", account_id=poor["account_id"]))["available_balance"])
        await s.refused("send_wire", "insufficient_funds", **wire(poor, amount=str(available - Decimal("10.00"))))
        await s.refused("send_wire", "invalid_amount", **wire(ok, amount="0.00"))
        assert s.world.hash() == start


async def test_approval_rules() -> None:
    async with finance_session() as s:
        by_supervisor = s.one("SELECT * FROM transfers WHERE status = 'pending_approval' AND requested_by = 'STF-0002'")
        pending = s.one("SELECT * FROM transfers WHERE status = 'pending_approval' AND requested_by != 'STF-0002' "
                        "ORDER BY amount_minor DESC LIMIT 1")
        done = s.one("SELECT transfer_id FROM transfers WHERE status = 'completed' ORDER BY transfer_id LIMIT 1")
        # setup as a task would: the requesting account gets frozen, and one supervisor's limit is too small
        frozen = s.one("SELECT * FROM transfers WHERE status = 'pending_approval' AND transfer_id NOT IN (?, ?) "
                       "ORDER BY transfer_id LIMIT 1", (by_supervisor["transfer_id"], pending["transfer_id"]))
        s.world.execute("UPDATE accounts SET status = 'frozen', status_reason = 'Fraud review' WHERE account_id = ?",
                        (frozen["from_account_id"],))
        s.world.execute("UPDATE staff SET approval_limit_minor = 100000 WHERE staff_id = 'STF-0003'")
        start = s.world.hash()
        await s.refused("approve_transfer", "same_approver", transfer_id=by_supervisor["transfer_id"], approver_id="STF-0002")
        await s.refused("approve_transfer", "approver_not_authorized", transfer_id=pending["transfer_id"], approver_id="STF-0100")
        await s.refused("approve_transfer", "approver_not_authorized", transfer_id=pending["transfer_id"], approver_id="STF-0004")
        await s.refused("approve_transfer", "approver_not_authorized", transfer_id=pending["transfer_id"], approver_id="STF-0005")
        await s.refused("approve_transfer", "approval_limit_exceeded", transfer_id=pending["transfer_id"], approver_id="STF-0003")
        await s.refused("approve_transfer", "not_found", transfer_id=pending["transfer_id"], approver_id="STF-9999")
        await s.refused("approve_transfer", "account_frozen", transfer_id=frozen["transfer_id"], approver_id="STF-0001")
        await s.refused("approve_transfer", "not_pending", transfer_id=done["transfer_id"], approver_id="STF-0001")
        await s.refused("approve_transfer", "not_found", transfer_id="TRF-999999", approver_id="STF-0001")
        await s.refused("reject_transfer", "not_pending", transfer_id=done["transfer_id"], reason="Fraud suspected")
        assert s.world.hash() == start


async def test_payee_rules() -> None:
    async with finance_session() as s:
        customer = s.one("SELECT customer_id FROM customers WHERE kyc_status = 'verified' ORDER BY customer_id LIMIT 1")
        expired = s.one("SELECT customer_id FROM customers WHERE kyc_status = 'expired' ORDER BY customer_id LIMIT 1")
        existing = s.one("SELECT * FROM payees WHERE customer_id = ? AND status = 'active' AND kind = 'external'",
                         (customer["customer_id"],))
        payee = {"name": "Jane Roe", "bank_name": "Chase Bank", "account_number": "123456789", "routing_code": "021000021",
                 "currency": "USD"}
        await s.refused("add_payee", "identity_not_verified", customer_id=customer["customer_id"], **payee)
        await s.verify(customer["customer_id"])
        await s.verify(expired["customer_id"])
        start = s.world.hash()
        await s.refused("add_payee", "kyc_not_verified", customer_id=expired["customer_id"], **payee)
        cid = customer["customer_id"]
        await s.refused("add_payee", "invalid_routing_code", customer_id=cid, **{**payee, "routing_code": "021000022"})
        await s.refused("add_payee", "invalid_routing_code", customer_id=cid, **{**payee, "routing_code": "12345678"})
        await s.refused("add_payee", "invalid_account_number", customer_id=cid,
                        **{**payee, "account_number": "DE89370400440532013001", "routing_code": "DEUTDEFF", "currency": "EUR"})
        await s.refused("add_payee", "duplicate_payee", customer_id=cid,
                        **{**payee, "account_number": existing["account_number"], "routing_code": existing["routing_code"]})
        await s.refused("add_payee", "not_found", customer_id="CUS-99999", **payee)
        assert s.world.hash() == start


async def test_card_and_dispute_rules() -> None:
    async with finance_session() as s:
        cancelled = s.one("SELECT * FROM cards WHERE status = 'cancelled' ORDER BY card_id LIMIT 1")
        frozen = s.one("SELECT c.* FROM cards c JOIN accounts a USING (account_id) WHERE c.status = 'frozen' AND a.status = 'open' "
                       "ORDER BY card_id LIMIT 1")
        on_frozen_account = s.one("SELECT c.* FROM cards c JOIN accounts a USING (account_id) WHERE c.status = 'frozen' "
                                  "AND a.status = 'frozen' ORDER BY card_id LIMIT 1")
        active = s.one("SELECT * FROM cards WHERE status = 'active' AND customer_id != ? ORDER BY card_id LIMIT 1",
                       (frozen["customer_id"],))
        charge = "t.kind = 'card' AND t.amount_minor < 0 AND t.status = '{}' AND NOT EXISTS (SELECT 1 FROM disputes d WHERE d.txn_id = t.txn_id)"
        old = s.one(f"SELECT t.*, a.customer_id FROM transactions t JOIN accounts a USING (account_id) WHERE {charge.format('posted')} "
                    "AND t.posted_on < '2026-01-30' ORDER BY t.txn_id DESC LIMIT 1")
        recent = s.one(f"SELECT t.*, a.customer_id FROM transactions t JOIN accounts a USING (account_id) WHERE {charge.format('posted')} "
                       "AND t.posted_on >= '2026-03-01' AND a.customer_id = ? ORDER BY t.txn_id LIMIT 1", (old["customer_id"],))
        pending = s.one(f"SELECT t.* FROM transactions t JOIN accounts a USING (account_id) WHERE {charge.format('pending')} "
                        "AND a.customer_id = ? LIMIT 1", (old["customer_id"],)) if s.world.query(
            f"SELECT 1 FROM transactions t JOIN accounts a USING (account_id) WHERE {charge.format('pending')} AND a.customer_id = ?",
            (old["customer_id"],)) else s.one(f"SELECT t.* FROM transactions t WHERE {charge.format('pending')} LIMIT 1")
        salary = s.one("SELECT txn_id FROM transactions WHERE kind = 'salary' LIMIT 1")
        disputed = s.one("SELECT txn_id FROM disputes ORDER BY dispute_id LIMIT 1")
        reversed_wire = s.one("SELECT txn_id FROM transactions WHERE status = 'reversed' LIMIT 1")
        start = s.world.hash()
        await s.refused("freeze_card", "card_cancelled", card_id=cancelled["card_id"], reason="Lost card")
        await s.refused("freeze_card", "already_frozen", card_id=frozen["card_id"], reason="Lost card")
        await s.refused("unfreeze_card", "not_frozen", card_id=active["card_id"])
        await s.refused("unfreeze_card", "card_cancelled", card_id=cancelled["card_id"])
        await s.refused("unfreeze_card", "account_frozen", card_id=on_frozen_account["card_id"])
        await s.refused("unfreeze_card", "identity_not_verified", card_id=frozen["card_id"])
        await s.refused("freeze_card", "not_found", card_id="CRD-999999", reason="Lost card")
        claim = {"reason": "fraud", "description": "Customer does not recognise it"}
        await s.refused("open_dispute", "identity_not_verified", txn_id=recent["txn_id"], **claim)
        await s.verify(str(old["customer_id"]))
        start = s.world.hash()
        await s.refused("open_dispute", "dispute_window_expired", txn_id=old["txn_id"], **claim)
        await s.refused("open_dispute", "not_card_charge", txn_id=salary["txn_id"], **claim)
        await s.refused("open_dispute", "not_card_charge", txn_id=reversed_wire["txn_id"], **claim)
        await s.refused("open_dispute", "not_posted", txn_id=pending["txn_id"], **claim)
        await s.refused("open_dispute", "already_disputed", txn_id=disputed["txn_id"], **claim)
        await s.refused("open_dispute", "invalid_amount", txn_id=recent["txn_id"], amount=_money(-recent["amount_minor"] + 1), **claim)
        await s.refused("open_dispute", "not_found", txn_id="TXN-9999999", **claim)
        assert s.world.hash() == start


async def test_trading_and_fx_rules() -> None:
    async with finance_session() as s:
        broker = "a.type = 'brokerage' AND a.status = 'open' AND a.currency = 'USD' AND c.kyc_status = 'verified' "
        conservative = _account(s, broker + "AND c.risk_profile = 'conservative'")
        balanced = _account(s, broker + "AND c.risk_profile = 'balanced'")
        expired = _account(s, "a.type = 'brokerage' AND a.status = 'open' AND a.currency = 'USD' AND c.kyc_status != 'verified'")
        checking = _account(s, "a.type = 'checking' AND a.status = 'open' AND a.customer_id = ?", (conservative["customer_id"],)) \
            if s.world.query("SELECT 1 FROM accounts WHERE type = 'checking' AND status = 'open' AND customer_id = ?",
                             (conservative["customer_id"],)) else _account(s, "a.type = 'checking' AND a.status = 'open'")
        held = s.one("SELECT symbol, quantity FROM positions WHERE account_id = ? ORDER BY symbol LIMIT 1", (balanced["account_id"],))
        for row in (conservative, balanced, expired):
            await s.verify(str(row["customer_id"]))
        start = s.world.hash()
        order = {"account_id": conservative["account_id"], "side": "buy", "quantity": 1}
        await s.refused("place_order", "unsuitable_instrument", symbol="TSLA", **order)
        await s.refused("place_order", "unsuitable_instrument", symbol="VTI", **order)
        await s.refused("place_order", "unsuitable_instrument", symbol="ARKK", **{**order, "account_id": balanced["account_id"]})
        await s.refused("place_order", "currency_mismatch", symbol="SAP", **order)
        await s.refused("place_order", "not_found", symbol="ZZZZ", **order)
        await s.refused("place_order", "insufficient_funds", symbol="SHV", **{**order, "quantity": 1_000_000})
        await s.refused("place_order", "insufficient_position", symbol=held["symbol"], account_id=balanced["account_id"],
                        side="sell", quantity=held["quantity"] + 1)
        await s.refused("place_order", "kyc_not_verified", symbol="SHV", **{**order, "account_id": expired["account_id"]})
        await s.refused("place_order", "wrong_account_type", symbol="SHV", **{**order, "account_id": checking["account_id"]})
        await s.refused("get_positions", "wrong_account_type", account_id=checking["account_id"])
        stranger = _account(s, broker + "AND c.customer_id NOT IN (?, ?, ?)",
                            (conservative["customer_id"], balanced["customer_id"], expired["customer_id"]))
        await s.refused("place_order", "identity_not_verified", symbol="SHV", **{**order, "account_id": stranger["account_id"]})
        await s.refused("get_fx_rate", "same_currency", from_currency="USD", to_currency="USD")
        pair = s.one("SELECT a.account_id AS usd, b.account_id AS other, b.currency FROM accounts a JOIN accounts b "
                     "ON b.customer_id = a.customer_id AND b.currency != 'USD' AND b.status = 'open' "
                     "WHERE a.currency = 'USD' AND a.status = 'open' AND a.customer_id NOT IN (?, ?, ?) ORDER BY a.account_id LIMIT 1",
                     (conservative["customer_id"], balanced["customer_id"], expired["customer_id"]))
        await s.refused("convert_currency", "not_same_customer", from_account_id=balanced["account_id"],
                        to_account_id=stranger["account_id"], amount="10.00", currency="USD")
        await s.refused("convert_currency", "same_account", from_account_id=pair["usd"], to_account_id=pair["usd"],
                        amount="10.00", currency="USD")
        await s.refused("convert_currency", "currency_mismatch", from_account_id=pair["usd"], to_account_id=pair["other"],
                        amount="10.00", currency=pair["currency"])
        await s.refused("convert_currency", "identity_not_verified", from_account_id=pair["usd"], to_account_id=pair["other"],
                        amount="10.00", currency="USD")
        same = s.one("SELECT a.account_id AS x, b.account_id AS y, a.customer_id FROM accounts a JOIN accounts b ON "
                     "b.customer_id = a.customer_id AND b.currency = a.currency AND b.account_id != a.account_id "
                     "WHERE a.customer_id = ? AND a.status = 'open' AND b.status = 'open' LIMIT 1", (balanced["customer_id"],))
        await s.refused("convert_currency", "same_currency", from_account_id=same["x"], to_account_id=same["y"],
                        amount="10.00", currency="USD")
        assert s.world.hash() == start


async def test_verification_and_alert_rules() -> None:
    async with finance_session() as s:
        customer = s.one("SELECT customer_id, id_last4, postcode FROM customers ORDER BY customer_id LIMIT 1")
        wrong = "0000" if customer["id_last4"] != "0000" else "1111"
        for remaining in (2, 1, 0):
            result = await s.ok("verify_identity", customer_id=customer["customer_id"], id_last4=wrong, postcode=customer["postcode"])
            assert result["verified"] is False and result["attempts_remaining"] == remaining
        failures = s.world.query("SELECT outcome FROM verifications WHERE customer_id = ? AND verified_at = '2026-03-31T17:00:00+00:00'",
                                 (customer["customer_id"],))
        assert [f["outcome"] for f in failures] == ["failed"] * 3, "failed attempts are recorded, not rolled back"
        escalated = s.one("SELECT alert_id FROM compliance_alerts WHERE status = 'escalated' LIMIT 1")
        closed = s.one("SELECT alert_id FROM compliance_alerts WHERE status = 'closed' LIMIT 1")
        high = s.one("SELECT alert_id FROM compliance_alerts WHERE status = 'open' AND severity = 'high' LIMIT 1")
        start = s.world.hash()
        await s.refused("verify_identity", "verification_locked", customer_id=customer["customer_id"],
                        id_last4=customer["id_last4"], postcode=customer["postcode"])
        assert (await s.ok("get_customer", customer_id=customer["customer_id"]))["identity_verified"] is False
        await s.refused("escalate_alert", "already_escalated", alert_id=escalated["alert_id"], reason="Looks like fraud")
        await s.refused("escalate_alert", "alert_closed", alert_id=closed["alert_id"], reason="Looks like fraud")
        await s.refused("close_alert", "escalation_required", alert_id=high["alert_id"], resolution="Customer confirmed")
        await s.refused("close_alert", "already_escalated", alert_id=escalated["alert_id"], resolution="Customer confirmed")
        await s.refused("escalate_alert", "not_found", alert_id="ALR-99999", reason="Looks like fraud")
        await s.refused("search_transactions", "invalid_date_range", date_from="2026-03-10", date_to="2026-03-01")
        await s.refused("search_transactions", "invalid_amount", min_amount="50.00", max_amount="10.00")
        await s.refused("get_customer", "not_found", customer_id="CUS-99999")
        await s.refused("get_transfer", "not_found", transfer_id="TRF-999999")
        await s.refused("get_quote", "not_found", symbol="NOPE")
        assert s.world.hash() == start
