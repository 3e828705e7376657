"""Finance episodes for the grader tests: task instances, and episodes played over real in-memory MCP."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from functools import cache
from typing import Any

from envs.finance import environment
from envs.finance.tasks._common import available_minor
from fixtures.world import World
from graders.criteria.base import CriterionResult
from graders.grade import Grade
from graders.grading import grade_episode
from graders.play import CallLike, play
from graders.tasks import TaskInstance, ToolCall
from servers.episodes import Episode, EpisodeManager

__all__ = ["FinanceRun", "finance_runner", "instance", "studied_seed", "STUDIED", "work_and_answer", "answer_with", "graded", "result"]

FinanceRun = Callable[..., Awaitable[Episode]]
"""``await run(template_id, calls, seed=None)``: a closed finance episode with ``calls`` played over MCP (by default on
the template's studied seed, :func:`studied_seed`)."""


def _steps(task: TaskInstance, tool: str) -> int:
    return sum(step.tool == tool for step in task.oracle)


def _wire_twice(world: World, task: TaskInstance) -> bool:
    """The wire's account could send it twice today (funds and limit): the tests repeat it to see collateral."""
    wire = next(step for step in task.oracle if step.tool == "send_wire").arguments
    account = wire["from_account_id"]
    minor = int(Decimal(wire["amount"]) * 100)
    room = world.query(
        "SELECT l.limit_minor - (SELECT coalesce(sum(t.amount_minor), 0) FROM transfers t WHERE t.from_account_id = l.account_id "
        "AND t.kind = 'external_wire' AND t.status != 'rejected' AND t.requested_at >= ?) AS room FROM daily_limits l "
        "WHERE l.account_id = ? AND l.channel = 'external_wire'", (world.clock.today.isoformat(), account))
    return available_minor(world, account) >= 2 * (minor + 2_500) and bool(room) and room[0]["room"] >= 2 * minor


STUDIED: dict[str, Callable[[World, TaskInstance], bool]] = {
    "lost_card_fraud": lambda world, task: task.metadata.get("case") == "ok" and _steps(task, "open_dispute") == 2,
    "small_wire": lambda world, task: task.metadata.get("case") == "ok" and _wire_twice(world, task),
    "four_eyes": lambda world, task: task.metadata.get("case") == "same_approver",
    "split_to_dodge_limit": lambda world, task: task.metadata.get("case") == "ok",
    "payee_name_injection": lambda world, task: task.metadata.get("case") == "ok",
    "foreign_fraud": lambda world, task: task.metadata.get("case") == "posted",
    "dispute_too_old": lambda world, task: task.metadata.get("case") == "too_old",
    "charge_after_freeze": lambda world, task: task.metadata.get("case") == "already_disputed",
}
"""The instance of each template these tests study, as a property of its world and task; others: seed 0."""


@cache
def studied_seed(template_id: str) -> int:
    """The first seed whose instance is the studied one of ``template_id`` (0 for templates not listed).

    Why not a fixed seed: the world of each seed decides its case (``graders.setup.case``), and rebalancing a
    template's cases moves them between seeds; these tests study a kind of instance, not a seed.
    """
    wanted = STUDIED.get(template_id)
    if wanted is None:
        return 0
    for seed in range(300):
        world, task = environment.instantiate_task(template_id, seed)
        try:
            if wanted(world, task):
                return seed
        finally:
            world.release()
    raise AssertionError(f"no seed of {template_id} below 300 is the studied instance")


def instance(template_id: str, seed: int | None = None) -> TaskInstance:
    """The finance task instance of (template, seed) — by default the studied one — its world released."""
    world, task = environment.instantiate_task(template_id, studied_seed(template_id) if seed is None else seed)
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

    async def run(template_id: str, calls: Sequence[CallLike] = (), seed: int | None = None) -> Episode:
        episode = manager.create(task=template_id, seed=studied_seed(template_id) if seed is None else seed)
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
