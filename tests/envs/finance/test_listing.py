"""The finance environment as an MCP client sees it: tools, annotations, schemas, policy, instructions."""

from __future__ import annotations

import re

from pathlib import Path

from envs.finance import POLICY_PATH, environment, rules
from envs.finance.catalog import STAFF
from servers.registry import environment_names, load_environment
from tests.envs.finance.helpers import finance_session

READS = {
    "search_customers", "get_customer", "list_notes", "list_accounts", "get_account", "search_transactions",
    "get_transaction", "list_payees", "list_pending_approvals", "get_transfer", "list_cards", "list_disputes",
    "list_instruments", "get_quote", "get_positions", "get_fx_rate", "list_alerts",
}
MONEY_MOVERS = {"transfer_internal", "send_wire", "approve_transfer", "place_order", "convert_currency", "close_account"}
OTHER_ACTIONS = {
    "verify_identity", "add_note", "place_hold", "release_hold", "freeze_account", "add_payee", "reject_transfer",
    "freeze_card", "unfreeze_card", "open_dispute", "escalate_alert", "close_alert",
}


async def test_tools_are_listed_with_the_right_annotations() -> None:
    async with finance_session() as s:
        tools = {t.name: t for t in (await s.client.list_tools()).tools}
    assert len(tools) >= 20
    assert set(tools) == READS | MONEY_MOVERS | OTHER_ACTIONS | {"submit_answer"}
    for name, t in tools.items():
        assert t.description and len(t.description) > 30, f"{name} needs a description the agent can act on"
        assert t.input_schema["type"] == "object"
        assert t.input_schema.get("additionalProperties") is False, f"{name} must refuse unknown arguments"
        assert t.output_schema is not None
        hints = t.annotations
        assert hints is not None
        read_only = name in READS or name == "submit_answer"
        assert hints.read_only_hint is read_only, name
        assert hints.destructive_hint is (name in MONEY_MOVERS), name
    assert environment.answer_tools == ["submit_answer"]


async def test_id_and_amount_arguments_are_constrained_in_the_schema() -> None:
    async with finance_session() as s:
        tools = {t.name: t for t in (await s.client.list_tools()).tools}
    wire = tools["send_wire"].input_schema
    assert wire["properties"]["from_account_id"]["pattern"] == "^ACC-[0-9]{6}$"
    assert wire["properties"]["amount"]["pattern"] == r"^[0-9]{1,10}(\.[0-9]{1,2})?$"
    assert set(wire["required"]) == {"from_account_id", "payee_id", "amount", "currency"}
    assert tools["place_order"].input_schema["properties"]["quantity"]["maximum"] == 1_000_000
    assert tools["add_note"].input_schema["properties"]["body"]["maxLength"] == 2000


async def test_policy_resource_and_instructions() -> None:
    async with finance_session() as s:
        resources = (await s.client.list_resources()).resources
        assert [str(r.uri) for r in resources] == ["toolgym://finance/policy"]
        policy = (await s.client.read_resource("toolgym://finance/policy")).contents[0].text  # type: ignore[union-attr]
        instructions = s.client.instructions or ""
    assert policy == POLICY_PATH.read_text(encoding="utf-8")
    assert "STF-0100" in instructions and "submit_answer" in instructions and "policy" in instructions


async def test_legacy_handshake_clients_see_the_same_tools() -> None:
    async with finance_session(mode="legacy") as s:
        names = [t.name for t in (await s.client.list_tools()).tools]
        quote = await s.ok("get_quote", symbol="VTI")
    assert len(names) == len(environment.tool_specs)
    assert quote["symbol"] == "VTI"


def test_registry_finds_the_environment() -> None:
    assert "finance" in environment_names()
    assert load_environment("finance") is environment
    templates = environment.task_templates()  # written by the tasks' author; here: the module imports cleanly
    assert all(template_id == template.id for template_id, template in templates.items())


def test_policy_states_the_numbers_the_rules_enforce() -> None:
    text = POLICY_PATH.read_text(encoding="utf-8")
    assert f"USD {rules.money(rules.DUAL_APPROVAL_THRESHOLD_USD_MINOR, 'USD')[:-3]}" in text.replace(",", "")
    assert f"{rules.money(rules.WIRE_FEE_MINOR, 'USD')} per outgoing external wire" in text
    assert f"{rules.DISPUTE_WINDOW_DAYS} days after its posting" in text
    assert f"{rules.VERIFICATION_VALID_MINUTES} minutes" in text
    assert f"{rules.MAX_FAILED_VERIFICATIONS} failed attempts" in text
    for profile, levels in rules.SUITABILITY.items():
        assert re.search(rf"\| {profile} \| {', '.join(levels)} \|", text), profile
    for staff_id, name, role, limit, active in STAFF:
        if role == "supervisor" and active:
            assert f"| {name} | {staff_id} | {rules.money(limit, 'USD')[:-3]}" in text.replace(",", ""), staff_id
    for code in ("same_approver", "kyc_not_verified", "dispute_window_expired"):  # the examples section 12 gives
        assert f"`{code}`" in text and code in rules.REASON_CODES, code
    spreads = {row["spread_bps"] for row in environment.fixture.world(0).query("SELECT spread_bps FROM fx_rates")}
    for bps in spreads:
        assert f"{bps / 100:.2f}% ({bps} bps)" in text
    world = environment.fixture.world(0)
    defaults = world.query(
        "SELECT c.segment, l.channel, l.limit_minor, count(*) AS n FROM daily_limits l JOIN accounts a USING (account_id) "
        "JOIN customers c USING (customer_id) GROUP BY 1, 2, 3 ORDER BY n DESC")
    for segment in ("retail", "wealth"):
        for channel in ("external_wire", "internal_transfer"):
            usual = next(r["limit_minor"] for r in defaults if r["segment"] == segment and r["channel"] == channel)
            assert f"{rules.money(usual, 'USD')} ({segment})" in text.replace(",", ""), (segment, channel)


def test_reason_codes_are_exactly_the_codes_the_tools_refuse_with() -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in Path(rules.__file__).parent.rglob("*.py"))
    raised = set(re.findall(r'DomainError\(\s*"([a-z_]+)"', source))
    assert raised == set(rules.REASON_CODES)
    assert environment.reason_codes == rules.REASON_CODES and environment.outcomes == rules.OUTCOMES
