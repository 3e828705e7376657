"""Which criteria an untouched world already satisfies — they may gate a grade but never earn it credit.

A rubric rightly holds criteria that doing nothing satisfies: "no collateral damage", "never called
send_wire", "the account is still open". As weighted criteria they pay an agent for inaction: the finance
no-op scored a mean 0.32 before this rule, a reward an RL policy learns to collect. So each task instance's
rubric is evaluated once on its start world with an empty record (the no-op), cached like the oracle's
expected change set, and every criterion that passes there is marked ``credited=False``: while it passes it
adds nothing to the weighted mean; when it fails it still counts (as a gate it zeroes the score, as a
weighted criterion it lowers the mean). The no-op therefore scores 0
on every task whose success takes any work (and 1.0 only where the task declares the no-op may pass).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

from graders.context import GradingContext, read_only
from graders.detached import detached_task_episode, instance_cache_key
from graders.standard import full_rubric

if TYPE_CHECKING:
    from graders.tasks import TaskInstance
    from servers.environment import Environment

__all__ = ["noop_satisfied", "remember_noop"]


async def noop_satisfied(environment: Environment, instance: TaskInstance, *, scale: int = 1) -> frozenset[str]:
    """Names of ``instance``'s criteria that pass on its untouched start world (cached per instance).

    I/O criteria (the LLM judge) are never evaluated here: they stay credited.
    """
    template = environment.task_template(instance.template_id)
    key = instance_cache_key(environment, instance.seed, scale)
    cache: dict[object, frozenset[str]] = template._noop_satisfied
    cached = cache.get(key)
    if cached is not None:
        return cached
    episode = detached_task_episode(environment, instance.template_id, instance.seed, scale=scale, label="noop")
    try:
        ctx = GradingContext(environment=environment, instance=episode.task, record=episode.record, world=episode.world)  # type: ignore[arg-type]
        if any(criterion.needs_expected for criterion in full_rubric(environment, ctx.instance)):
            await ctx.load_expected()  # which may work the baseline out on its own replay's start world
        cached = cache.get(key)
        if cached is not None:
            return cached
        return remember_noop(environment, ctx, scale)
    finally:
        episode.world.release()


def remember_noop(environment: Environment, ctx: GradingContext, scale: int) -> frozenset[str]:
    """Evaluate the rubric on ``ctx`` (an untouched start world, an empty record, the expected set loaded when
    needed), cache which criteria pass as the instance's no-op baseline, and return them.

    Why apart: ``graders/expected.py`` replays the oracle on a start world, then undoes it and calls this on the
    same world, so a new instance builds its setup once for both baselines instead of twice.
    """
    start = ctx.instance
    rubric = ctx.rubric = full_rubric(environment, start)
    passing: set[str] = set()
    with read_only(ctx.world):
        for criterion in rubric:
            outcome = criterion.evaluate(ctx)
            if inspect.isawaitable(outcome):
                outcome.close()  # type: ignore[union-attr]  # a judge call: never made for the baseline
                continue
            if outcome.graded and outcome.passed:
                passing.add(outcome.name)
    result = frozenset(passing)
    cache: dict[object, frozenset[str]] = environment.task_template(start.template_id)._noop_satisfied
    while len(cache) >= 4096:
        cache.pop(next(iter(cache)))
    cache[instance_cache_key(environment, start.seed, scale)] = result
    return result
