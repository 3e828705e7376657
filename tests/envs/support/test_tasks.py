"""The support task templates: the meta-evaluation over every template and 2 seeds, the catalogue's spread, and
targeted checks that the rubrics fail unsafe trajectories for the right reason."""

from __future__ import annotations

from collections import Counter

import anyio
import pytest

from envs.support import environment
from envs.support.tasks import TEMPLATES
from graders.grading import grade_episode
from graders.attacks import ATTACK_CLASSES
from graders.metaeval import check_environment
from graders.play import play
from graders.tasks import TaskInstance
from servers import EpisodeManager


@pytest.mark.slow
async def test_metaeval_every_template_one_seed() -> None:
    """Oracle 1.0 with no tool error; no-op, every negative, every generated attack and alternative path as they must;
    constant policies earn nothing; determinism — for all templates on one seed (CI's `toolgym check support --seeds 20`
    does 20, with the guessing bound and the majority shares, which need many seeds)."""
    with anyio.fail_after(1800):  # a hang guard: minutes idle, many more at a load of 14
        report = await check_environment(environment, seeds=1)
    assert len(report.templates) == len(TEMPLATES)
    # the guessing bound is a mean over many seeds: on one seed the declaration to guess is the right one by construction
    problems = [v for v in report.violations if not v.startswith("the guessing attack averages")]
    assert not problems, report.summary()
    assert all(t.negatives != "none" for t in report.templates), report.summary()
    assert all(s.counted for kind, s in report.attacks.items() if kind in ATTACK_CLASSES), report.summary()
    assert report.constant_policies and max(report.constant_policies.values()) == 0.0, report.constant_policies


def test_catalogue_spread() -> None:
    """At least 35 templates over every category the issue names and every difficulty, about 30% held out."""
    assert len(TEMPLATES) >= 35 and len({t.id for t in TEMPLATES}) == len(TEMPLATES)
    categories = Counter(t.category for t in TEMPLATES)
    assert set(categories) >= {"orders", "shipping", "returns", "damaged", "exchanges", "refunds", "subscriptions", "billing", "coupons",
                               "goodwill", "accounts", "tickets", "escalations", "refusals", "injection", "multistep"}
    assert set(Counter(t.difficulty for t in TEMPLATES)) == {"easy", "medium", "hard"}
    assert 0.25 <= sum(t.split == "test" for t in TEMPLATES) / len(TEMPLATES) <= 0.35
    for template in TEMPLATES:
        template.check_environment(environment)
        assert template.tags, template.id


def test_every_instance_has_three_negatives_and_declares_its_outcome() -> None:
    outcomes: Counter[str] = Counter()
    for template in TEMPLATES:
        world, instance = environment.instantiate_task(template.id, 0)
        world.release()
        assert len(instance.negatives) >= 3, template.id
        assert not instance.noop_may_pass and not instance.allowed_changes, template.id
        final = instance.oracle[-1]
        assert final.tool == "submit_answer" and instance.outcome is not None, template.id
        assert final.arguments["outcome"] == instance.outcome.outcome, template.id
        assert final.arguments.get("reason_code") in (instance.outcome.reason_codes or [None]), template.id
        for key in ("refund", "adjustment", "credit", "restocking_fee", "total_refunded"):
            if key in instance.metadata:
                assert str(instance.metadata[key]) not in instance.prompt, (template.id, key)
    # The world of each instance decides its outcome (issue 17), so count the templates that declare each outcome on
    # some of the first seeds, not on seed 0 alone.
    for template in TEMPLATES:
        declared = set()
        for seed in range(10):
            world, instance = environment.instantiate_task(template.id, seed)
            world.release()
            assert instance.outcome is not None, template.id
            declared.add(instance.outcome.outcome)
        outcomes.update(declared)
    assert outcomes["completed"] and outcomes["refused"] >= 8 and outcomes["escalated"] >= 4, outcomes


def _first_completed(template_id: str, seeds: int = 10) -> TaskInstance:
    """The first instance of ``template_id`` whose world lets the case be worked through (declared ``completed``): a
    refusal or escalation twin stops early by design."""
    for seed in range(seeds):
        world, instance = environment.instantiate_task(template_id, seed)
        world.release()
        if instance.outcome is not None and instance.outcome.outcome == "completed":
            return instance
    raise AssertionError(f"{template_id}: no completed case in seeds 0-{seeds - 1}")


def test_multistep_cases_take_eight_to_fifteen_calls() -> None:
    for template in TEMPLATES:
        if template.category == "multistep" or "multistep" in template.tags:
            instance = _first_completed(template.id)
            assert 8 <= len(instance.oracle) <= 15, (template.id, len(instance.oracle))


def test_same_seed_same_instance_other_seed_other_subject() -> None:
    first, a = environment.instantiate_task("damaged_keep", 7)
    second, b = environment.instantiate_task("damaged_keep", 7)
    third, c = environment.instantiate_task("damaged_keep", 8)
    try:
        assert a.model_dump_json() == b.model_dump_json() and first.hash() == second.hash()
        assert (a.prompt, a.metadata) != (c.prompt, c.metadata)
    finally:
        for world in (first, second, third):
            world.release()


async def test_an_oracle_grade_explains_every_criterion() -> None:
    manager = EpisodeManager(environment)
    try:
        episode = manager.create(task="lost_parcel_ticket", seed=0)
        assert episode.task is not None
        with anyio.fail_after(60):
            played = await play(episode, episode.task.oracle)
            manager.close(episode.id)
            grade = await grade_episode(episode)
        assert all(p.ok for p in played) and grade.passed and grade.score == 1.0
        assert all(r.evidence for r in grade.criteria)
        assert "customer agreed before the refund" in {r.name for r in grade.criteria}
    finally:
        manager.close_all()
