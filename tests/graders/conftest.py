"""Fixtures for the grader tests: the toy help desk, episodes played over real MCP, one-criterion grading."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

import pytest

from graders.context import GradingContext
from graders.criteria.base import CriterionResult
from graders.criteria.judge import JudgeClient
from graders.grade import Grade
from graders.grading import grade_context
from graders.play import CallLike, play
from servers.environment import Environment
from servers.episodes import Episode, EpisodeManager
from tests.graders.toy import environment as toy_environment

Run = Callable[..., Awaitable[Episode]]
Evaluate = Callable[..., Awaitable[CriterionResult]]


@pytest.fixture
def toy() -> Environment:
    """The toy help desk environment."""
    return toy_environment


@pytest.fixture
def manager() -> Iterator[EpisodeManager]:
    """An episode manager of the toy help desk; everything is released at teardown."""
    mgr = EpisodeManager(toy_environment)
    yield mgr
    mgr.close_all()


@pytest.fixture
def run(manager: EpisodeManager) -> Run:
    """``await run(task, seed, calls)``: a toy episode with ``calls`` played over MCP, then closed."""

    async def go(task: str, seed: int = 0, calls: Sequence[CallLike] | str = (), **create: Any) -> Episode:
        episode = manager.create(task=task, seed=seed, **create)
        assert episode.task is not None
        script = episode.task.oracle if calls == "oracle" else calls
        if script:
            await play(episode, script)  # type: ignore[arg-type]
        manager.close(episode.id)
        return episode

    return go


async def grade_with(episode: Episode, rubric: list[Any], *, judge: JudgeClient | None = None, **updates: Any) -> Grade:
    """Grade ``episode`` with its task instance's rubric replaced by ``rubric`` (and other fields updated)."""
    assert episode.task is not None
    instance = type(episode.task).model_validate({**episode.task.model_dump(), "rubric": rubric, **updates})
    ctx = GradingContext(environment=episode.environment, instance=instance, record=episode.record, world=episode.world, judge=judge)
    return await grade_context(ctx, episode_id=episode.id)


@pytest.fixture
def evaluate() -> Evaluate:
    """``await evaluate(episode, criterion)``: that one criterion's result on the episode."""

    async def go(episode: Episode, criterion: Any, **updates: Any) -> CriterionResult:
        grade = await grade_with(episode, [criterion], **updates)
        return grade.criteria[0]

    return go
