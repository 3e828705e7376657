"""Grading: run a task instance's rubric over an episode's record and end world, and combine the results.

Two entry points, one engine:

* :func:`grade_episode` grades a live or closed episode in this process (control API, runners, tests),
  reading only its record and its end world.
* :func:`grade_record` grades a saved record offline: it rebuilds the task instance from (template, seed)
  and the end world from the record's logged changes, checks the rebuilt world against the record's end
  hash, then runs the same engine — so re-grading a record gives the grade the live episode got.

Cost is O(changed rows): the diff comes from the change log, the expected change set is cached per task
instance, and state checks query by key. Neither entry point hashes or scans the live world.
"""

from __future__ import annotations

import inspect
from collections import OrderedDict
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fixtures.errors import GradingError
from fixtures.world import World
from graders.context import GradingContext, read_only
from graders.criteria.base import CriterionResult, schema_tables
from graders.criteria.judge import JudgeClient, LLMJudge
from graders.grade import Grade, combine
from graders.replay import rebuild_end_world
from graders.baseline import noop_satisfied
from graders.standard import full_rubric
from servers.record import Record, read_record

if TYPE_CHECKING:
    from graders.tasks import TaskInstance
    from servers.environment import Environment
    from servers.episodes import Episode

__all__ = ["grade_episode", "grade_record", "grade_context", "lint_instance"]


def lint_instance(environment: Environment, instance: TaskInstance) -> list[str]:
    """Problems that make an instance's rubric, oracle or negatives meaningless in ``environment``.

    A typo such as ``ToolNotCalled(tool="transfr")`` would otherwise pass vacuously, so these are errors.
    """
    problems: list[str] = []
    known = environment.tool_specs
    for criterion in full_rubric(environment, instance):
        problems += [f"criterion {criterion.label!r}: {p}" for p in criterion.lint(environment)]
    if instance.outcome is not None:
        problems += [f"outcome: {p}" for p in instance.outcome.lint(environment)]
    for number, step in enumerate(instance.oracle, start=1):
        if step.tool not in known:
            problems.append(f"oracle call #{number} names unknown tool {step.tool!r}")
    for neg in instance.negatives:
        problems += [f"negative {neg.name!r} names unknown tool {c.tool!r}" for c in neg.calls if c.tool not in known]
    if instance.allowed_changes:
        tables = schema_tables(environment)
        problems += [f"allowed_changes names table {a.table!r}, which the schema does not define" for a in instance.allowed_changes if a.table not in tables]
    return problems


_PREPARED: OrderedDict[int, tuple[Environment, TaskInstance, list[str], list[Any]]] = OrderedDict()
_PREPARED_LIMIT = 512


def _prepared(environment: Environment, instance: TaskInstance) -> tuple[list[str], list[Any]]:
    """The instance's lint problems and full rubric, computed once per instance object (the last few hundred).

    Why: an instance is graded many times over (``toolgym check`` grades a hundred trajectories of each, GRPO
    groups grade one instance per member), and both depend on the environment and the instance alone. The
    entry holds both objects, so an id is never reused while it is cached.
    """
    key = id(instance)
    entry = _PREPARED.get(key)
    if entry is not None and entry[0] is environment and entry[1] is instance:
        _PREPARED.move_to_end(key)
        return entry[2], entry[3]
    problems = lint_instance(environment, instance)
    rubric = full_rubric(environment, instance)
    _PREPARED[key] = (environment, instance, problems, rubric)
    while len(_PREPARED) > _PREPARED_LIMIT:
        _PREPARED.popitem(last=False)
    return problems, rubric


def _crashed(criterion: Any, exc: Exception) -> GradingError:
    """A criterion that raised is the kit's bug, never the agent's doing: a :class:`GradingError` naming it.

    Why not a failed criterion: a crash scored as a failure would blame the agent for our bug (and a crash
    scored as a pass would pay it); the episode is errored ``grading`` instead, counted apart, never dropped.
    """
    return GradingError(f"criterion {criterion.label!r} ({criterion.kind}) crashed: {type(exc).__name__}: {exc}"[:2000])


def _evaluate(criterion: Any, ctx: GradingContext) -> CriterionResult | Awaitable[CriterionResult]:
    try:
        return criterion.evaluate(ctx)
    except GradingError:
        raise
    except Exception as exc:
        raise _crashed(criterion, exc) from exc


async def _settle(criterion: Any, outcome: CriterionResult | Awaitable[CriterionResult]) -> CriterionResult:
    if not inspect.isawaitable(outcome):
        return outcome
    try:
        return await outcome
    except GradingError:
        raise
    except Exception as exc:
        raise _crashed(criterion, exc) from exc


