"""A run's plan: which episodes it plays (task × seed × trial), counted and iterated, never held in memory.

``--seeds 0-99999999`` is a legitimate request (an RL job draws from a large seed space), and listing every
episode of it up front took gigabytes before the first one ran. A :class:`Plan` is the product of its
tasks, seeds (:class:`clients.selection.Seeds`, ranges) and trials: its size and membership are arithmetic,
its items are made as the runner's workers take them, so a run starts at once whatever its size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from clients.attempts import EpisodeItem
from clients.results import EpisodeKey

__all__ = ["Plan"]


@dataclass(frozen=True)
class Plan:
    """The episodes of a run, in order: every task, its seeds, their trials.

    Args:
        agent: the agent spec (part of every episode's key).
        blocks: ``(tasks, seeds)`` products played in turn (one block for a run; a replay has one per record).
        trials: trials per (task, seed).
        name: the run's file-safe name of an episode, from (agent, task, seed, trial).
    """

    agent: str
    blocks: Sequence[tuple[Sequence[str], Sequence[int]]]
    trials: int
    name: Callable[[str, str, int, int], str]

    def __len__(self) -> int:
        return sum(len(tasks) * len(seeds) for tasks, seeds in self.blocks) * self.trials

    def __iter__(self) -> Iterator[EpisodeItem]:
        for tasks, seeds in self.blocks:
            for task in tasks:
                for seed in seeds:
                    for trial in range(self.trials):
                        yield EpisodeItem(task, seed, trial, self.name(self.agent, task, seed, trial))

    def __contains__(self, key: object) -> bool:
        """Whether an episode key ``(task, seed, trial, agent)`` is one of this plan's."""
        if not isinstance(key, tuple) or len(key) != 4:
            return False
        task, seed, trial, agent = key
        if agent != self.agent or not isinstance(trial, int) or not 0 <= trial < self.trials:
            return False
        return any(task in tasks and seed in seeds for tasks, seeds in self.blocks)

    def todo(self, done: set[EpisodeKey]) -> Iterator[EpisodeItem]:
        """The plan's items whose key is not in ``done``, lazily."""
        for item in self:
            if (item.task, item.seed, item.trial, self.agent) not in done:
                yield item

    def count_done(self, done: Iterable[EpisodeKey]) -> int:
        """How many of ``done`` belong to this plan."""
        return sum(1 for key in done if key in self)
