"""Episodes and the manager that owns them: create, look up, close, cap, reap.

An episode is addressed by its id, never by an MCP protocol session (the 2026-07-28 protocol has none).
States: ``live`` (tools may be called) → ``closed`` (no more calls; the world is kept for grading) →
released (world freed, record kept in a bounded history). Idle live episodes are closed by the reaper and
closed ones released after a grace period, so a client that vanishes leaks nothing.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio

from fixtures.errors import EpisodeLimitReached, EpisodeNotFound
from fixtures.world import World
from servers.environment import Environment
from servers.record import ClosedEvent, EpisodeHeader, MessageEvent, Record, RecordWriter, ToolCallEvent

if TYPE_CHECKING:
    from graders.tasks import TaskInstance

__all__ = ["Episode", "EpisodeManager", "EpisodeInfo"]

State = Literal["live", "closed"]


@dataclass
class Episode:
    """One attempt: a world, the task it serves (or free play), and its record."""

    id: str
    environment: Environment
    world: World
    task: TaskInstance | None
    record: Record
    writer: RecordWriter | None = None
    state: State = "live"
    created: float = field(default_factory=time.monotonic)
    last_used: float = field(default_factory=time.monotonic)
    closed_at: float | None = None
    released: bool = False
    capped: bool = True
    """Counts against the manager's ``max_live`` (False: its creator enforces a cap of its own)."""
    _tool_calls: int = field(default=0, repr=False)
    lock: anyio.Lock = field(default_factory=anyio.Lock, repr=False)
    """Serialises tool calls of this episode, so concurrent calls never interleave inside one savepoint."""

    @property
    def seq(self) -> int:
        """Number of tool calls recorded so far."""
        return self._tool_calls

    def append(self, event: ToolCallEvent | MessageEvent) -> None:
        """Add an event to the record (and the JSONL file when one is open)."""
        if isinstance(event, ToolCallEvent):
            self._tool_calls += 1
        self.record.events.append(event)
        if self.writer is not None:
            self.writer.write(event)

    def elapsed_ms(self) -> float:
        """Milliseconds since creation."""
        return (time.monotonic() - self.created) * 1000


class EpisodeInfo(dict[str, Any]):
    """A JSON-ready summary of an episode for the control API."""


