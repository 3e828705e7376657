"""What a criterion may read while grading one episode — everything observable at the server, nothing more.

The record (tool calls with arguments, results, errors), the end world, the task instance, and on demand
the episode's net diff and the oracle's expected change set. Both diffs come from change logs, so their
cost is the number of changed rows, never the size of the world.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fixtures.changes import RowChange
from fixtures.errors import GradingError
from fixtures.world import WorldWritten
from graders.expected import expected_changes
from servers.record import Record, ToolCallEvent

if TYPE_CHECKING:
    from fixtures.world import World
    from graders.criteria.judge import JudgeClient
    from graders.tasks import TaskInstance
    from servers.environment import Environment

__all__ = ["GradingContext", "read_only"]


@contextmanager
def read_only(world: World) -> Iterator[None]:
    """Criteria only read the end world (:meth:`World.read_only`): a write is refused, or caught and undone, and
    the pass fails with a :class:`GradingError` saying so — a criterion that writes is the kit's bug.

    One block per grading pass, not per criterion: entering it costs a change-count read and a flag.
    """
    try:
        with world.read_only():
            yield
    except GradingError as exc:
        refused = world.refused_write
        if refused is None or "not authorized" not in str(exc):
            raise
        raise GradingError(f"{exc} (criteria only read the end world; refused: {refused})") from exc.__cause__
    except WorldWritten as exc:
        raise GradingError(f"a criterion wrote to the end world: {exc}") from exc


@dataclass
class GradingContext:
    """The inputs of one grading pass."""

    environment: Environment
    instance: TaskInstance
    record: Record
    world: World
    """The end world (read it; never write)."""
    judge: JudgeClient | None = None
    """The LLM judge, when one is configured."""
    rubric: list[Any] = field(default_factory=list)
    """Every criterion this pass evaluates: the instance's rubric plus the standard criteria
    (``graders/standard.py``); criteria that reason about the others (claims) read it."""
    _diff: list[RowChange] | None = field(default=None, repr=False)
    _expected: list[RowChange] | None = field(default=None, repr=False)
    _calls: list[ToolCallEvent] | None = field(default=None, repr=False)

    @property
    def calls(self) -> list[ToolCallEvent]:
        """The episode's tool calls in order."""
        if self._calls is None:
            self._calls = self.record.tool_calls
        return self._calls

    @property
    def diff(self) -> list[RowChange]:
        """Net row changes of the episode since the task's setup (computed once)."""
        if self._diff is None:
            self._diff = self.world.diff()
        return self._diff

    @property
    def expected_changes(self) -> list[RowChange]:
        """The oracle's net row changes for this instance (loaded by the grader before criteria run)."""
        if self._expected is None:
            raise GradingError("the expected change set was not loaded; grade through graders.grading")
        return self._expected

    async def load_expected(self) -> None:
        """Compute (or fetch from cache) the oracle's expected change set for this instance."""
        if self._expected is None:
            scale = getattr(self.world, "scale", 1)
            self._expected = await expected_changes(self.environment, self.instance.template_id, self.instance.seed, scale=scale)
