"""Bad input of every kind gets a clear error and loses nothing; SQL-looking text is data, never SQL; one
customer's secrets never show anywhere."""

from __future__ import annotations

from typing import Any

import pytest

from envs.support import environment
from tests.envs.support.helpers import Session, persona, support_session

SQL_TEXTS = ["'; DROP TABLE orders; --", "1 OR 1=1", "x' OR '1'='1", "%", "_", "\\", "Robert'); DELETE FROM refunds;--"]
BAD_AMOUNTS = ["1e9", "-5", "12.345", "99999999999", "", " 5", "5.", "NaN", "0x10", "1,000.00", "+5", "５"]

# a syntactically valid call per tool whose ids name nothing in the world
UNKNOWN_IDS: dict[str, dict[str, Any]] = {
    "get_customer": {"customer_id": "CUS-99999"},
    "verify_identity": {"customer_id": "CUS-99999", "email": "a@example.com", "date_of_birth": "1980-01-01"},
    "list_orders": {"customer_id": "CUS-99999"},
    "get_order": {"order_id": "ORD-999999"},
    "track_shipment": {"shipment_id": "SHP-999999"},
    "get_product": {"product_id": "PRD-9999"},
    "list_reviews": {"product_id": "PRD-9999"},
    "get_return": {"rma_id": "RMA-99999"},
    "get_subscription": {"subscription_id": "SUB-99999"},
    "get_coupon": {"code": "NOSUCH99"},
    "get_ticket": {"ticket_id": "TCK-99999"},
    "get_kb_article": {"article_id": "KB-9999"},
    "update_shipping_address": {"order_id": "ORD-999999", "line1": "1 Main St", "city": "Austin", "region": "TX", "postcode": "78701"},
    "cancel_order": {"order_id": "ORD-999999", "reason": "test"},
    "send_replacement": {"order_id": "ORD-999999", "reason": "test"},
    "create_return": {"order_id": "ORD-999999", "line_id": "LIN-9999999", "quantity": 1, "reason": "changed_mind"},
    "create_exchange": {"order_id": "ORD-999999", "line_id": "LIN-9999999", "new_variant_id": "VAR-99999"},
    "issue_refund": {"order_id": "ORD-999999", "amount": "1.00", "method": "original_payment", "reason": "late_delivery"},
    "issue_goodwill_credit": {"customer_id": "CUS-99999", "amount": "1.00", "reason": "test"},
    "apply_coupon": {"order_id": "ORD-999999", "code": "SPRING15"},
    "pause_subscription": {"subscription_id": "SUB-99999", "periods": 1},
    "change_plan": {"subscription_id": "SUB-99999", "plan_id": "PLN-001"},
    "cancel_subscription": {"subscription_id": "SUB-99999", "timing": "immediately", "reason": "test"},
    "refund_invoice": {"invoice_id": "INV-999999", "reason": "test"},
    "merge_accounts": {"source_customer_id": "CUS-99999", "target_customer_id": "CUS-99998", "reason": "test"},
    "triage_ticket": {"ticket_id": "TCK-99999", "priority": "high"},
    "reply_to_ticket": {"ticket_id": "TCK-99999", "body": "hello"},
    "merge_tickets": {"ticket_id": "TCK-99999", "into_ticket_id": "TCK-99998"},
    "escalate_ticket": {"ticket_id": "TCK-99999", "team_id": "billing", "reason_code": "chargeback_open", "note": "test"},
}


def test_every_tool_with_an_id_is_covered() -> None:
    with_ids = {name for name, spec in environment.tool_specs.items() if any(p.endswith("_id") or p == "code" for p in spec.parameter_names)}
    assert with_ids - {"list_tickets"} <= set(UNKNOWN_IDS)


async def test_unknown_ids_are_not_found_everywhere() -> None:
    async with support_session() as s:
        start = s.world.hash()
        for name, arguments in UNKNOWN_IDS.items():
            message = await s.refused(name, "not_found", **arguments)
            assert "99" in message, f"{name}: the message should name the missing thing: {message}"
        assert s.world.hash() == start


