"""Answers of read-only tools, remembered by the world's content: the same read of the same world answers the same.

A read-only tool's result (or refusal) is a function of the world's rows, its frozen clock and the call's arguments
(design decision 7: the same calls on the same world give the same results; ``servers/dispatch.py`` rolls back and
reports any write a read-only tool makes). Many episodes read worlds whose content is the same: every member of a
GRPO group reads its instance's start world, and ``toolgym check`` plays a hundred trajectories per instance,
most opening with the same reads. The world's content hash names its content exactly (``fixtures/hashing.py``, in
O(rows changed since the last hash)), so an answer computed once serves every later call with the same key.

What is never remembered: answers of tools that looked at their episode's id or call number (``ToolContext``
notes it: those may differ per episode, and must never reach another), internal errors, and reads of worlds that
cannot name their content cheaply (no template hash). The cache is per process and bounded (least recently used
first out); it holds answers, never worlds.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from servers.setups import call_key

if TYPE_CHECKING:
    from fixtures.world import World
    from servers.environment import Environment
    from servers.record import CallError

__all__ = ["ReadCache", "READS"]

Answer = tuple[Any, "CallError | None"]


class ReadCache:
    """The last ``limit`` read answers of this process, by (environment, world content, tool, arguments)."""

    def __init__(self, limit: int = 2048) -> None:
        self.limit = limit
        self._answers: OrderedDict[tuple[Any, ...], Answer] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def key(self, environment: Environment, world: World, tool: str, arguments: dict[str, Any]) -> tuple[Any, ...] | None:
        """The call's key on ``world`` as it is now, or None when the world cannot name its content cheaply."""
        if not world.hashes_cheaply:
            return None
        return (environment.name, environment.fixture.version, world.fixture_name, world.scale, world.clock.now,
                world.hash(), call_key(tool, arguments))

    def get(self, key: tuple[Any, ...]) -> Answer | None:
        """The remembered answer, or None."""
        answer = self._answers.get(key)
        if answer is None:
            self.misses += 1
            return None
        self._answers.move_to_end(key)
        self.hits += 1
        return answer

    def put(self, key: tuple[Any, ...], answer: Answer) -> None:
        """Remember ``answer`` (the oldest goes when full)."""
        self._answers[key] = answer
        while len(self._answers) > self.limit:
            self._answers.popitem(last=False)

    def clear(self) -> None:
        """Forget every answer."""
        self._answers.clear()


READS = ReadCache()
"""This process's read answers (``servers/dispatch.py``)."""
