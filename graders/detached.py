"""A task episode built outside any episode manager, for the grader's own replays.

The oracle's expected change set, the no-op baseline and the grading bench each need the same thing: a
fresh world of (template, seed, scale) with the task's setup applied, its start marked, and an Episode
with a record header around it — never registered anywhere an agent could reach. One builder serves all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from servers.episodes import Episode
from servers.record import EpisodeHeader, Record
from servers.setups import SetupCache

if TYPE_CHECKING:
    from servers.environment import Environment

__all__ = ["detached_task_episode", "instance_cache_key"]


def instance_cache_key(environment: Environment, seed: int, scale: int) -> tuple[object, ...]:
    """The key under which a template caches what it derived for one instance (expected set, no-op baseline).

    The fixture version is part of it, so editing the generator or schema never serves a stale entry.
    """
    return (environment.name, environment.fixture.version, environment.task_fixture_seed, seed, scale)


def detached_task_episode(environment: Environment, template_id: str, seed: int, *, scale: int = 1, label: str) -> Episode:
    """A live episode of (template, seed) on a fresh world of ``scale``; the caller releases its world.

    Args:
        label: what the episode is for (``oracle``, ``noop``, ...); it prefixes the episode id.

    Raises:
        TaskError: unknown template, or its build fails.
    """
    if scale == 1:
        # the environment's own setup cache: the instance was just built for the episode being graded (or the
        # check's), so this replays or lays it instead of building it a second time
        world, instance = SetupCache.shared(environment).instantiate(template_id, seed)
    else:
        template = environment.task_template(template_id)
        world = environment.fixture.world(environment.task_fixture_seed, scale=scale)
        try:
            instance = template.instantiate(world, seed)
        except BaseException:
            world.release()
            raise
    world.mark_start()
    header = EpisodeHeader(
        episode_id=f"{label}:{template_id}:{seed}:x{scale}",
        env=environment.name,
        fixture_version=environment.fixture.version,
        task=template_id,
        seed=seed,
        fixture_seed=environment.task_fixture_seed,
        start_hash=f"(not hashed: {label} replay)",
        prompt=instance.prompt,
        clock=world.clock.now.isoformat(),
    )
    return Episode(id=header.episode_id, environment=environment, world=world, task=instance, record=Record(header=header))
