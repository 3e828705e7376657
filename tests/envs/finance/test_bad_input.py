"""Bad input of every kind gets a clear error and loses nothing; SQL-looking text is data, never SQL."""

from __future__ import annotations

from typing import Any

import pytest

from envs.finance import environment
from tests.envs.finance.helpers import Session, finance_session

SQL_TEXTS = ["'; DROP TABLE accounts; --", "1 OR 1=1", "x' OR '1'='1", "%", "_", "\\", "Robert'); DELETE FROM transactions;--"]
BAD_AMOUNTS = ["1e9", "-5", "12.345", "99999999999", "", " 5", "5.", "NaN", "0x10", "1,000.00", "+5", "５"]

# a syntactically valid call per tool whose ids name nothing in the world
UNKNOWN_IDS: dict[str, dict[str, Any]] = {
    "get_customer": {"customer_id": "CUS-99999"},
    "verify_identity": {"customer_id": "CUS-99999", "id_last4": "1234", "postcode": "10001"},
    "list_notes": {"customer_id": "CUS-99999"},
    "add_note": {"customer_id": "CUS-99999", "body": "hello"},
    "list_accounts": {"customer_id": "CUS-99999"},
    "get_account": {"account_id": "ACC-999999"},
    "search_transactions": {"account_id": "ACC-999999"},
    "get_transaction": {"txn_id": "TXN-9999999"},
    "place_hold": {"account_id": "ACC-999999", "amount": "1.00", "currency": "USD", "reason": "test"},
    "release_hold": {"hold_id": "HLD-99999", "reason": "test"},
    "freeze_account": {"account_id": "ACC-999999", "reason": "test"},
    "close_account": {"account_id": "ACC-999999", "reason": "test"},
    "list_payees": {"customer_id": "CUS-99999"},
    "add_payee": {"customer_id": "CUS-99999", "name": "Jane Roe", "bank_name": "Chase", "account_number": "123456789",
                  "routing_code": "021000021", "currency": "USD"},
    "transfer_internal": {"from_account_id": "ACC-999999", "to_account_id": "ACC-999998", "amount": "1.00", "currency": "USD"},
    "send_wire": {"from_account_id": "ACC-999999", "payee_id": "PAY-99999", "amount": "1.00", "currency": "USD"},
    "get_transfer": {"transfer_id": "TRF-999999"},
    "approve_transfer": {"transfer_id": "TRF-999999", "approver_id": "STF-0001"},
    "reject_transfer": {"transfer_id": "TRF-999999", "reason": "test"},
    "list_cards": {"customer_id": "CUS-99999"},
    "freeze_card": {"card_id": "CRD-999999", "reason": "test"},
    "unfreeze_card": {"card_id": "CRD-999999"},
    "list_disputes": {"customer_id": "CUS-99999"},
    "open_dispute": {"txn_id": "TXN-9999999", "reason": "fraud", "description": "test"},
    "get_quote": {"symbol": "NOPE"},
    "get_positions": {"account_id": "ACC-999999"},
    "place_order": {"account_id": "ACC-999999", "symbol": "VTI", "side": "buy", "quantity": 1},
    "convert_currency": {"from_account_id": "ACC-999999", "to_account_id": "ACC-999998", "amount": "1.00", "currency": "USD"},
    "escalate_alert": {"alert_id": "ALR-99999", "reason": "test"},
    "close_alert": {"alert_id": "ALR-99999", "resolution": "test"},
}


async def _intact(s: Session, counts: dict[str, int]) -> None:
    """Every table still exists with the same number of rows."""
    for table, count in counts.items():
        assert s.one(f"SELECT count(*) AS n FROM {table}")["n"] == count, table