async def grade_context(ctx: GradingContext, *, episode_id: str | None = None, end_hash: str | None = None) -> Grade:
    """Evaluate every criterion of ``ctx.instance`` and combine them into a grade.

    Raises:
        GradingError: the rubric cannot be evaluated (lint problems, a failing oracle, a broken query).
    """
    instance = ctx.instance
    problems, rubric = _prepared(ctx.environment, instance)
    if problems:
        raise GradingError(f"task template {instance.template_id!r} (seed {instance.seed}): " + "; ".join(problems))
    ctx.rubric = list(rubric)
    if any(criterion.needs_expected for criterion in rubric):
        await ctx.load_expected()
    outcomes: list[CriterionResult | Awaitable[CriterionResult]] = []
    try:
        with read_only(ctx.world):
            for criterion in rubric:
                outcomes.append(_evaluate(criterion, ctx))
        # I/O criteria (the judge) return awaitables; they never touch the world, so they run after the block
        results = [await _settle(criterion, outcome) for criterion, outcome in zip(rubric, outcomes, strict=True)]
    finally:
        for outcome in outcomes:
            if inspect.iscoroutine(outcome):
                outcome.close()  # a judge call never awaited because another criterion crashed first
    satisfied_by_noop = await noop_satisfied(ctx.environment, instance, scale=getattr(ctx.world, "scale", 1))
    results = [r.model_copy(update={"credited": False}) if r.name in satisfied_by_noop else r for r in results]
    calls = ctx.calls
    return combine(
        results,
        env=ctx.environment.name,
        template_id=instance.template_id,
        seed=instance.seed,
        threshold=instance.threshold,
        episode_id=episode_id,
        tool_calls=len(calls),
        agent_errors=sum(1 for e in calls if e.error is not None and e.error.error_class != "internal"),
        internal_errors=sum(1 for e in calls if e.error is not None and e.error.error_class == "internal"),
        end_hash=end_hash,
    )


async def _grade(
    environment: Environment,
    instance: TaskInstance,
    record: Record,
    world: World,
    judge: JudgeClient | None,
    judge_from_env: bool,
    end_hash: str | None,
) -> Grade:
    owned: JudgeClient | None = None
    if judge is None and judge_from_env and any(isinstance(c, LLMJudge) for c in instance.rubric):
        judge = owned = JudgeClient.from_env()
    try:
        ctx = GradingContext(environment=environment, instance=instance, record=record, world=world, judge=judge)
        return await grade_context(ctx, episode_id=record.header.episode_id, end_hash=end_hash)
    finally:
        if owned is not None:
            await owned.aclose()


async def grade_episode(episode: Episode, *, judge: JudgeClient | None = None, judge_from_env: bool = True) -> Grade:
    """Grade ``episode`` from its record and its end world (closed or still live).

    Args:
        episode: a task episode whose world has not been released.
        judge: the LLM judge to use; default: the one configured by ``TOOLGYM_JUDGE_*`` (if any).
        judge_from_env: with no ``judge`` given, read ``TOOLGYM_JUDGE_*``; False leaves judge criteria ungraded.

    Raises:
        GradingError: free play (no task), a released world, or a rubric that cannot be evaluated.
    """
    if episode.task is None:
        raise GradingError(f"episode {episode.id!r} is free play (no task): there is no rubric to grade it with")
    if episode.released or episode.world.closed:
        raise GradingError(f"episode {episode.id!r} was released and its world freed; grade its record with grade_record")
    closed = episode.record.closed
    end_hash = closed.end_hash if closed else None
    return await _grade(episode.environment, episode.task, episode.record, episode.world, judge, judge_from_env, end_hash)


async def grade_record(
    environment: Environment, record: Record | Path | str, *, judge: JudgeClient | None = None, judge_from_env: bool = True
) -> Grade:
    """Grade a saved record offline: rebuild its task and end world, verify the end hash, run the rubric.

    Args:
        environment: the environment the record must come from.
        record: a :class:`Record` or the path of a JSONL record file.
        judge, judge_from_env: as for :func:`grade_episode`.

    Raises:
        RecordError: unreadable, truncated, from another environment or fixture version, or its changes do
            not reproduce its end hash.
        TaskError: the record's task template is unknown here.
        GradingError: the rubric cannot be evaluated.
    """
    if not isinstance(record, Record):
        record = read_record(record, expect_env=environment.name, require_closed=True)
    world, instance = rebuild_end_world(environment, record)
    try:
        closed = record.closed
        return await _grade(environment, instance, record, world, judge, judge_from_env, closed.end_hash if closed else None)
    finally:
        world.release()
