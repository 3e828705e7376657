"""Finance episodes for the grader tests: task instances, and episodes played over real in-memory MCP."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from envs.finance import environment
from graders.criteria.base import CriterionResult
from graders.grade import Grade
from graders.grading import grade_episode
from graders.play import CallLike, play
from graders.tasks import TaskInstance, ToolCall
from servers.episodes import Episode, EpisodeManager

__all__ = ["FinanceRun", "finance_runner", "instance", "work_and_answer", "answer_with", "graded", "result"]

FinanceRun = Callable[..., Awaitable[Episode]]
"""``await run(template_id, calls, seed=0)``: a closed finance episode with ``calls`` played over MCP."""


def instance(template_id: str, seed: int = 0) -> TaskInstance:
    """The finance task instance of (template, seed), its world released."""
    world, task = environment.instantiate_task(template_id, seed)
    world.release()
    return task


def work_and_answer(task: TaskInstance) -> tuple[list[ToolCall], ToolCall]:
    """(the oracle's calls before its final answer, the final answer)."""
    *work, final = task.oracle
    assert final.tool == "submit_answer", task.template_id
    return work, final


def answer_with(final: ToolCall, **changes: Any) -> ToolCall:
    """``final`` with some arguments replaced (``values=``, ``outcome=``...)."""
    return ToolCall(tool=final.tool, arguments={**final.arguments, **changes})


@contextmanager
def finance_runner() -> Iterator[FinanceRun]:
    """A runner of finance episodes; every episode is released on exit."""
    manager = EpisodeManager(environment)

    async def run(template_id: str, calls: Sequence[CallLike] = (), seed: int = 0) -> Episode:
        episode = manager.create(task=template_id, seed=seed)
        if calls:
            await play(episode, calls)
        manager.close(episode.id)
        return episode

    try:
        yield run
    finally:
        manager.close_all()


async def graded(episode: Episode) -> Grade:
    """The episode's grade with its full rubric (no judge)."""
    return await grade_episode(episode, judge_from_env=False)


def result(grade: Grade, name: str) -> CriterionResult:
    """The result of the criterion called ``name`` in ``grade``."""
    found = [r for r in grade.criteria if r.name == name]
    assert found, f"no criterion {name!r} in {[r.name for r in grade.criteria]}"
    return found[0]
