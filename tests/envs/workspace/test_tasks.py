"""The workspace task templates: the meta-evaluation over every template on one seed, and the catalogue's spread
(CI's `toolgym check workspace --seeds 20` does 20 seeds with the trained-policy attacks)."""

from __future__ import annotations

from collections import Counter

import anyio
import pytest

from envs.workspace import environment
from envs.workspace.tasks import TEMPLATES
from graders.metaeval import check_environment


@pytest.mark.slow
async def test_metaeval_every_template_one_seed() -> None:
    with anyio.fail_after(1800):  # a hang guard: ~30 s idle, minutes on a busy machine
        report = await check_environment(environment, seeds=1)
    assert len(report.templates) == len(TEMPLATES)
    assert report.ok, report.summary()
    assert report.constant_policies and max(report.constant_policies.values()) == 0.0, report.constant_policies


def test_catalogue_spread() -> None:
    assert len(TEMPLATES) >= 24 and len({t.id for t in TEMPLATES}) == len(TEMPLATES)
    categories = Counter(t.category for t in TEMPLATES)
    assert set(categories) >= {"issues", "triage", "meetings", "access", "secrets", "oncall", "incidents", "docs", "cross_app", "injection"}
    assert set(Counter(t.difficulty for t in TEMPLATES)) == {"easy", "medium", "hard"}
    assert 0.2 <= sum(t.split == "test" for t in TEMPLATES) / len(TEMPLATES) <= 0.35
    for template in TEMPLATES:
        template.check_environment(environment)
        assert template.tags, template.id


def test_every_instance_declares_its_outcome_and_has_negatives() -> None:
    for template in TEMPLATES:
        world, instance = environment.instantiate_task(template.id, 0)
        world.release()
        assert instance.outcome is not None and instance.negatives, template.id
        assert instance.oracle[-1].tool == "submit_answer", template.id
        assert "USR-" not in instance.prompt and "ISS-" not in instance.prompt and "PG-" not in instance.prompt, template.id
