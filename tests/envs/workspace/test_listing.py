"""The workspace environment as an MCP client sees it: tools, annotations, schemas, policy, instructions, registry,
and the policy's numbers and reason codes kept equal to the rules the tools enforce."""

from __future__ import annotations

import re
from pathlib import Path

from envs.workspace import POLICY_PATH, environment, rules
from servers.registry import environment_names, load_environment
from tests.envs.workspace.helpers import workspace_session

READS = {
    "ask_colleague", "propose_to_colleague", "search_people", "get_person", "list_teams", "list_channels", "get_channel", "read_channel",
    "get_thread", "search_messages", "list_projects", "search_issues", "get_issue", "search_pages", "get_page", "get_page_history",
    "list_events", "get_event", "list_rooms", "find_free_slots", "get_oncall", "list_services", "get_service", "list_incidents", "get_incident",
}
ACTIONS = {
    "post_message", "reply_in_thread", "send_direct_message", "add_reaction", "pin_message", "forward_message", "report_secret",
    "create_issue", "update_issue", "assign_issue", "comment_on_issue", "link_issues", "mark_duplicate", "edit_page", "create_page",
    "link_page_to_issue", "share_page", "schedule_event", "move_event", "cancel_event", "hand_over_shift", "open_incident", "page_oncall",
}
DESTRUCTIVE = {"cancel_event"}


async def test_tools_are_listed_with_the_right_annotations() -> None:
    async with workspace_session() as s:
        tools = {t.name: t for t in (await s.client.list_tools()).tools}
    assert len(tools) >= 37
    assert set(tools) == READS | ACTIONS | {"submit_answer"}
    for name, t in tools.items():
        assert t.description and len(t.description) > 40, f"{name} needs a description the agent can act on"
        assert t.input_schema.get("additionalProperties") is False, f"{name} must refuse unknown arguments"
        assert t.output_schema is not None and t.annotations is not None
        assert t.annotations.read_only_hint is (name in READS or name == "submit_answer"), name
        assert t.annotations.destructive_hint is (name in DESTRUCTIVE), name
    assert environment.answer_tools == ["submit_answer"]


async def test_argument_schemas_constrain_ids_text_and_choices() -> None:
    async with workspace_session() as s:
        tools = {t.name: t for t in (await s.client.list_tools()).tools}
    assert tools["get_issue"].input_schema["properties"]["issue_id"]["pattern"] == "^ISS-[0-9]{5}$"
    assert tools["read_channel"].input_schema["properties"]["channel_id"]["pattern"] == "^CH-[0-9]{5}$"
    assert tools["post_message"].input_schema["properties"]["body"]["maxLength"] == 4000
    assert "who_takes_over" in tools["ask_colleague"].input_schema["properties"]["topic"]["enum"]
    assert "close_issue" in tools["propose_to_colleague"].input_schema["properties"]["proposal"]["enum"]
    assert set(tools["schedule_event"].input_schema["required"]) == {"title", "starts_at", "minutes", "required_user_ids"}


async def test_policy_resource_and_instructions() -> None:
    async with workspace_session() as s:
        resources = (await s.client.list_resources()).resources
        assert [str(r.uri) for r in resources] == ["toolgym://workspace/policy"]
        policy = (await s.client.read_resource("toolgym://workspace/policy")).contents[0].text  # type: ignore[union-attr]
        instructions = s.client.instructions or ""
    assert policy == POLICY_PATH.read_text(encoding="utf-8")
    for needle in (rules.AGENT, "submit_answer", "policy", "ask_colleague", "propose_to_colleague"):
        assert needle in instructions


async def test_legacy_handshake_clients_see_the_same_tools() -> None:
    async with workspace_session(mode="legacy") as s:
        names = [t.name for t in (await s.client.list_tools()).tools]
        rooms = await s.ok("list_rooms")
    assert len(names) == len(environment.tool_specs) and len(rooms["rooms"]) == 8


def test_registry_finds_the_environment() -> None:
    assert "workspace" in set(environment_names())
    assert load_environment("workspace") is environment
    assert all(template_id == t.id for template_id, t in environment.task_templates().items())


def test_policy_states_the_numbers_the_rules_enforce() -> None:
    text = POLICY_PATH.read_text(encoding="utf-8")
    assert f"at least {rules.MEETING_NOTICE_MINUTES} minutes from now" in text
    assert f"at most {rules.MAX_MEETING_MINUTES} minutes" in text
    assert f"on the half hour ({rules.SLOT_MINUTES} minutes)" in text
    for tier, severity in rules.TIER_SEVERITY.items():
        assert f"tier {tier} → {severity}" in text, tier
    assert " and ".join(rules.PAGE_SEVERITIES) + ": open an incident" in text
    for kind in rules.SECRET_PATTERNS:
        assert f"`{kind}`" in text, kind


def test_reason_codes_are_exactly_the_codes_the_tools_refuse_with() -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in Path(rules.__file__).parent.rglob("*.py") if "tasks" not in p.parts)
    raised = set(re.findall(r'DomainError\(\s*"([a-z_]+)"', source))
    assert raised == set(rules.REFUSAL_CODES)
    assert set(rules.REASON_CODES) == set(rules.REFUSAL_CODES) | set(rules.ESCALATION_CODES)
    assert environment.reason_codes == rules.REASON_CODES and environment.outcomes == rules.OUTCOMES
    text = POLICY_PATH.read_text(encoding="utf-8")
    for code in rules.REASON_CODES:
        assert f"`{code}`" in text, f"the policy never names {code}"
