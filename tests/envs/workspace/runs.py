"""Workspace task episodes for the credit tests: the instance of a kind (found by its case), and trajectories played
over a real in-memory MCP client and graded with the full rubric.

Why a case and not a seed: the world of each seed decides its case (``graders.setup.case``), and rebalancing a
template moves cases between seeds; these tests study a kind of instance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from envs.workspace import environment
from graders.grade import Grade
from graders.grading import grade_episode
from graders.play import play
from graders.tasks import TaskInstance, ToolCall
from servers.episodes import EpisodeManager

__all__ = ["graded_run", "instance_of", "moved_before_answer", "replaced", "seed_of", "world_value"]


@cache
def seed_of(template_id: str, case: str) -> int:
    """The first seed whose instance of ``template_id`` is of ``case`` (its ``metadata["case"]``)."""
    for seed in range(200):
        world, task = environment.instantiate_task(template_id, seed)
        world.release()
        if task.metadata.get("case") == case:
            return seed
    raise AssertionError(f"no seed of {template_id} below 200 is of case {case!r}")


def instance_of(template_id: str, case: str) -> TaskInstance:
    """The studied instance of (template, case), its world released."""
    world, task = environment.instantiate_task(template_id, seed_of(template_id, case))
    world.release()
    return task


def world_value(template_id: str, case: str, sql: str, *params: Any) -> Any:
    """The first column of the first row ``sql`` gives on the studied instance's world (right after its setup)."""
    world, _ = environment.instantiate_task(template_id, seed_of(template_id, case))
    try:
        rows = world.query(sql, params)
        assert rows, f"{template_id}/{case}: no row for {sql} {params}"
        return next(iter(rows[0].values()))
    finally:
        world.release()


async def graded_run(template_id: str, case: str, calls: Sequence[ToolCall]) -> Grade:
    """Play ``calls`` on a fresh episode of the studied instance over MCP, close it and grade it (no judge)."""
    manager = EpisodeManager(environment)
    episode = manager.create(task=template_id, seed=seed_of(template_id, case))
    try:
        await play(episode, calls)
        manager.close(episode.id)
        return await grade_episode(episode, judge_from_env=False)
    finally:
        manager.close_all()


def replaced(oracle: Sequence[ToolCall], which: Callable[[ToolCall], bool], *by: ToolCall) -> list[ToolCall]:
    """The oracle with every call ``which`` selects replaced by ``by`` (at the first one's place), optional steps kept."""
    out: list[ToolCall] = []
    done = False
    for step in oracle:
        if which(step):
            if not done:
                out.extend(by)
                done = True
            continue
        out.append(step)
    assert done, "nothing to replace"
    return out


def moved_before_answer(oracle: Sequence[ToolCall], tool: str) -> list[ToolCall]:
    """The oracle with every ``tool`` call moved to just before the final answer (e.g. a question asked after acting)."""
    *work, final = oracle
    moved = [s for s in work if s.tool == tool]
    assert moved, f"the oracle makes no {tool} call"
    return [*(s for s in work if s.tool != tool), *moved, final]

