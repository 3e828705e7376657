"""The workspace fixture's SQL schema: people, chat, the issue tracker, the wiki, calendars, on-call and incidents.

Every table declares a primary key (the change log names rows by it) and CHECK constraints on its ids and
choices; instants are ISO 8601 UTC text, dates ``YYYY-MM-DD``. The ``persona`` table holds the colleague a
task puts in chat (``fixtures.persona``); only the colleague tools read it.
"""

from __future__ import annotations

from fixtures.persona import PERSONA_SCHEMA
from fixtures.search import index_sql

__all__ = ["SCHEMA"]

SCHEMA = """
CREATE TABLE teams (
  team_id TEXT PRIMARY KEY CHECK (team_id GLOB 'TM-[0-9][0-9]'),
  name TEXT NOT NULL UNIQUE,
  handle TEXT NOT NULL UNIQUE,
  lead_id TEXT NOT NULL
);
CREATE TABLE users (
  user_id TEXT PRIMARY KEY CHECK (user_id GLOB 'USR-[0-9][0-9][0-9][0-9]'),
  name TEXT NOT NULL,
  handle TEXT NOT NULL UNIQUE,
  email TEXT NOT NULL UNIQUE,
  team_id TEXT NOT NULL REFERENCES teams(team_id),
  title TEXT NOT NULL,
  tz TEXT NOT NULL,
  utc_offset_minutes INTEGER NOT NULL,
  work_start_minute INTEGER NOT NULL CHECK (work_start_minute BETWEEN 0 AND 1439),
  work_end_minute INTEGER NOT NULL CHECK (work_end_minute BETWEEN 1 AND 1440),
  is_admin INTEGER NOT NULL DEFAULT 0 CHECK (is_admin IN (0, 1))
);
CREATE INDEX users_team ON users(team_id);
""" + index_sql("people_search", "users", {"name": "{row}.name", "handle": "{row}.handle", "email": "{row}.email",
                                           "title": "{row}.title"}) + """
CREATE TABLE leaves (
  leave_id TEXT PRIMARY KEY CHECK (leave_id GLOB 'LV-[0-9][0-9][0-9][0-9]'),
  user_id TEXT NOT NULL REFERENCES users(user_id),
  starts_on TEXT NOT NULL,
  ends_on TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('vacation', 'sick', 'parental', 'conference'))
);
CREATE INDEX leaves_user ON leaves(user_id);
CREATE TABLE user_groups (
  group_id TEXT PRIMARY KEY CHECK (group_id GLOB 'GRP-[0-9][0-9]'),
  handle TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL
);
CREATE TABLE group_members (
  group_id TEXT NOT NULL REFERENCES user_groups(group_id),
  user_id TEXT NOT NULL REFERENCES users(user_id),
  PRIMARY KEY (group_id, user_id)
);
CREATE TABLE channels (
  channel_id TEXT PRIMARY KEY CHECK (channel_id GLOB 'CH-[0-9][0-9][0-9][0-9][0-9]'),
  name TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL CHECK (kind IN ('public', 'private', 'dm')),
  topic TEXT NOT NULL DEFAULT '',
  team_id TEXT REFERENCES teams(team_id),
  created_at TEXT NOT NULL
);
CREATE TABLE channel_members (
  channel_id TEXT NOT NULL REFERENCES channels(channel_id),
  user_id TEXT NOT NULL REFERENCES users(user_id),
  PRIMARY KEY (channel_id, user_id)
);
CREATE INDEX channel_members_user ON channel_members(user_id);
CREATE TABLE messages (
  message_id TEXT PRIMARY KEY CHECK (message_id GLOB 'MSG-[0-9][0-9][0-9][0-9][0-9][0-9]'),
  channel_id TEXT NOT NULL REFERENCES channels(channel_id),
  user_id TEXT NOT NULL REFERENCES users(user_id),
  at TEXT NOT NULL,
  body TEXT NOT NULL,
  thread_of TEXT REFERENCES messages(message_id),
  pinned INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
  redacted INTEGER NOT NULL DEFAULT 0 CHECK (redacted IN (0, 1))
);
CREATE INDEX messages_channel ON messages(channel_id, at);
CREATE INDEX messages_thread ON messages(thread_of);
CREATE INDEX messages_pinned ON messages(channel_id, message_id) WHERE pinned = 1;
""" + index_sql("message_search", "messages", {"body": "{row}.body"}) + """
CREATE TABLE reactions (
  message_id TEXT NOT NULL REFERENCES messages(message_id),
  user_id TEXT NOT NULL REFERENCES users(user_id),
  emoji TEXT NOT NULL,
  PRIMARY KEY (message_id, user_id, emoji)
);
CREATE TABLE security_reports (
  report_id TEXT PRIMARY KEY CHECK (report_id GLOB 'SEC-[0-9][0-9][0-9][0-9]'),
  message_id TEXT NOT NULL REFERENCES messages(message_id),
  kind TEXT NOT NULL,
  reported_by TEXT NOT NULL REFERENCES users(user_id),
  reported_at TEXT NOT NULL
);
CREATE TABLE projects (
  project_id TEXT PRIMARY KEY CHECK (project_id GLOB 'PRJ-[0-9][0-9]'),
  name TEXT NOT NULL UNIQUE,
  team_id TEXT NOT NULL REFERENCES teams(team_id),
  lead_id TEXT NOT NULL REFERENCES users(user_id)
);
CREATE TABLE project_members (
  project_id TEXT NOT NULL REFERENCES projects(project_id),
  user_id TEXT NOT NULL REFERENCES users(user_id),
  PRIMARY KEY (project_id, user_id)
);
CREATE TABLE cycles (
  cycle_id TEXT PRIMARY KEY CHECK (cycle_id GLOB 'CYC-[0-9][0-9][0-9]'),
  project_id TEXT NOT NULL REFERENCES projects(project_id),
  name TEXT NOT NULL,
  starts_on TEXT NOT NULL,
  ends_on TEXT NOT NULL
);
CREATE TABLE issues (
  issue_id TEXT PRIMARY KEY CHECK (issue_id GLOB 'ISS-[0-9][0-9][0-9][0-9][0-9]'),
  project_id TEXT NOT NULL REFERENCES projects(project_id),
  title TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL CHECK (state IN ('backlog', 'todo', 'in_progress', 'in_review', 'done', 'cancelled', 'duplicate')),
  priority TEXT NOT NULL CHECK (priority IN ('none', 'low', 'medium', 'high', 'urgent')),
  estimate INTEGER CHECK (estimate IS NULL OR estimate BETWEEN 0 AND 21),
  assignee_id TEXT REFERENCES users(user_id),
  reporter_id TEXT NOT NULL REFERENCES users(user_id),
  cycle_id TEXT REFERENCES cycles(cycle_id),
  parent_id TEXT REFERENCES issues(issue_id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  closed_at TEXT
);
CREATE INDEX issues_project ON issues(project_id, state);
CREATE INDEX issues_cycle ON issues(cycle_id);
CREATE INDEX issues_assignee ON issues(assignee_id);
CREATE INDEX issues_parent ON issues(parent_id);
""" + index_sql("issue_search", "issues", {"title": "{row}.title", "description": "{row}.description"}) + """
CREATE TABLE issue_labels (
  issue_id TEXT NOT NULL REFERENCES issues(issue_id),
  label TEXT NOT NULL,
  PRIMARY KEY (issue_id, label)
);
CREATE TABLE issue_relations (
  relation_id TEXT PRIMARY KEY CHECK (relation_id GLOB 'REL-[0-9][0-9][0-9][0-9][0-9]'),
  issue_id TEXT NOT NULL REFERENCES issues(issue_id),
  kind TEXT NOT NULL CHECK (kind IN ('blocks', 'duplicates', 'relates')),
  other_id TEXT NOT NULL REFERENCES issues(issue_id),
  UNIQUE (issue_id, kind, other_id)
);
CREATE INDEX issue_relations_other ON issue_relations(other_id);
CREATE TABLE issue_comments (
  comment_id TEXT PRIMARY KEY CHECK (comment_id GLOB 'CMT-[0-9][0-9][0-9][0-9][0-9][0-9]'),
  issue_id TEXT NOT NULL REFERENCES issues(issue_id),
  user_id TEXT NOT NULL REFERENCES users(user_id),
  at TEXT NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX issue_comments_issue ON issue_comments(issue_id);
CREATE TABLE spaces (
  space_id TEXT PRIMARY KEY CHECK (space_id GLOB 'SPC-[0-9][0-9]'),
  name TEXT NOT NULL UNIQUE,
  team_id TEXT NOT NULL REFERENCES teams(team_id)
);
CREATE TABLE pages (
  page_id TEXT PRIMARY KEY CHECK (page_id GLOB 'PG-[0-9][0-9][0-9][0-9][0-9]'),
  space_id TEXT NOT NULL REFERENCES spaces(space_id),
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  owner_id TEXT NOT NULL REFERENCES users(user_id),
  restricted INTEGER NOT NULL DEFAULT 0 CHECK (restricted IN (0, 1)),
  version INTEGER NOT NULL CHECK (version >= 1),
  updated_at TEXT NOT NULL,
  updated_by TEXT NOT NULL REFERENCES users(user_id)
);
""" + index_sql("page_search", "pages", {"title": "{row}.title", "body": "{row}.body"}) + """
CREATE TABLE page_versions (
  page_id TEXT NOT NULL REFERENCES pages(page_id),
  version INTEGER NOT NULL,
  body TEXT NOT NULL,
  edited_by TEXT NOT NULL REFERENCES users(user_id),
  edited_at TEXT NOT NULL,
  PRIMARY KEY (page_id, version)
);
CREATE TABLE page_access (
  page_id TEXT NOT NULL REFERENCES pages(page_id),
  user_id TEXT NOT NULL REFERENCES users(user_id),
  PRIMARY KEY (page_id, user_id)
);
CREATE TABLE page_links (
  page_id TEXT NOT NULL REFERENCES pages(page_id),
  issue_id TEXT NOT NULL REFERENCES issues(issue_id),
  PRIMARY KEY (page_id, issue_id)
);
CREATE TABLE rooms (
  room_id TEXT PRIMARY KEY CHECK (room_id GLOB 'RM-[0-9][0-9]'),
  name TEXT NOT NULL UNIQUE,
  capacity INTEGER NOT NULL CHECK (capacity > 0),
  site TEXT NOT NULL
);
CREATE TABLE events (
  event_id TEXT PRIMARY KEY CHECK (event_id GLOB 'EVT-[0-9][0-9][0-9][0-9][0-9]'),
  title TEXT NOT NULL,
  organizer_id TEXT NOT NULL REFERENCES users(user_id),
  starts_at TEXT NOT NULL,
  ends_at TEXT NOT NULL,
  room_id TEXT REFERENCES rooms(room_id),
  status TEXT NOT NULL CHECK (status IN ('confirmed', 'cancelled')),
  CHECK (ends_at > starts_at)
);
CREATE INDEX events_time ON events(starts_at);
CREATE TABLE attendees (
  event_id TEXT NOT NULL REFERENCES events(event_id),
  user_id TEXT NOT NULL REFERENCES users(user_id),
  required INTEGER NOT NULL CHECK (required IN (0, 1)),
  PRIMARY KEY (event_id, user_id)
);
CREATE INDEX attendees_user ON attendees(user_id);
CREATE TABLE services (
  service_id TEXT PRIMARY KEY CHECK (service_id GLOB 'SVC-[0-9][0-9]'),
  name TEXT NOT NULL UNIQUE,
  tier INTEGER NOT NULL CHECK (tier IN (1, 2, 3)),
  team_id TEXT NOT NULL REFERENCES teams(team_id),
  runbook_page_id TEXT REFERENCES pages(page_id)
);
CREATE TABLE oncall_shifts (
  shift_id TEXT PRIMARY KEY CHECK (shift_id GLOB 'ONC-[0-9][0-9][0-9][0-9]'),
  rotation TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(user_id),
  starts_at TEXT NOT NULL,
  ends_at TEXT NOT NULL
);
CREATE INDEX oncall_rotation ON oncall_shifts(rotation, starts_at);
CREATE TABLE incidents (
  incident_id TEXT PRIMARY KEY CHECK (incident_id GLOB 'INC-[0-9][0-9][0-9][0-9][0-9]'),
  service_id TEXT NOT NULL REFERENCES services(service_id),
  title TEXT NOT NULL,
  severity TEXT NOT NULL CHECK (severity IN ('sev1', 'sev2', 'sev3', 'sev4')),
  status TEXT NOT NULL CHECK (status IN ('open', 'mitigated', 'resolved')),
  commander_id TEXT REFERENCES users(user_id),
  opened_at TEXT NOT NULL,
  resolved_at TEXT
);
CREATE TABLE pages_sent (
  page_id TEXT PRIMARY KEY CHECK (page_id GLOB 'PGR-[0-9][0-9][0-9][0-9]'),
  incident_id TEXT NOT NULL REFERENCES incidents(incident_id),
  user_id TEXT NOT NULL REFERENCES users(user_id),
  sent_at TEXT NOT NULL
);
CREATE TABLE audit_log (
  audit_id TEXT PRIMARY KEY CHECK (audit_id GLOB 'AUD-[0-9][0-9][0-9][0-9][0-9][0-9]'),
  at TEXT NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  entity_type TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  details TEXT NOT NULL
);
""" + PERSONA_SCHEMA
