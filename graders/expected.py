"""The oracle's expected change set: replay the oracle once per task instance, cache the net diff.

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
from servers.episodes import Episode
from servers.record import EpisodeHeader, Record

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
    key = (environment.name, environment.fixture.version, environment.task_fixture_seed, seed, scale)
    cached: list[RowChange] | None = template._expected.get(key)
    if cached is not None:
        return cached
    world = environment.fixture.world(environment.task_fixture_seed, scale=scale)
    try:
        instance = template.instantiate(world, seed)
        world.mark_start()
        header = EpisodeHeader(
            episode_id=f"oracle:{template_id}:{seed}",
            env=environment.name,
            fixture_version=environment.fixture.version,
            task=template_id,
            seed=seed,
            fixture_seed=environment.task_fixture_seed,
            start_hash="(not hashed: oracle replay)",
            prompt=instance.prompt,
            clock=world.clock.now.isoformat(),
        )
        episode = Episode(id=header.episode_id, environment=environment, world=world, task=instance, record=Record(header=header))
        for number, step in enumerate(instance.oracle, start=1):
            event = await call_tool(episode, step.tool, step.arguments)
            if event.error is not None:
                raise GradingError(
                    f"the oracle of task template {template_id!r} (seed {seed}) fails at call #{number} "
                    f"{step.tool}: {event.error.code}: {event.error.message}; fix the template's oracle"
                )
        changes = world.diff()
    finally:
        world.release()
    cache = template._expected
    while len(cache) >= CACHE_PER_TEMPLATE:
        cache.pop(next(iter(cache)))
    cache[key] = changes
    return changes