class EpisodeManager:
    """Owns the live episodes of one environment within a process.

    Args:
        environment: the environment every episode of this manager runs.
        max_live: cap on episodes holding a world (live or closed-but-not-released), not counting those
            created with ``capped=False`` (the HTTP server's ``/mcp`` sessions, which have a cap of their own).
        idle_timeout: seconds without a tool call after which a live episode is closed by :meth:`reap`.
        closed_ttl: seconds a closed episode keeps its world (for grading) before :meth:`reap` releases it.
        history: how many released episodes' records stay readable.
    """

    def __init__(
        self,
        environment: Environment,
        *,
        max_live: int = 1024,
        idle_timeout: float = 1800.0,
        closed_ttl: float = 600.0,
        history: int = 4096,
        record_dir: Path | None = None,
    ) -> None:
        self.environment = environment
        self.max_live = max_live
        self.idle_timeout = idle_timeout
        self.closed_ttl = closed_ttl
        self.history = history
        self.record_dir = record_dir
        self._episodes: dict[str, Episode] = {}
        self._released: OrderedDict[str, Record] = OrderedDict()
        self.on_release: list[Callable[[Episode], None]] = []

    def __len__(self) -> int:
        return len(self._episodes)

    def create(
        self,
        task: str | None = None,
        seed: int = 0,
        *,
        record_path: Path | None = None,
        episode_id: str | None = None,
        capped: bool = True,
    ) -> Episode:
        """Create an episode: clone the world, apply the task's setup, open its record.

        Args:
            capped: count the episode against ``max_live``. False is for a caller that bounds its episodes
                itself, so that they never use up the room of the others (``/mcp`` sessions vs. evaluation
                episodes created through the control API).

        Raises:
            EpisodeLimitReached: ``max_live`` capped episodes already hold a world (after reaping the stale ones).
            TaskError: ``task`` names no template of the environment.
        """
        if capped and self._capped_count() >= self.max_live:
            self.reap()
            if self._capped_count() >= self.max_live:
                raise EpisodeLimitReached(
                    f"{self.max_live} episodes are open in environment {self.environment.name!r}; "
                    "close some (control API: DELETE /control/episodes/ID) or raise max_live"
                )
        env = self.environment
        if task is None:
            world = env.new_world(seed)
            instance = None
            fixture_seed = seed
        else:
            world, instance = env.instantiate_task(task, seed)
            fixture_seed = env.task_fixture_seed
        world.mark_start()
        ident = episode_id or f"ep-{secrets.token_hex(6)}"
        header = EpisodeHeader(
            episode_id=ident,
            env=env.name,
            fixture_version=env.fixture.version,
            task=task,
            seed=seed,
            fixture_seed=fixture_seed,
            start_hash=world.hash(),
            prompt=instance.prompt if instance is not None else None,
            clock=world.clock.now.isoformat(),
        )
        path = record_path or (self.record_dir / f"{ident}.jsonl" if self.record_dir else None)
        writer = RecordWriter(path) if path is not None else None
        if writer is not None:
            writer.write(header)
        record = Record(header=header)
        episode = Episode(id=ident, environment=env, world=world, task=instance, record=record, writer=writer, capped=capped)
        self._episodes[ident] = episode
        return episode

    def _capped_count(self) -> int:
        return sum(1 for episode in self._episodes.values() if episode.capped)

    def get(self, episode_id: str, *, live: bool = False) -> Episode:
        """The episode with ``episode_id`` (holding a world).

        Raises:
            EpisodeNotFound: unknown, released, or (with ``live=True``) already closed.
        """
        episode = self._episodes.get(episode_id)
        if episode is None:
            hint = " (it was released; its record is still readable)" if episode_id in self._released else ""
            raise EpisodeNotFound(f"no episode {episode_id!r} in environment {self.environment.name!r}{hint}")
        if live and episode.state != "live":
            raise EpisodeNotFound(f"episode {episode_id!r} is closed; create a new episode to keep playing")
        return episode

    def record(self, episode_id: str) -> Record:
        """The record of a live, closed or recently released episode."""
        if episode_id in self._episodes:
            return self._episodes[episode_id].record
        if episode_id in self._released:
            return self._released[episode_id]
        raise EpisodeNotFound(f"no episode {episode_id!r} in environment {self.environment.name!r}")

    def list(self) -> list[Episode]:
        """Episodes holding a world, oldest first."""
        return list(self._episodes.values())

    def close(self, episode_id: str, *, reason: str = "closed") -> Episode:
        """Stop accepting tool calls, write the record's footer; the world stays for grading. Idempotent."""
        episode = self.get(episode_id)
        if episode.state == "live":
            episode.state = "closed"
            episode.closed_at = time.monotonic()
            footer = ClosedEvent(end_hash=episode.world.hash(), tool_calls=episode.seq, reason=reason)
            episode.record.events.append(footer)
            if episode.writer is not None:
                episode.writer.write(footer)
                episode.writer.close()
        return episode

    def release(self, episode_id: str) -> None:
        """Close if needed, free the world, keep the record in the bounded history. Idempotent."""
        episode = self._episodes.get(episode_id)
        if episode is None:
            return
        self.close(episode_id)
        del self._episodes[episode_id]
        episode.world.release()
        episode.released = True
        self._released[episode_id] = episode.record
        while len(self._released) > self.history:
            self._released.popitem(last=False)
        for hook in self.on_release:
            hook(episode)

    def reap(self, now: float | None = None) -> list[str]:
        """Close idle live episodes and release closed ones past their TTL; returns the ids released."""
        now = time.monotonic() if now is None else now
        released: list[str] = []
        for episode in list(self._episodes.values()):
            if episode.state == "live" and now - episode.last_used > self.idle_timeout:
                self.close(episode.id, reason="idle")
            if episode.state == "closed" and episode.closed_at is not None and now - episode.closed_at > self.closed_ttl:
                self.release(episode.id)
                released.append(episode.id)
        return released

    def close_all(self) -> None:
        """Release every episode (server shutdown)."""
        for ident in list(self._episodes):
            self.release(ident)

    def info(self, episode: Episode) -> EpisodeInfo:
        """Summary for listings: id, state, task, seed, calls, hashes."""
        return EpisodeInfo(
            id=episode.id,
            env=episode.environment.name,
            state=episode.state,
            task=episode.record.header.task,
            seed=episode.record.header.seed,
            tool_calls=episode.seq,
            start_hash=episode.record.header.start_hash,
            prompt=episode.record.header.prompt,
        )