def _counts(s: Session) -> dict[str, int]:
    tables = [r["name"] for r in s.world.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'")]
    return {t: s.one(f"SELECT count(*) AS n FROM {t}")["n"] for t in tables}


def test_every_tool_with_an_id_is_covered() -> None:
    with_ids = {name for name, spec in environment.tool_specs.items()
                if any(p.endswith("_id") or p == "symbol" for p in spec.parameter_names)}
    assert with_ids - {"search_customers", "list_alerts", "get_fx_rate", "list_instruments"} <= set(UNKNOWN_IDS)


async def test_unknown_ids_are_not_found_everywhere() -> None:
    async with finance_session() as s:
        start = s.world.hash()
        for name, arguments in UNKNOWN_IDS.items():
            message = await s.refused(name, "not_found", **arguments)
            assert "99" in message or "NOPE" in message, f"{name}: the message should name the missing thing: {message}"
        assert s.world.hash() == start


async def test_malformed_ids_wrong_types_and_missing_fields() -> None:
    async with finance_session() as s:
        start = s.world.hash()
        for name, arguments in UNKNOWN_IDS.items():
            for key, value in arguments.items():
                if key.endswith("_id"):
                    message = await s.invalid(name, **{**arguments, key: value.lower()})
                    assert key in message, f"{name}: the error names the argument: {message}"
                    await s.invalid(name, **{**arguments, key: 12345})
                    await s.invalid(name, **{**arguments, key: value + "0"})
            required = environment.tool_specs[name].input_schema.get("required", [])
            for key in required:
                message = await s.invalid(name, **{k: v for k, v in arguments.items() if k != key})
                assert key in message and "required" in message.lower(), message
            message = await s.invalid(name, **arguments, surprise="x")
            assert "unknown argument" in message
        account = "ACC-100003"
        await s.invalid("search_transactions", account_id=account, limit="5")
        await s.invalid("search_transactions", account_id=account, limit=True)
        await s.invalid("search_transactions", account_id=account, limit=0)
        await s.invalid("search_transactions", account_id=account, limit=101)
        await s.invalid("search_transactions", account_id=account, offset=-1)
        await s.invalid("search_transactions", account_id=account, date_from=20260301)
        await s.invalid("search_transactions", account_id=account, date_from="2026-02-30")
        await s.invalid("search_transactions", account_id=account, date_from="yesterday")
        await s.invalid("search_transactions", account_id=account, status="deleted")
        await s.invalid("place_order", account_id=account, symbol="VTI", side="hold", quantity=1)
        await s.invalid("place_order", account_id=account, symbol="VTI", side="buy", quantity=1.5)
        await s.invalid("place_order", account_id=account, symbol="VTI", side="buy", quantity=0)
        await s.invalid("place_order", account_id=account, symbol="VTI", side="buy", quantity=True)
        await s.invalid("place_order", account_id=account, symbol="vti", side="buy", quantity=1)
        await s.invalid("get_fx_rate", from_currency="usd", to_currency="EUR")
        await s.invalid("get_fx_rate", from_currency="JPY", to_currency="EUR")
        await s.invalid("submit_answer", answer="x", outcome="completed", values=["1.00"])
        await s.invalid("submit_answer", answer="x", outcome="completed", values={"Bad Name": "1"})
        await s.invalid("submit_answer", answer="x", outcome="completed", values={f"v{i}": "1" for i in range(21)})
        await s.invalid("submit_answer", answer="", outcome="completed")
        await s.invalid("submit_answer", answer="x")  # an answer must declare its outcome
        await s.invalid("submit_answer", answer="x", outcome="done")
        await s.invalid("submit_answer", answer="x", outcome="completed or refused")
        await s.invalid("submit_answer", answer="x", outcome="refused", reason_code="because")
        await s.invalid("list_payees", customer_id="CUS-00001", include_removed="yes")
        await s.invalid("freeze_card", card_id="CRD-400001", reason="   ")
        await s.invalid("search_customers", query="   ")
        await s.invalid("add_note", customer_id="CUS-00001", body="\n\t ")
        unknown = await s.error("no_such_tool", "unknown_tool")
        assert "get_account" in unknown["message"]
        assert s.world.hash() == start


async def test_bad_amounts_are_refused_before_any_tool_runs() -> None:
    async with finance_session() as s:
        row = s.one("SELECT a.account_id, a.customer_id, b.account_id AS other, p.payee_id FROM accounts a JOIN accounts b "
                    "ON b.customer_id = a.customer_id AND b.account_id != a.account_id AND b.currency = a.currency "
                    "JOIN customers c ON c.customer_id = a.customer_id AND c.kyc_status = 'verified' "
                    "JOIN payees p ON p.customer_id = a.customer_id AND p.verified = 1 AND p.status = 'active' "
                    "AND p.kind = 'external' AND p.currency = 'USD' "
                    "WHERE a.status = 'open' AND b.status = 'open' AND a.currency = 'USD' ORDER BY a.account_id LIMIT 1")
        fx = s.one("SELECT a.account_id, a.customer_id, b.account_id AS other FROM accounts a JOIN accounts b "
                   "ON b.customer_id = a.customer_id AND b.currency != a.currency AND b.status = 'open' "
                   "WHERE a.status = 'open' AND a.currency = 'USD' ORDER BY a.account_id LIMIT 1")
        await s.verify(str(row["customer_id"]))
        await s.verify(str(fx["customer_id"]))
        start = s.world.hash()
        calls: list[tuple[str, dict[str, Any]]] = [
            ("place_hold", {"account_id": row["account_id"], "currency": "USD", "reason": "test"}),
            ("transfer_internal", {"from_account_id": row["account_id"], "to_account_id": row["other"], "currency": "USD"}),
            ("send_wire", {"from_account_id": row["account_id"], "payee_id": row["payee_id"], "currency": "USD"}),
            ("convert_currency", {"from_account_id": fx["account_id"], "to_account_id": fx["other"], "currency": "USD"}),
            ("open_dispute", {"txn_id": "TXN-0000001", "reason": "fraud", "description": "test"}),
        ]
        for name, arguments in calls:
            for bad in [*BAD_AMOUNTS, 5, 5.5, None]:
                if bad is None and name == "open_dispute":
                    continue  # amount is optional there
                message = await s.invalid(name, **arguments, amount=bad)
                assert "amount" in message
            if name != "open_dispute":
                await s.refused(name, "invalid_amount", **arguments, amount="0.00")
        for bad in BAD_AMOUNTS:
            await s.invalid("search_transactions", account_id=row["account_id"], min_amount=bad)
            await s.invalid("search_transactions", account_id=row["account_id"], max_amount=bad)
        assert s.world.hash() == start


BASE_ARGUMENTS: dict[str, dict[str, Any]] = {
    **UNKNOWN_IDS,
    "search_customers": {"query": "smith"},
    "search_transactions": {},
    "submit_answer": {"answer": "done", "outcome": "completed"},
}


def _free_text_fields() -> list[tuple[str, str, int]]:
    """(tool, argument, maxLength) of every free-text argument, read from the schemas the agent sees."""
    fields = []
    for name, spec in environment.tool_specs.items():
        for key, schema in spec.input_schema["properties"].items():
            for option in schema.get("anyOf", [schema]):
                if option.get("type") == "string" and not str(option.get("pattern", "")).startswith("^") \
                        and "enum" not in option and "format" not in option:
                    fields.append((name, key, int(option["maxLength"])))
    return fields


FREE_TEXT = _free_text_fields()


def test_every_free_text_argument_is_bounded_and_has_base_arguments() -> None:
    assert len(FREE_TEXT) >= 19
    assert {name for name, _, _ in FREE_TEXT} <= set(BASE_ARGUMENTS)


@pytest.mark.parametrize(("name", "field", "limit"), FREE_TEXT, ids=[f"{n}.{f}" for n, f, _ in FREE_TEXT])
async def test_over_long_text_is_refused(name: str, field: str, limit: int) -> None:
    async with finance_session() as s:
        arguments = {**BASE_ARGUMENTS[name], field: "x" * (limit + 1)}
        message = await s.invalid(name, **arguments)
        assert field in message and str(limit) in message
        payload = await s.error(name, "payload_too_large", **{**arguments, field: "x" * 70_000})
        assert "65536" in payload["message"]


async def test_sql_in_every_free_text_argument_never_runs() -> None:
    async with finance_session() as s:
        counts = _counts(s)
        for name, field, limit in FREE_TEXT:
            for text in SQL_TEXTS:
                value = (text * 2)[:limit] if len(text) < 3 else text[:limit]
                result = await s.call(name, **{**BASE_ARGUMENTS[name], field: value})
                if result.is_error:
                    assert s.last_event().error is not None
                    assert s.last_event().error.error_class in ("refused", "invalid_arguments"), (name, field, text)
        await _intact(s, counts)
        assert s.world.diff() == []


async def test_sql_looking_text_is_searched_literally() -> None:
    async with finance_session() as s:
        counts = _counts(s)
        for text in SQL_TEXTS:
            customers = await s.ok("search_customers", query=text * 2 if len(text) < 2 else text)
            assert customers["total"] == 0, f"{text!r} matched customers: LIKE wildcards or SQL leaked through"
            txns = await s.ok("search_transactions", merchant=text)
            assert txns["total"] == 0
            await s.ok("search_transactions", category=text)
        await _intact(s, counts)
        assert s.world.diff() == []


async def test_sql_looking_text_is_stored_literally() -> None:
    async with finance_session() as s:
        counts = _counts(s)
        pair = s.one("SELECT a.customer_id, a.account_id, b.account_id AS other, a.currency FROM accounts a JOIN accounts b ON "
                     "b.customer_id = a.customer_id AND b.account_id != a.account_id AND b.currency = a.currency AND b.status = 'open' "
                     "JOIN customers c ON c.customer_id = a.customer_id AND c.kyc_status = 'verified' "
                     "WHERE a.status = 'open' AND a.balance_minor > 1000 "
                     "AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.account_id = a.account_id AND h.status = 'active') "
                     "ORDER BY a.account_id LIMIT 1")
        customer_id = pair["customer_id"]
        await s.verify(customer_id)
        for text in SQL_TEXTS:
            body = f"Customer wrote: {text}"
            note = await s.ok("add_note", customer_id=customer_id, body=body)
            assert note["body"] == body
            assert s.one("SELECT body FROM notes WHERE note_id = ?", (note["note_id"],))["body"] == body
        card = s.one("SELECT card_id FROM cards WHERE status = 'active' ORDER BY card_id LIMIT 1")["card_id"]
        frozen = await s.ok("freeze_card", card_id=card, reason=SQL_TEXTS[0])
        assert frozen["status_reason"] == SQL_TEXTS[0]
        alert = s.one("SELECT alert_id FROM compliance_alerts WHERE status = 'open' AND severity = 'high' LIMIT 1")["alert_id"]
        assert (await s.ok("escalate_alert", alert_id=alert, reason=SQL_TEXTS[1]))["escalation_reason"] == SQL_TEXTS[1]
        low = s.one("SELECT alert_id FROM compliance_alerts WHERE status = 'open' AND severity = 'low' LIMIT 1")["alert_id"]
        assert (await s.ok("close_alert", alert_id=low, resolution=SQL_TEXTS[6]))["resolution"] == SQL_TEXTS[6]
        payee = await s.ok("add_payee", customer_id=customer_id, name="O'Brien'); DROP TABLE payees;--", bank_name="1 OR 1=1",
                           account_number="123456789", routing_code="021000021", currency="USD")
        assert payee["name"] == "O'Brien'); DROP TABLE payees;--" and payee["bank_name"] == "1 OR 1=1"
        moved = await s.ok("transfer_internal", from_account_id=pair["account_id"], to_account_id=pair["other"],
                           amount="1.00", currency=pair["currency"], memo=SQL_TEXTS[0])
        assert moved["memo"] == SQL_TEXTS[0]
        await s.ok("submit_answer", answer=SQL_TEXTS[0], outcome="completed", values={"note": SQL_TEXTS[1]})
        hold = await s.ok("place_hold", account_id=pair["account_id"], amount="1.00", currency=pair["currency"],
                          reason=SQL_TEXTS[4] * 3)
        assert hold["reason"] == "___"
        grown = {"notes": len(SQL_TEXTS), "payees": 1, "holds": 1}
        for table, count in counts.items():
            now = s.one(f"SELECT count(*) AS n FROM {table}")["n"]
            if table in grown:
                assert now == count + grown[table], table
            elif table not in ("audit_log", "verifications", "transactions", "transfers"):
                assert now == count, f"{table} changed: SQL in free text must never run"


async def test_sql_looking_text_in_payment_and_case_fields_is_stored_literally() -> None:
    async with finance_session() as s:
        counts = _counts(s)
        drop, tautology = SQL_TEXTS[0], SQL_TEXTS[1]
        sender = s.one(
            "SELECT a.account_id, a.customer_id, a.currency, p.payee_id FROM accounts a JOIN customers c USING (customer_id) "
            "JOIN payees p ON p.customer_id = a.customer_id AND p.kind = 'external' AND p.verified = 1 AND p.status = 'active' "
            "AND p.currency = a.currency WHERE a.status = 'open' AND a.type = 'checking' AND c.kyc_status = 'verified' "
            "AND a.balance_minor > 500000 ORDER BY a.account_id LIMIT 1")
        await s.verify(str(sender["customer_id"]))
        wire = await s.ok("send_wire", from_account_id=sender["account_id"], payee_id=sender["payee_id"], amount="50.00",
                          currency=sender["currency"], memo=drop)
        assert wire["memo"] == drop
        pending = s.world.query("SELECT transfer_id FROM transfers WHERE status = 'pending_approval' AND requested_by != 'STF-0001' "
                                "ORDER BY transfer_id LIMIT 2")
        approved = await s.ok("approve_transfer", transfer_id=pending[0]["transfer_id"], approver_id="STF-0001", comment=tautology)
        assert s.one("SELECT comment FROM approvals WHERE transfer_id = ?", (approved["transfer_id"],))["comment"] == tautology
        rejected = await s.ok("reject_transfer", transfer_id=pending[1]["transfer_id"], reason=drop)
        assert rejected["rejection_reason"] == drop
        charge = s.one("SELECT t.txn_id FROM transactions t WHERE t.account_id = ? AND t.kind = 'card' AND t.status = 'posted' "
                       "AND t.posted_on >= '2026-03-01' AND NOT EXISTS (SELECT 1 FROM disputes d WHERE d.txn_id = t.txn_id) "
                       "ORDER BY t.txn_id LIMIT 1", (sender["account_id"],))
        dispute = await s.ok("open_dispute", txn_id=charge["txn_id"], reason="fraud", description=drop)
        assert dispute["description"] == drop
        hold = s.one("SELECT hold_id FROM holds WHERE status = 'active' AND kind = 'standard' ORDER BY hold_id LIMIT 1")["hold_id"]
        assert (await s.ok("release_hold", hold_id=hold, reason=tautology))["release_reason"] == tautology
        frozen = await s.ok("freeze_account", account_id=sender["account_id"], reason=drop)
        assert frozen["status_reason"] == drop
        grown = {"transfers": 1, "approvals": 2, "disputes": 1}
        for table, count in counts.items():
            if table not in ("audit_log", "verifications", "transactions"):
                assert s.one(f"SELECT count(*) AS n FROM {table}")["n"] == count + grown.get(table, 0), table
