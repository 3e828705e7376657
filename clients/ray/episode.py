"""An episode on an environment actor, for trainers: prompt, tools, step, finish → reward and grade.

The same surface as :mod:`clients.rl`'s ``RLEpisode`` (:class:`~clients.rl.Observation`,
:class:`~clients.rl.Finished`), each step one plain call to the actor holding the world; the actor plays it
through its in-memory MCP client, so a policy sees what any MCP agent sees. Made by
:meth:`clients.ray.EnvPool.open_episode` or :meth:`~clients.ray.EnvPool.episode`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from clients.errors import InfrastructureError
from clients.rl import Finished, Observation
from servers.record import MessageEvent, Record

if TYPE_CHECKING:
    from clients.ray.pool import EnvPool, _Slot

__all__ = ["RemoteEpisode", "EpisodeLost"]


class EpisodeLost(InfrastructureError):
    """The environment actor holding an episode died (killed, node lost): the episode is gone.

    Not the policy's doing: drop the rollout (or start the same task and seed again) and go on; the pool
    already sends new episodes elsewhere.
    """

    def __init__(self, message: str) -> None:
        super().__init__("connection", message)


class RemoteEpisode:
    """A live episode on one environment actor."""

    def __init__(self, pool: EnvPool, slot: _Slot, info: dict[str, Any]) -> None:
        self._pool = pool
        self._slot = slot
        self.id: str = info["id"]
        """The episode id (on its actor)."""
        self.prompt: str = info["prompt"]
        """What the agent is asked (empty in free play)."""
        self.mcp_url: str | None = info["mcp_url"]
        """The episode's MCP endpoint on the actor's node, when opened with ``mcp=True``."""
        self.tools: list[dict[str, Any]] = pool.tools
        """The tools as OpenAI function schemas (``tools=`` of a chat-completions request)."""
        self.instructions: str | None = pool.instructions
        self.steps = 0
        """Tool calls that reached the episode."""
        self.record: Record | None = None
        """The whole record, after ``finish(record=True)``."""
        self._messages: list[tuple[int, MessageEvent]] = []
        self._finished: Finished | None = None
        self._done = False

    @property
    def actor(self) -> Any:
        """The handle of the environment actor holding the episode's world."""
        return self._slot.handle

    def log_message(self, role: str, content: Any = None, **fields: Any) -> None:
        """Keep a conversation message for the record (``tool_calls``, ``tool_call_id``, ``usage``); sent at finish."""
        self._messages.append((self.steps, MessageEvent(role=role, content=content, **fields)))

    async def step(self, name: str, arguments: dict[str, Any] | str | None = None) -> Observation:
        """Call one tool; arguments may be a model's raw text (not a JSON object → an error observation).

        Raises:
            RuntimeError: the episode is finished or released.
            EpisodeLost: its actor died.
        """
        if self._done:
            raise RuntimeError(f"episode {self.id} is finished; open a new one")
        text, is_error, structured, self.steps = await self._pool.call(
            self._slot, "call_tool", self.id, name, arguments
        )
        return Observation(text, is_error, structured)

    async def finish(self, *, record: bool = False) -> Finished:
        """Close, grade and release the episode (idempotent): the reward and the grade behind it.

        Args:
            record: also fetch the record, messages merged (``self.record``).

        Raises:
            TaskError: a free-play episode has no rubric to grade by.
            EpisodeLost: its actor died.
        """
        if self._finished is not None:
            return self._finished
        if self._done:
            raise RuntimeError(f"episode {self.id} was released without a grade")
        from graders.grade import Grade

        try:
            result = await self._pool.call(self._slot, "finish", self.id, self._messages, record)
        finally:
            self._give_back()  # the actor releases the episode whatever happened
        grade = Grade.model_validate(result["grade"])
        if result["record"] is not None:
            self.record = _record(result["record"])
        self._finished = Finished(reward=float(grade.score), passed=bool(grade.passed), grade=grade)
        return self._finished

    async def release(self) -> None:
        """Free the episode without grading it (an abandoned rollout); idempotent, never raises for a lost actor."""
        if self._done:
            return
        try:
            await self._pool.call(self._slot, "release", self.id)
        except EpisodeLost:
            pass
        finally:
            self._give_back()

    def _give_back(self) -> None:
        if not self._done:
            self._done = True
            self._pool.release(self._slot)


def _record(text: str) -> Record:
    header, *events = text.splitlines()
    return Record.model_validate({"header": json.loads(header), "events": [json.loads(line) for line in events]})
