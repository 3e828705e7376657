"""The oracle's expected change set: replay the oracle once per task instance, cache the net diff (and, on the
same world undone to its start, the instance's no-op baseline: ``graders/baseline.py``).

The replay clones a fresh world of the same (template, seed, scale), applies the task's setup, then runs
every oracle call through the real dispatcher (validation, savepoints, change log) — the same path an
agent's calls take, minus the MCP transport, which adds nothing to what the world ends up as. The result
is cached on the template object, keyed by environment, fixture version and seed, so a thousand graded
episodes of one instance replay its oracle once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fixtures.changes import RowChange
from fixtures.errors import GradingError
from servers.dispatch import call_tool
from graders.detached import detached_task_episode, instance_cache_key

if TYPE_CHECKING:
    from servers.environment import Environment

__all__ = ["expected_changes", "CACHE_PER_TEMPLATE"]

CACHE_PER_TEMPLATE = 4096
"""Most seeds whose expected change set one template keeps (oldest evicted first)."""


async def expected_changes(environment: Environment, template_id: str, seed: int, *, scale: int = 1) -> list[RowChange]:
    """The net row changes the oracle of (template, seed) makes, from the cache or by replaying it.

    Raises:
        TaskError: unknown template.
        GradingError: an oracle call fails — the template is broken, not the agent.
    """
    template = environment.task_template(template_id)
    key = instance_cache_key(environment, seed, scale)
    cached: list[RowChange] | None = template._expected.get(key)
    if cached is not None:
        return cached
    episode = detached_task_episode(environment, template_id, seed, scale=scale, label="oracle")
    world, instance = episode.world, episode.task
    assert instance is not None
    try:
        for number, step in enumerate(instance.oracle, start=1):
            event = await call_tool(episode, step.tool, step.arguments)
            if event.error is not None:
                raise GradingError(
                    f"the oracle of task template {template_id!r} (seed {seed}) fails at call #{number} "
                    f"{step.tool}: {event.error.code}: {event.error.message}; fix the template's oracle"
                )
        changes = world.diff()
        cache = template._expected
        while len(cache) >= CACHE_PER_TEMPLATE:
            cache.pop(next(iter(cache)))
        cache[key] = changes
        if key not in template._noop_satisfied and world.rewind_to_start():
            # the same world, back at its start, serves the no-op baseline: the setup is built once for both
            from graders.baseline import remember_noop
            from graders.context import GradingContext
            from servers.record import Record

            empty = Record(header=episode.record.header)
            try:
                remember_noop(environment, GradingContext(environment=environment, instance=instance, record=empty, world=world,
                                                          _expected=changes), scale)
            except Exception:  # noqa: BLE001 - noop_satisfied works it out on its own world, and reports what fails there
                pass
    finally:
        world.release()
    return changes
