"""Argument types shared by the workspace tools, declared once so every tool's schema says the same thing.

Ids are patterns (ASCII digits only), counts are strict integers, free text is bounded and must contain
something other than whitespace, choices are ``Literal``; instants are ISO 8601 with an offset or ``Z``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from fixtures.ids import id_type

__all__ = [
    "Body",
    "ChannelId",
    "COLLEAGUE_TOPICS",
    "CycleId",
    "DateText",
    "Emoji",
    "Estimate",
    "EventId",
    "IncidentId",
    "Instant",
    "IssueId",
    "Label",
    "Limit",
    "MessageId",
    "Minutes",
    "Offset",
    "PageId",
    "Priority",
    "ProjectId",
    "Proposal",
    "Query",
    "RelationKind",
    "RoomId",
    "Rotation",
    "SecretKind",
    "ServiceId",
    "Severity",
    "ShiftId",
    "SpaceId",
    "State",
    "Title",
    "Topic",
    "UserId",
]

UserId = id_type("USR", 4, 42)
ChannelId = id_type("CH", 5, 7)
MessageId = id_type("MSG", 6, 1234)
ProjectId = id_type("PRJ", 2, 2)
CycleId = id_type("CYC", 3, 12)
IssueId = id_type("ISS", 5, 311)
PageId = id_type("PG", 5, 31)
RoomId = id_type("RM", 2, 3)
EventId = id_type("EVT", 5, 120)
ShiftId = id_type("ONC", 4, 17)
IncidentId = id_type("INC", 5, 9)
ServiceId = id_type("SVC", 2, 4)

Limit = Annotated[int, Field(strict=True, ge=1, le=100, description="Page size (1-100)")]
Offset = Annotated[int, Field(strict=True, ge=0, le=1_000_000, description="Rows to skip (from next_offset)")]
Body = Annotated[str, Field(min_length=1, max_length=4000, pattern=r"\S", description="The text to post")]
Title = Annotated[str, Field(min_length=3, max_length=200, pattern=r"\S", description="A short title")]
Query = Annotated[str, Field(min_length=2, max_length=100, pattern=r"\S", description="Words to look for")]
Instant = Annotated[str, Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2})?(Z|[+-][0-9]{2}:[0-9]{2})$",
                               max_length=25, description="An instant, ISO 8601 with its offset, e.g. 2026-03-19T14:00:00Z")]
DateText = Annotated[str, Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$", max_length=10, description="A date as YYYY-MM-DD")]
Minutes = Annotated[int, Field(strict=True, ge=15, le=480, multiple_of=15, description="Length in minutes (multiple of 15)")]
State = Literal["backlog", "todo", "in_progress", "in_review", "done", "cancelled"]
Priority = Literal["none", "low", "medium", "high", "urgent"]
Estimate = Annotated[int, Field(strict=True, ge=0, le=21, description="Story points (0-21)")]
Label = Literal["bug", "feature", "tech-debt", "customer", "performance", "security", "docs", "regression", "ux", "infra"]
RelationKind = Literal["blocks", "relates"]
Severity = Literal["sev1", "sev2", "sev3", "sev4"]
Emoji = Literal["thumbsup", "eyes", "white_check_mark", "tada", "rocket", "heart", "pray", "fire"]
SecretKind = Literal["cloud_key", "payment_key", "repo_token", "chat_token", "password", "other"]

Topic = Literal[
    "what_happened", "service", "error_message", "when_it_started", "customer", "meeting_length", "who_to_invite",
    "preferred_day", "deadline", "reason", "which_issue", "which_page", "who_takes_over",
]
"""What the agent may ask the colleague in chat."""
COLLEAGUE_TOPICS: tuple[Topic, ...] = ("what_happened", "reason", "deadline")
"""Topics any colleague who brought a request can speak to, whatever the task (``Environment.persona_topics``)."""
Proposal = Literal[
    "close_issue", "mark_duplicate", "reassign_issue", "reprioritise_issue", "reschedule_meeting", "cancel_meeting",
    "schedule_meeting", "hand_over_shift", "share_page", "publish_release_notes", "open_incident",
]
"""What the agent may propose to the colleague (they confirm or decline)."""
SpaceId = id_type("SPC", 2, 3)
Rotation = Literal["ops", "platform", "payments", "identity", "mobile", "data", "security"]
"""On-call rotations (one per team that runs one)."""
