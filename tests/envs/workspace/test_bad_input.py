"""Bad input of every kind is refused before a tool runs (schema) or with ``not_found``, and nothing is written."""

from __future__ import annotations

from envs.workspace import environment
from tests.envs.workspace.helpers import workspace_session

UNKNOWN = {
    "get_person": {"user_id": "USR-9999"},
    "get_channel": {"channel_id": "CH-99999"},
    "read_channel": {"channel_id": "CH-99999"},
    "get_thread": {"message_id": "MSG-999999"},
    "get_issue": {"issue_id": "ISS-99999"},
    "get_page": {"page_id": "PG-99999"},
    "get_event": {"event_id": "EVT-99999"},
    "get_service": {"service_id": "SVC-99"},
    "get_incident": {"incident_id": "INC-99999"},
    "update_issue": {"issue_id": "ISS-99999", "state": "done"},
    "assign_issue": {"issue_id": "ISS-99999", "user_id": "USR-0002"},
    "comment_on_issue": {"issue_id": "ISS-99999", "body": "x"},
    "edit_page": {"page_id": "PG-99999", "body": "x", "base_version": 1},
    "move_event": {"event_id": "EVT-99999", "starts_at": "2026-03-20T14:00:00Z"},
    "cancel_event": {"event_id": "EVT-99999"},
    "hand_over_shift": {"shift_id": "ONC-9999", "to_user_id": "USR-0002"},
    "page_oncall": {"incident_id": "INC-99999"},
    "report_secret": {"message_id": "MSG-999999", "kind": "other"},
    "create_issue": {"project_id": "PRJ-99", "title": "abc", "description": "x"},
    "create_page": {"space_id": "SPC-99", "title": "abc", "body": "x"},
}


async def test_unknown_ids_are_not_found_everywhere() -> None:
    async with workspace_session() as s:
        for name, arguments in UNKNOWN.items():
            await s.refused(name, "not_found", **arguments)


async def test_malformed_ids_wrong_types_and_missing_fields() -> None:
    async with workspace_session() as s:
        for name, arguments in [
            ("get_issue", {"issue_id": "ISS-12"}), ("get_issue", {"issue_id": "ISS-١٢٣٤٥"}), ("get_issue", {"issue_id": 12345}),
            ("get_person", {}), ("read_channel", {"channel_id": "general"}), ("search_people", {"query": " "}),
            ("schedule_event", {"title": "x y", "starts_at": "tomorrow", "minutes": 30, "required_user_ids": ["USR-0002"]}),
            ("schedule_event", {"title": "x y", "starts_at": "2026-03-20T14:00:00Z", "minutes": 31, "required_user_ids": ["USR-0002"]}),
            ("schedule_event", {"title": "x y", "starts_at": "2026-03-20T14:00:00Z", "minutes": "30", "required_user_ids": ["USR-0002"]}),
            ("update_issue", {"issue_id": "ISS-00010", "state": "duplicate"}), ("update_issue", {"issue_id": "ISS-00010", "estimate": 1.5}),
            ("post_message", {"channel_id": "CH-00001", "body": "x" * 4001}), ("post_message", {"channel_id": "CH-00001", "body": "hi", "as_user": "USR-0002"}),
            ("add_reaction", {"message_id": "MSG-000001", "emoji": "skull"}), ("get_oncall", {"rotation": "web"}),
            ("edit_page", {"page_id": "PG-00001", "body": "x", "base_version": 0}),
        ]:
            await s.invalid(name, **arguments)
        assert s.world.change_mark() == 0


async def test_sql_looking_text_is_searched_and_stored_literally() -> None:
    async with workspace_session() as s:
        general = s.one("SELECT channel_id FROM channels WHERE name = 'general'")["channel_id"]
        body = "'); DROP TABLE issues; -- 100% _literal_"
        await s.ok("post_message", channel_id=general, body=body)
        hits = await s.ok("search_messages", query="100% _literal_")
        assert [m["body"] for m in hits["messages"]] == [body]
        assert (await s.ok("search_people", query="%%"))["total"] == 0
        assert s.one("SELECT count(*) AS n FROM issues")["n"] > 1000


def test_every_tool_with_an_id_argument_is_covered() -> None:
    with_ids = {name for name, spec in environment.tool_specs.items()
                if any(k.endswith("_id") for k in spec.input_schema.get("required", []))}
    assert with_ids - set(UNKNOWN) <= {"list_events", "forward_message", "send_direct_message", "pin_message", "add_reaction",
                                       "reply_in_thread", "post_message", "link_issues", "mark_duplicate", "link_page_to_issue",
                                       "share_page", "open_incident", "get_page_history"}
