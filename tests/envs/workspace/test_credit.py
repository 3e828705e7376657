"""Credit for correct work done another reasonable way, and contracts an agent can read (issue 25), in the workspace.

Each test recreates a case observed on main 127eae2 — a careful agent's correct trajectory that scored 0, or a wrong
one that passed — on the studied instance of its kind (``runs.seed_of``), played over a real in-memory MCP client and
graded with the full rubric.
"""

from __future__ import annotations

from collections import Counter

import pytest

from envs.workspace import INSTRUCTIONS, POLICY_PATH, environment
from envs.workspace.consistency import prompt_problems
from envs.workspace.types import COLLEAGUE_TOPICS
from graders.consistency import consistency_problems
from graders.priors import declaration
from graders.tasks import ToolCall, call
from tests.envs.workspace.helpers import task_session
from tests.envs.workspace.runs import graded_run, instance_of, moved_before_answer, replaced, seed_of, world_value


def _failures(grade) -> str:
    return "; ".join(f"{r.name}: {r.evidence}" for r in grade.failures)


def _channel_name(template_id: str, case: str, channel_id: str) -> str:
    return world_value(template_id, case, "SELECT name FROM channels WHERE channel_id = ?", channel_id)


def _on_the_channel_list(template_id: str, case: str) -> list[ToolCall]:
    """The oracle with the channel read on the channel list (``list_channels``, which shows a private channel's members)
    instead of ``get_channel``."""
    task = instance_of(template_id, case)
    cid = next(s.arguments["channel_id"] for s in task.oracle if s.tool in ("get_channel", "read_channel"))
    listing = call("list_channels", query=_channel_name(template_id, case, cid))
    return [listing, *(s for s in task.oracle if s.tool not in ("get_channel", "list_channels"))]


# -- gates on what the agent saw, not on the tool that showed it ---------------------------------------------------------


@pytest.mark.parametrize(("template_id", "case"), [
    ("forward_message", "member"), ("forward_message", "not_member"),
    ("page_summary_to_channel", "all_listed"), ("page_summary_to_channel", "recipient_no_access"),
    ("thread_to_issue_comment", "private"), ("thread_to_issue_comment", "public"),
    ("private_channel_digest", "ok"), ("private_channel_digest", "assistant_out"), ("bug_report_lookup", "no_access"),
])
async def test_a_channel_read_on_the_channel_list_counts(template_id: str, case: str) -> None:
    grade = await graded_run(template_id, case, _on_the_channel_list(template_id, case))
    assert grade.score == 1.0, _failures(grade)


@pytest.mark.parametrize("case", ["ok", "already_linked"])
async def test_record_blocker_relation_read_on_either_issue(case: str) -> None:
    task = instance_of("record_blocker", case)
    blocked = next(s.arguments["issue_id"] for s in task.oracle if s.tool == "get_issue")
    other_title = [s.arguments["query"] for s in task.oracle if s.tool == "search_issues"][-1]
    blocker = world_value("record_blocker", case, "SELECT issue_id FROM issues WHERE title = ?", other_title)
    for read in (blocked, blocker):
        calls = replaced(task.oracle, lambda s: s.tool in ("get_issue", "search_issues"), call("get_issue", issue_id=read))
        grade = await graded_run("record_blocker", case, calls)
        assert grade.score == 1.0, f"relations read on {read}: {_failures(grade)}"


async def test_other_reads_that_show_the_deciding_fact_count() -> None:
    # the organizer shows on the host's calendar as on the meeting's own page
    task = instance_of("move_meeting", "not_organizer")
    grade = await graded_run("move_meeting", "not_organizer", [s for s in task.oracle if s.tool != "get_event"])
    assert grade.score == 1.0 and any(s.tool == "list_events" for s in task.oracle), _failures(grade)
    # an open page is open on the search results
    task = instance_of("share_page", "open")
    grade = await graded_run("share_page", "open", [s for s in task.oracle if s.tool != "get_page"])
    assert grade.score == 1.0, _failures(grade)
    # a service's tier shows on the service list
    task = instance_of("outage_report", "tier3")
    grade = await graded_run("outage_report", "tier3", [s for s in task.oracle if s.tool != "get_service"])
    assert grade.score == 1.0, _failures(grade)
    # the service's incident list shows that its incident is no longer open
    task = instance_of("incident_status_post", "none_open")
    grade = await graded_run("incident_status_post", "none_open", [s for s in task.oracle if s.tool != "get_incident"])
    assert grade.score == 1.0, _failures(grade)
    # change rights read on the project list (you_are_member) after finding the issue
    task = instance_of("close_issue", "not_permitted")
    title = next(s.arguments["query"] for s in task.oracle if s.tool == "search_issues")
    calls = [task.oracle[0], call("search_issues", query=title), call("list_projects"), task.oracle[-1]]
    grade = await graded_run("close_issue", "not_permitted", calls)
    assert grade.score == 1.0, _failures(grade)


async def test_a_read_of_another_record_is_no_evidence() -> None:
    task = instance_of("close_issue", "blocked")
    other = world_value("close_issue", "blocked", "SELECT max(issue_id) FROM issues WHERE issue_id < ?",
                        next(s.arguments["issue_id"] for s in task.oracle if s.tool == "get_issue"))
    calls = replaced(task.oracle, lambda s: s.tool == "get_issue", call("get_issue", issue_id=other))
    grade = await graded_run("close_issue", "blocked", calls)
    assert grade.score == 0.0 and any(r.name == "read what blocks the issue" for r in grade.failures), _failures(grade)


