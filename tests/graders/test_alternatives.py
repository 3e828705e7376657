"""Alternative paths and the guessing attack in ``toolgym check``: correct work another way must pass, chance is bounded."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator

import pytest

from envs.workspace import environment as workspace
from envs.workspace.tasks.issues import record_blocker
from fixtures.world import World
from graders.alternatives import derive_variants
from graders.criteria import ToolCalled
from graders.metaeval import check_environment
from graders.setup import case
from graders.tasks import TaskDraft, TaskRng, TaskTemplate
from servers.episodes import EpisodeManager

TOOLS = ["ask_colleague", "search_issues", "get_issue", "link_issues", "submit_answer"]


def tool_bound_blocker(world: World, rng: random.Random) -> TaskDraft:
    """record_blocker, plus the gate it used to have: the read bound to one tool call (get_issue of the blocked issue)."""
    draft = record_blocker(world, rng)
    iid = next(c.arguments["issue_id"] for c in draft.oracle if c.tool == "get_issue")
    bound = ToolCalled(name="read the blocked issue itself", tool="get_issue", args={"issue_id": iid}, gate=True)
    return draft.model_copy(update={"rubric": [*draft.rubric, bound]})


@pytest.fixture
def manager() -> Iterator[EpisodeManager]:
    mgr = EpisodeManager(workspace)
    yield mgr
    mgr.close_all()


async def test_another_read_that_shows_the_same_facts_is_derived(manager: EpisodeManager) -> None:
    found = []
    for seed in range(3):
        world, instance = workspace.instantiate_task("record_blocker", seed)
        world.release()
        variants = await derive_variants(manager, instance, "submit_answer")
        found += [v for v in variants if v.kind == "other_read"]
        kinds = {v.kind for v in variants}
        assert {"repeated_step", "reordered_reads"} <= kinds
    # the relation shows on the other issue's page too: reading that one is the same work
    assert found and all("get_issue" in v.description for v in found)


async def test_a_gate_bound_to_one_tool_call_fails_the_alternative_paths() -> None:
    bound = workspace.with_templates([TaskTemplate(tool_bound_blocker, tools=TOOLS, category="issues")], name="workspace-bound")
    report = await check_environment(bound, seeds=[0, 1], attacks=True)
    failing = [v for v in report.violations if "alternative path other_read fails" in v]
    assert failing and "read the blocked issue itself" in failing[0]
    sound = workspace.with_templates([TaskTemplate(record_blocker, tools=TOOLS, category="issues")], name="workspace-sound")
    clean = await check_environment(sound, seeds=[0, 1], attacks=True)
    assert not [v for v in clean.violations if "alternative path" in v], clean.violations
    stats = clean.alternatives
    assert stats["other_read"].tried >= 1 and stats["other_read"].passed == stats["other_read"].tried
    assert stats["repeated_step"].passed == stats["repeated_step"].tried >= 2


async def test_the_guessing_attack_is_bounded_by_the_share_of_seeds() -> None:
    sound = workspace.with_templates([TaskTemplate(record_blocker, tools=TOOLS, category="issues")], name="workspace-guess")
    report = await check_environment(sound, seeds=[0, 1, 2, 3], attacks=True)
    guess = report.templates[0].guess
    assert guess.best != "-" and set(guess.rewards) == set(report.templates[0].declarations)
    assert guess.reward <= guess.share + 1e-9
    assert report.guess_mean == guess.reward


def test_cases_are_spread_evenly_over_consecutive_seeds() -> None:
    weights = {"ok": 6, "refused": 4}
    for template in ("cancel_wire", "record_blocker", "anything"):
        for start in (0, 1000, 73):
            counts = Counter(case(TaskRng(template, seed), weights) for seed in range(start, start + 20))
            assert 11 <= counts["ok"] <= 13, (template, start, counts)
    assert case(TaskRng("a", 5), weights) == case(TaskRng("a", 5), weights)  # deterministic
    plain = random.Random(3)
    assert case(plain, weights) in weights  # any other rng draws as before
    several = TaskRng("a", 1)
    first, second = case(several, {"x": 1, "y": 1}), case(several, {"x": 1, "y": 1})
    assert {first, second} <= {"x", "y"} and several.cases_drawn == 2