async def test_malformed_ids_wrong_types_and_missing_fields() -> None:
    async with support_session() as s:
        start = s.world.hash()
        for name, arguments in UNKNOWN_IDS.items():
            for key, value in arguments.items():
                if key.endswith("_id") and key != "team_id":
                    message = await s.invalid(name, **{**arguments, key: value.lower()})
                    assert key in message, f"{name}: the error names the argument: {message}"
                    await s.invalid(name, **{**arguments, key: 12345})
                    await s.invalid(name, **{**arguments, key: value + "0"})
            for key in environment.tool_specs[name].input_schema.get("required", []):
                message = await s.invalid(name, **{k: v for k, v in arguments.items() if k != key})
                assert key in message and "required" in message.lower(), message
            assert "unknown argument" in await s.invalid(name, **arguments, surprise="x")
        await s.invalid("list_orders", customer_id="CUS-00001", limit="5")
        await s.invalid("list_orders", customer_id="CUS-00001", limit=True)
        await s.invalid("list_orders", customer_id="CUS-00001", limit=0)
        await s.invalid("list_orders", customer_id="CUS-00001", limit=101)
        await s.invalid("list_orders", customer_id="CUS-00001", offset=-1)
        await s.invalid("list_orders", customer_id="CUS-00001", status="lost")
        await s.invalid("list_tickets", priority="critical")
        await s.invalid("list_tickets", sla="soon")
        await s.invalid("create_return", order_id="ORD-100001", line_id="LIN-0000001", quantity=1.5, reason="changed_mind")
        await s.invalid("create_return", order_id="ORD-100001", line_id="LIN-0000001", quantity=0, reason="changed_mind")
        await s.invalid("create_return", order_id="ORD-100001", line_id="LIN-0000001", quantity=True, reason="changed_mind")
        await s.invalid("create_return", order_id="ORD-100001", line_id="LIN-0000001", quantity=1, reason="bored")
        await s.invalid("pause_subscription", subscription_id="SUB-00001", periods=4)
        await s.invalid("pause_subscription", subscription_id="SUB-00001", periods="2")
        await s.invalid("verify_identity", customer_id="CUS-00001", email="not an email", date_of_birth="1980-01-01")
        await s.invalid("verify_identity", customer_id="CUS-00001", email="a@example.com", date_of_birth="01/02/1980")
        await s.invalid("update_shipping_address", order_id="ORD-100001", line1="1 Main", city="Austin", region="Texas", postcode="78701")
        await s.invalid("update_shipping_address", order_id="ORD-100001", line1="1 Main", city="Austin", region="TX", postcode="7870")
        await s.invalid("escalate_ticket", ticket_id="TCK-00001", team_id="billing", reason_code="because", note="x y z")
        await s.invalid("ask_customer", topic="password")
        await s.invalid("propose_resolution", resolution="free_money")
        await s.invalid("get_coupon", code="spring15")
        await s.invalid("submit_answer", answer="x", outcome="completed", values=["1.00"])
        await s.invalid("submit_answer", answer="x", outcome="completed", values={"Bad Name": "1"})
        await s.invalid("submit_answer", answer="x", outcome="completed", values={f"v{i}": "1" for i in range(21)})
        await s.invalid("submit_answer", answer="", outcome="completed")
        await s.invalid("submit_answer", answer="x")
        await s.invalid("submit_answer", answer="x", outcome="completed or refused")
        await s.invalid("submit_answer", answer="x", outcome="refused", reason_code="because")
        await s.invalid("search_customers", query="   ")
        await s.invalid("reply_to_ticket", ticket_id="TCK-00001", body="\n\t ")
        unknown = await s.error("no_such_tool", "unknown_tool")
        assert "get_order" in unknown["message"]
        assert s.world.hash() == start


async def test_bad_amounts_are_refused_before_any_tool_runs() -> None:
    async with support_session() as s:
        start = s.world.hash()
        calls = [("issue_refund", {"order_id": "ORD-100001", "method": "original_payment", "reason": "late_delivery"}),
                 ("issue_goodwill_credit", {"customer_id": "CUS-00001", "reason": "test"}),
                 ("propose_resolution", {"resolution": "partial_refund"})]
        for name, arguments in calls:
            for bad in [*BAD_AMOUNTS, 5, 5.5]:
                assert "amount" in await s.invalid(name, **arguments, amount=bad)
        assert s.world.hash() == start


BASE_ARGUMENTS: dict[str, dict[str, Any]] = {
    **UNKNOWN_IDS,
    "search_customers": {"query": "smith"},
    "search_products": {"query": "kettle"},
    "search_kb": {"query": "returns"},
    "submit_answer": {"answer": "done", "outcome": "completed"},
}


def _free_text_fields() -> list[tuple[str, str, int]]:
    """(tool, argument, maxLength) of every free-text argument, read from the schemas the agent sees."""
    fields = []
    for name, spec in environment.tool_specs.items():
        for key, schema in spec.input_schema["properties"].items():
            for option in schema.get("anyOf", [schema]):
                if option.get("type") == "string" and not str(option.get("pattern", "")).startswith("^") and "enum" not in option:
                    fields.append((name, key, int(option["maxLength"])))
    return fields