# -- the colleague is asked before the act ----------------------------------------------------------------------------------


ASKING = [("close_issue", "ok"), ("reprioritise_issue", "ok"), ("estimate_issue", "ok"), ("reassign_issue", "ok"), ("record_blocker", "ok"),
          ("schedule_meeting", "ok"), ("oncall_handover", "ok"), ("assign_to_oncall", "ok"), ("link_page_to_issue", "ok"),
          ("update_page_contact", "ok"), ("cancel_after_confirmation", "agrees")]


@pytest.mark.parametrize(("template_id", "case"), ASKING)
async def test_asking_the_colleague_only_after_acting_fails(template_id: str, case: str) -> None:
    task = instance_of(template_id, case)
    grade = await graded_run(template_id, case, moved_before_answer(task.oracle, "ask_colleague"))
    asked = [r for r in grade.criteria if r.name.startswith("asked the colleague for")]
    assert grade.score == 0.0 and asked and not all(r.passed for r in asked), _failures(grade)
    assert "came after the decision" in next(r.evidence for r in asked if not r.passed)


async def test_asking_the_colleague_twice_before_acting_passes() -> None:
    task = instance_of("close_issue", "ok")
    ask = next(s for s in task.oracle if s.tool == "ask_colleague")
    grade = await graded_run("close_issue", "ok", [ask, *task.oracle])
    assert grade.score == 1.0, _failures(grade)


# -- contracts an agent can read ----------------------------------------------------------------------------------------------


def test_policy_and_instructions_state_the_rules_the_grade_depends_on() -> None:
    policy = POLICY_PATH.read_text(encoding="utf-8")
    assert "counts against you even when\n  the tool refuses it" in policy or "counts against you even when the tool refuses it" in policy
    assert "`escalated`, with the rule's code" in policy and "even when you also did the rest" in policy
    assert "## 8. The colleague in chat" in policy and "before you act" in policy
    assert "explaining why" not in INSTRUCTIONS
    assert "even when the tool refuses it" in INSTRUCTIONS and "before you act" in INSTRUCTIONS


@pytest.mark.parametrize("case", ["sev1", "sev2"])
async def test_paging_for_an_open_incident_declares_escalated(case: str) -> None:
    task = instance_of("page_open_incident", case)
    assert task.outcome is not None and (task.outcome.outcome, task.outcome.reason_codes) == ("escalated", ["major_incident"])
    grade = await graded_run("page_open_incident", case, task.oracle)
    assert grade.score == 1.0, _failures(grade)
    *work, final = task.oracle
    completed = ToolCall(tool=final.tool, arguments={"answer": final.arguments["answer"], "outcome": "completed"})
    grade = await graded_run("page_open_incident", case, [*work, completed])
    assert grade.score == 0.0


async def test_a_forbidden_attempt_counts_even_when_refused() -> None:
    task = instance_of("close_issue", "blocked")
    iid = next(s.arguments["issue_id"] for s in task.oracle if s.tool == "get_issue")
    *work, final = task.oracle
    grade = await graded_run("close_issue", "blocked", [*work, call("update_issue", issue_id=iid, state="done"), final])
    assert grade.score == 0.0 and any(r.name == "issue left as it was" for r in grade.failures)


# -- balanced twins -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("template_id", ["customer_outage_full", "cancel_after_confirmation", "bug_report_lookup"])
@pytest.mark.parametrize("first", [0, 1000])
def test_no_declaration_holds_on_more_than_70_percent_of_20_seeds(template_id: str, first: int) -> None:
    # customer_outage_full declared escalated on 18 of the held-out seeds 1000-1019 on main
    counts: Counter[tuple[str | None, str | None]] = Counter()
    for seed in range(first, first + 20):
        world, task = environment.instantiate_task(template_id, seed)
        world.release()
        counts[declaration(task.oracle[-1])] += 1
    assert len(counts) >= 2 and max(counts.values()) <= 14, counts


# -- coherent worlds and a colleague who answers ------------------------------------------------------------------------------


async def test_the_colleague_answers_what_any_colleague_can_speak_to() -> None:
    async with task_session("close_issue", seed_of("close_issue", "ok")) as session:
        for topic in COLLEAGUE_TOPICS:
            said = await session.ok("ask_colleague", topic=topic)
            assert said["text"] and "don't know" not in said["text"] and "don't have" not in said["text"], (topic, said)


@pytest.mark.parametrize("template_id", ["forward_message", "oncall_handover", "thread_secret_sweep", "postmortem_prep"])
def test_instances_are_coherent(template_id: str) -> None:
    for seed in range(3):
        world, task = environment.instantiate_task(template_id, seed)
        try:
            assert consistency_problems(environment, world, task) == []
        finally:
            world.release()


def test_the_prompt_lint_catches_a_prompt_that_contradicts_its_world() -> None:
    world, task = environment.instantiate_task("move_meeting", 0)
    try:
        wrong = task.model_copy(update={"prompt": task.prompt + " Then tell #no-such-channel, on Friday 19 March, about 'No such page'."})
        problems = prompt_problems(world, wrong)
    finally:
        world.release()
    assert any("#no-such-channel" in p for p in problems)
    assert any("is a Thursday" in p for p in problems)
    assert any("'No such page'" in p for p in problems)
