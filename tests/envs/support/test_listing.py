"""The support environment as an MCP client sees it: tools, annotations, schemas, policy, instructions, registry."""

from __future__ import annotations

import re
from pathlib import Path

from envs.support import POLICY_PATH, environment, rules
from envs.support.tools.tickets import EscalationCode
from servers.registry import environment_names, load_environment
from tests.envs.support.helpers import support_session

READS = {
    "ask_customer", "propose_resolution", "search_customers", "get_customer", "list_orders", "get_order", "track_shipment",
    "search_products", "get_product", "list_reviews", "get_return", "get_subscription", "list_plans", "get_coupon", "list_tickets",
    "get_ticket", "search_kb", "get_kb_article",
}
MONEY_MOVERS = {"merge_accounts", "issue_goodwill_credit", "cancel_order", "issue_refund", "apply_coupon", "cancel_subscription",
                "refund_invoice"}
OTHER_ACTIONS = {
    "verify_identity", "update_shipping_address", "send_replacement", "create_return", "create_exchange", "pause_subscription",
    "change_plan", "triage_ticket", "reply_to_ticket", "merge_tickets", "escalate_ticket",
}


async def test_tools_are_listed_with_the_right_annotations() -> None:
    async with support_session() as s:
        tools = {t.name: t for t in (await s.client.list_tools()).tools}
    assert len(tools) >= 28
    assert set(tools) == READS | MONEY_MOVERS | OTHER_ACTIONS | {"submit_answer"}
    for name, t in tools.items():
        assert t.description and len(t.description) > 40, f"{name} needs a description the agent can act on"
        assert t.input_schema.get("additionalProperties") is False, f"{name} must refuse unknown arguments"
        assert t.output_schema is not None
        assert t.annotations is not None
        assert t.annotations.read_only_hint is (name in READS or name == "submit_answer"), name
        assert t.annotations.destructive_hint is (name in MONEY_MOVERS), name
    assert environment.answer_tools == ["submit_answer"]


async def test_argument_schemas_constrain_ids_money_and_choices() -> None:
    async with support_session() as s:
        tools = {t.name: t for t in (await s.client.list_tools()).tools}
    refund = tools["issue_refund"].input_schema
    assert refund["properties"]["order_id"]["pattern"] == "^ORD-[0-9]{6}$"
    assert refund["properties"]["amount"]["pattern"] == r"^[0-9]{1,10}(\.[0-9]{1,2})?$"
    assert set(refund["required"]) == {"order_id", "amount", "method", "reason"}
    assert tools["ask_customer"].input_schema["properties"]["topic"]["enum"][:3] == ["order_number", "email", "date_of_birth"]
    assert "refund_store_credit" in tools["propose_resolution"].input_schema["properties"]["resolution"]["enum"]
    assert tools["pause_subscription"].input_schema["properties"]["periods"]["maximum"] == 3
    assert tools["reply_to_ticket"].input_schema["properties"]["body"]["maxLength"] == 4000


async def test_policy_resource_and_instructions() -> None:
    async with support_session() as s:
        resources = (await s.client.list_resources()).resources
        assert [str(r.uri) for r in resources] == ["toolgym://support/policy"]
        policy = (await s.client.read_resource("toolgym://support/policy")).contents[0].text  # type: ignore[union-attr]
        instructions = s.client.instructions or ""
    assert policy == POLICY_PATH.read_text(encoding="utf-8")
    for needle in ("STF-0100", "submit_answer", "policy", "ask_customer", "propose_resolution"):
        assert needle in instructions


async def test_legacy_handshake_clients_see_the_same_tools() -> None:
    async with support_session(mode="legacy") as s:
        names = [t.name for t in (await s.client.list_tools()).tools]
        plans = await s.ok("list_plans")
    assert len(names) == len(environment.tool_specs) and len(plans["plans"]) == 5


def test_registry_finds_the_environment() -> None:
    assert {"finance", "support"} <= set(environment_names())
    assert load_environment("support") is environment
    assert all(template_id == t.id for template_id, t in environment.task_templates().items())


def test_policy_states_the_numbers_the_rules_enforce() -> None:
    text = POLICY_PATH.read_text(encoding="utf-8")
    for category, days in rules.RETURN_DAYS.items():
        if days:
            assert re.search(rf"{category} \*\*{days} days\*\*", text), category
    assert "Grocery is **final sale**" in text
    assert f"return window or **{rules.DAMAGE_REPORT_DAYS} days** after\n  delivery, whichever is longer" in text
    assert f"**{rules.RESTOCKING_FEE_BPS // 100}%**" in text
    assert f"**{rules.money(rules.KEEP_IT_LIMIT_MINOR)}**" in text
    assert f"**{rules.money(rules.AGENT_REFUND_LIMIT_MINOR)} per order in total**" in text
    for tier, cap in rules.GOODWILL_CAPS_MINOR.items():
        assert f"| {tier} | {rules.money(cap)} |" in text, tier
    assert f"**once per customer every {rules.GOODWILL_INTERVAL_DAYS} days**" in text
    for priority, hours in rules.SLA_HOURS.items():
        assert f"| {priority} | {hours} hour{'s' if hours > 1 else ''} |" in text, priority
    assert f"**no scan for {rules.STALLED_DAYS} days**" in text
    assert f"**price adjustment within {rules.ADJUSTMENT_WINDOW_DAYS} days**" in text
    assert f"**{rules.VERIFICATION_VALID_MINUTES} minutes**" in text and f"**{rules.MAX_FAILED_VERIFICATIONS} failed attempts**" in text
    for code, team in rules.ESCALATION_TEAMS.items():
        assert re.search(rf"\| `{code}`[^|]*\| {team} \|", text), code


def test_reason_codes_are_exactly_the_codes_the_tools_refuse_with() -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in Path(rules.__file__).parent.rglob("*.py") if "tasks" not in p.parts)
    raised = set(re.findall(r'DomainError\(\s*"([a-z_]+)"', source))
    assert raised == set(rules.REASON_CODES)
    assert environment.reason_codes == rules.REASON_CODES and environment.outcomes == rules.OUTCOMES
    assert set(EscalationCode.__args__) <= set(rules.REASON_CODES)  # type: ignore[attr-defined]