FREE_TEXT = _free_text_fields()


def test_every_free_text_argument_is_bounded_and_has_base_arguments() -> None:
    assert len(FREE_TEXT) >= 15
    assert {name for name, _, _ in FREE_TEXT} <= set(BASE_ARGUMENTS)


@pytest.mark.parametrize(("name", "field", "limit"), FREE_TEXT, ids=[f"{n}.{f}" for n, f, _ in FREE_TEXT])
async def test_over_long_text_is_refused(name: str, field: str, limit: int) -> None:
    async with support_session() as s:
        arguments = {**BASE_ARGUMENTS[name], field: "x" * (limit + 1)}
        message = await s.invalid(name, **arguments)
        assert field in message and str(limit) in message
        payload = await s.error(name, "payload_too_large", **{**arguments, field: "x" * 70_000})
        assert "65536" in payload["message"]


def _counts(s: Session) -> dict[str, int]:
    tables = [r["name"] for r in s.world.query("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' "
                                                "AND name NOT LIKE 'sqlite%' AND name NOT LIKE '\\_%' ESCAPE '\\'")]
    return {t: s.one(f"SELECT count(*) AS n FROM {t}")["n"] for t in tables}


async def test_sql_in_every_free_text_argument_never_runs() -> None:
    async with support_session() as s:
        counts = _counts(s)
        for name, field, limit in FREE_TEXT:
            for text in SQL_TEXTS:
                value = (text * 3)[:limit]
                result = await s.call(name, **{**BASE_ARGUMENTS[name], field: value})
                if result.is_error:
                    assert s.last_event().error is not None
                    assert s.last_event().error.error_class in ("refused", "invalid_arguments"), (name, field, text)
        assert _counts(s) == counts and s.world.diff() == []


async def test_sql_looking_text_is_searched_and_stored_literally() -> None:
    async with support_session() as s:
        counts = _counts(s)
        for text in SQL_TEXTS:
            assert (await s.ok("search_customers", query=text * 2))["total"] == 0, text
            assert (await s.ok("search_products", query=text * 2))["total"] == 0, text
            await s.ok("search_kb", query=text * 2)  # FTS syntax in the words is quoted away, never an error
        ticket = s.one("SELECT ticket_id FROM tickets WHERE status = 'new' ORDER BY ticket_id LIMIT 1")["ticket_id"]
        for text in SQL_TEXTS:
            thread = await s.ok("reply_to_ticket", ticket_id=ticket, body=f"Customer wrote: {text}")
            assert thread["messages"][-1]["body"] == f"Customer wrote: {text}"
        escalated = await s.ok("escalate_ticket", ticket_id=ticket, team_id="billing", reason_code="chargeback_open", note=SQL_TEXTS[0])
        assert escalated["escalations"][-1]["note"] == SQL_TEXTS[0]
        order = s.one("SELECT * FROM orders WHERE status = 'processing' ORDER BY order_id LIMIT 1")
        await s.verify(order["customer_id"])
        moved = await s.ok("update_shipping_address", order_id=order["order_id"], line1=SQL_TEXTS[6][:100], line2=SQL_TEXTS[1], city="O'Fallon",
                           region="MO", postcode="63366")
        assert moved["ship_to"].startswith(SQL_TEXTS[6]) and "O'Fallon" in moved["ship_to"]
        await s.ok("submit_answer", answer=SQL_TEXTS[0], outcome="completed", values={"note": SQL_TEXTS[1]})
        grown = {"ticket_messages": len(SQL_TEXTS), "escalations": 1, "verifications": 1, "audit_log": len(SQL_TEXTS) + 3}
        assert _counts(s) == {t: n + grown.get(t, 0) for t, n in counts.items()}


async def test_one_customers_secrets_never_show() -> None:
    async with support_session() as s:
        customer = s.one("SELECT * FROM customers WHERE status = 'active' ORDER BY customer_id LIMIT 1")
        seen = [await s.ok("get_customer", customer_id=customer["customer_id"]),
                await s.ok("search_customers", query=customer["last_name"], limit=100),
                await s.ok("list_orders", customer_id=customer["customer_id"])]
        assert customer["date_of_birth"] not in str(seen)
        s.plant(persona(order_number="ORD-100001", date_of_birth="1975-05-05", other_account_email="hidden@example.com"))
        asked = await s.ok("ask_customer", topic="order_number")
        assert "1975-05-05" not in str(asked) and "hidden@example.com" not in str(asked)
        assert "1975-05-05" not in str([e.result for e in s.episode.record.tool_calls])
