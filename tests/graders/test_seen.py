"""Read provenance and the gate on what the agent saw: any tool that showed the deciding fact counts, before the decision."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from envs.workspace import environment as workspace
from graders.criteria import Seen, fact, seen
from graders.grading import grade_episode
from graders.play import play
from servers.dispatch import call_tool
from servers.episodes import Episode, EpisodeManager
from servers.provenance import ResultPlan, row_view, shown_rows
from tests.graders.conftest import grade_with


@pytest.fixture
def manager() -> Iterator[EpisodeManager]:
    mgr = EpisodeManager(workspace)
    yield mgr
    mgr.close_all()


def private_channel(episode: Episode) -> dict[str, Any]:
    """A private channel the assistant is a member of (its members are shown to it)."""
    return episode.world.query(
        "SELECT c.* FROM channels c JOIN channel_members m USING (channel_id) WHERE c.kind = 'private' AND m.user_id = 'USR-0001' "
        "ORDER BY c.channel_id LIMIT 1")[0]


async def test_a_channel_list_and_a_channel_page_show_the_same_members(manager: EpisodeManager) -> None:
    episode = manager.create(task="record_blocker", seed=0)
    channel = private_channel(episode)
    listed = await call_tool(episode, "list_channels", {"query": channel["name"]})
    got = await call_tool(episode, "get_channel", {"channel_id": channel["channel_id"]})
    key = ("channels", channel["channel_id"])
    by_list = workspace.tool_specs["list_channels"].shown(listed.result)
    by_get = workspace.tool_specs["get_channel"].shown(got.result)
    assert "members" in by_list[key] and "members" in by_get[key]
    assert workspace.facts["channels"] >= {"members", "topic", "you_are_member"}


async def test_nested_rows_are_shown_with_their_own_key(manager: EpisodeManager) -> None:
    episode = manager.create(task="record_blocker", seed=0)
    issue = episode.world.query("SELECT r.issue_id, r.other_id FROM issue_relations r ORDER BY r.relation_id LIMIT 1")[0]
    event = await call_tool(episode, "get_issue", {"issue_id": issue["issue_id"]})
    shown = workspace.tool_specs["get_issue"].shown(event.result)
    assert "relations" in shown[("issues", issue["issue_id"])]
    assert {"title", "state"} <= shown[("issues", issue["other_id"])]  # the related issue, as the relation shows it
    assert "kind" not in shown[("issues", issue["other_id"])]  # the relation's kind is not a fact of the other issue


def test_results_that_do_not_fit_the_plan_show_nothing_and_never_raise() -> None:
    plan = workspace.tool_specs["list_channels"].result_plan
    for junk in (None, 7, "text", [], {"channels": "nope"}, {"channels": [1, None, {"name": "x"}]}, {"channels": [{"channel_id": {"a": 1}}]}):
        assert shown_rows(plan, junk) == {}
    deep: Any = {"channels": []}
    for _ in range(500):
        deep = {"channels": [deep]}
    assert shown_rows(plan, deep) == {}


def test_a_row_view_names_its_key_fields() -> None:
    with pytest.raises(TypeError, match="no field 'id' holds the key"):

        @row_view("things", "id")
        class Thing(BaseModel):
            name: str

    @row_view("pairs", "left", "right", names={"score": "points"}, exclude=("note",))
    class Pair(BaseModel):
        left: str
        right: int
        score: int | None = None
        note: str = ""

    class Page(BaseModel):
        pairs: list[Pair]

    from servers.provenance import _plan

    plan = _plan(Page)
    assert isinstance(plan, ResultPlan)
    shown = shown_rows(plan, {"pairs": [{"left": "a", "right": 2, "score": None, "note": "n"}, {"left": "b", "right": 3, "score": 5}]})
    assert shown == {("pairs", "a|2"): frozenset({"left", "right"}), ("pairs", "b|3"): frozenset({"left", "right", "points"})}


async def test_seen_passes_whichever_tool_showed_the_fact(manager: EpisodeManager) -> None:
    episode = manager.create(task="record_blocker", seed=0)
    channel = private_channel(episode)
    gate = seen("read the channel's members", "channels", channel["channel_id"], "members")
    for read in ({"tool": "list_channels", "arguments": {"query": channel["name"]}},
                 {"tool": "get_channel", "arguments": {"channel_id": channel["channel_id"]}}):
        played = manager.create(task="record_blocker", seed=0)
        await play(played, [read, {"tool": "submit_answer", "arguments": {"answer": "x", "outcome": "completed"}}])
        manager.close(played.id)
        grade = await grade_with(played, [gate])
        result = next(r for r in grade.criteria if r.name == "read the channel's members")
        assert result.passed and read["tool"] in result.evidence, result.evidence


async def test_seen_needs_the_fact_before_the_decision(manager: EpisodeManager) -> None:
    episode = manager.create(task="record_blocker", seed=0)
    assert episode.task is not None
    iid = next(c.arguments["issue_id"] for c in episode.task.oracle if c.tool == "get_issue")
    gate = seen("read the issue's relations", "issues", iid, "relations")
    act = {"tool": "update_issue", "arguments": {"issue_id": iid, "priority": "high"}}
    read = {"tool": "get_issue", "arguments": {"issue_id": iid}}
    answer = {"tool": "submit_answer", "arguments": {"answer": "x", "outcome": "completed"}}
    await play(episode, [act, read, answer])  # the act comes first: whatever is read later did not justify it
    manager.close(episode.id)
    result = next(r for r in (await grade_with(episode, [gate])).criteria if r.name == "read the issue's relations")
    assert not result.passed and "not shown before #1 update_issue" in result.evidence
    later = manager.create(task="record_blocker", seed=0)
    await play(later, [act, read, answer])
    manager.close(later.id)
    after_act = Seen(name="relations before the answer", any_of=[fact("issues", iid, "relations")], before="submit_answer")
    assert next(r for r in (await grade_with(later, [after_act])).criteria if r.kind == "seen").passed


async def test_seen_alternatives_and_several_rows(manager: EpisodeManager) -> None:
    episode = manager.create(task="record_blocker", seed=0)
    rows = episode.world.query("SELECT issue_id FROM issues ORDER BY issue_id LIMIT 2")
    a, b = rows[0]["issue_id"], rows[1]["issue_id"]
    await play(episode, [("get_issue", {"issue_id": b}), ("submit_answer", {"answer": "x", "outcome": "completed"})])
    manager.close(episode.id)
    either = seen("either issue", "issues", a, "relations", also=[fact("issues", b, "relations")])
    both = seen("both issues", "issues", [a, b], "state")
    grade = await grade_with(episode, [either, both])
    by_name = {r.name: r for r in grade.criteria}
    assert by_name["either issue"].passed
    assert not by_name["both issues"].passed and f"issues/{a} (never shown)" in by_name["both issues"].evidence


def test_seen_lints_tables_and_fields_no_tool_shows() -> None:
    assert seen("x", "issues", "ISS-1", "relations").lint(workspace) == []
    assert "no tool shows" in seen("x", "issues", "ISS-1", "colour").lint(workspace)[0]
    assert "does not have" in seen("x", "nope", "1").lint(workspace)[0]
    assert "no tool of 'workspace' shows its rows" in seen("x", "audit_log", "1").lint(workspace)[0]


async def test_keys_are_compared_as_text_whatever_their_type(manager: EpisodeManager) -> None:
    gate = seen("x", "rooms", 7)
    assert gate.any_of[0].keys == ["7"]
    assert fact("pairs", [("a", 2)]).keys == ["a|2"]


async def test_a_repeated_successful_verification_is_never_collateral() -> None:
    from envs.finance import environment as finance

    manager = EpisodeManager(finance)
    try:
        for seed in range(40):
            episode = manager.create(task="small_wire", seed=seed)
            assert episode.task is not None
            oracle = list(episode.task.oracle)
            verify = next((i for i, c in enumerate(oracle) if c.tool == "verify_identity"), None)
            if verify is None:
                manager.release(episode.id)
                continue
            await play(episode, [*oracle[: verify + 1], oracle[verify], *oracle[verify + 1:]])
            manager.close(episode.id)
            grade = await grade_episode(episode, judge_from_env=False)
            assert grade.passed, grade.summary()
            return
    finally:
        manager.close_all()
    raise AssertionError("no small_wire instance verifies the caller")
