"""The workspace environment's tools, one module per application; ``TOOLS`` lists them in the order agents see."""

from __future__ import annotations

from envs.workspace.tools.answer import submit_answer
from envs.workspace.tools.calendar import (
    cancel_event,
    find_free_slots,
    get_event,
    list_events,
    list_rooms,
    move_event,
    schedule_event,
)
from envs.workspace.tools.chat import (
    add_reaction,
    forward_message,
    get_channel,
    get_thread,
    list_channels,
    pin_message,
    post_message,
    read_channel,
    reply_in_thread,
    report_secret,
    search_messages,
    send_direct_message,
)
from envs.workspace.tools.colleague import ask_colleague, propose_to_colleague
from envs.workspace.tools.docs import (
    create_page,
    edit_page,
    get_page,
    get_page_history,
    link_page_to_issue,
    search_pages,
    share_page,
)
from envs.workspace.tools.oncall import (
    get_incident,
    get_oncall,
    get_service,
    hand_over_shift,
    list_incidents,
    list_services,
    open_incident,
    page_oncall,
)
from envs.workspace.tools.people import get_person, list_teams, search_people
from envs.workspace.tools.tracker import (
    assign_issue,
    comment_on_issue,
    create_issue,
    get_issue,
    link_issues,
    list_projects,
    mark_duplicate,
    search_issues,
    update_issue,
)

__all__ = ["TOOLS"]

TOOLS = [
    ask_colleague, propose_to_colleague,
    search_people, get_person, list_teams,
    list_channels, get_channel, read_channel, get_thread, search_messages,
    post_message, reply_in_thread, send_direct_message, add_reaction, pin_message, forward_message, report_secret,
    list_projects, search_issues, get_issue,
    create_issue, update_issue, assign_issue, comment_on_issue, link_issues, mark_duplicate,
    search_pages, get_page, get_page_history,
    edit_page, create_page, link_page_to_issue, share_page,
    list_events, get_event, list_rooms, find_free_slots,
    schedule_event, move_event, cancel_event,
    get_oncall, list_services, get_service, list_incidents, get_incident,
    hand_over_shift, open_incident, page_oncall,
    submit_answer,
]
