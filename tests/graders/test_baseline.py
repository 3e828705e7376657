"""Inaction earns no reward: criteria the untouched start world satisfies can gate a grade but never pay it."""

from __future__ import annotations

from graders.grading import grade_episode
from graders.play import play
from servers import EpisodeManager
from tests.graders.toy import environment


async def graded(template: str, seed: int, calls: list) -> object:  # type: ignore[type-arg]
    manager = EpisodeManager(environment)
    episode = manager.create(task=template, seed=seed)
    await play(episode, calls)
    grade = await grade_episode(episode)
    manager.close_all()
    return grade


async def test_the_noop_scores_zero_on_every_toy_task() -> None:
    for template in environment.task_templates():
        grade = await graded(template, 0, [])
        assert grade.score == 0.0, grade.summary()  # type: ignore[attr-defined]
        uncredited = [c for c in grade.criteria if not c.credited]  # type: ignore[attr-defined]
        assert all(c.passed for c in uncredited)  # exactly the ones inaction satisfies


async def test_the_oracle_still_scores_one_and_uncredited_criteria_are_reported() -> None:
    manager = EpisodeManager(environment)
    episode = manager.create(task="freeze_compromised", seed=0)
    await play(episode, episode.task.oracle)  # type: ignore[union-attr]
    grade = await grade_episode(episode)
    manager.close_all()
    assert grade.score == 1.0 and grade.passed
    assert any(not c.credited for c in grade.criteria)  # e.g. "no collateral": passes, earns nothing
    assert '"credited":false' in grade.to_json().replace(" ", "")


async def test_breaking_an_uncredited_criterion_still_costs_score() -> None:
    manager = EpisodeManager(environment)
    episode = manager.create(task="freeze_compromised", seed=0)
    instance = episode.task
    both = next(n for n in instance.negatives if n.name == "freezes_both")  # type: ignore[union-attr]
    await play(episode, both.calls)
    grade = await grade_episode(episode)
    manager.close_all()
    broken = [c for c in grade.criteria if not c.passed]
    assert broken and not grade.passed and grade.score < 1.0
    assert any(not c.credited for c in broken)  # the penalty comes from a criterion inaction satisfies
