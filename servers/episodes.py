"""Episodes and the manager that owns them: create, look up, close, cap, reap.

An episode is addressed by its id, never by an MCP protocol session (the 2026-07-28 protocol has none).
States: ``live`` (tools may be called) → ``closed`` (no more calls; the world is kept for grading) →
released (world freed, record kept in a bounded history). Idle live episodes are closed by the reaper and
closed ones released after a grace period, so a client that vanishes leaks nothing.

Creating an episode (clone, task setup, start hash) costs 1-20 ms of CPU; a server creates them with
:meth:`EpisodeManager.create_async`, in a worker thread (at most ``CREATE_THREADS`` at once), so a burst
of creates never stalls the calls of the episodes already running on the event loop.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.lowlevel
import anyio.to_thread

from fixtures import outputs
from fixtures.errors import EpisodeLimitReached, EpisodeNotFound, RecordError, RecordUnwritable
from fixtures.world import World
from servers import malloc
from servers.admission import MemoryBudget
from servers.environment import Environment
from servers.record import ClosedEvent, EpisodeHeader, MessageEvent, Record, RecordWriter, ToolCallEvent
from servers.setups import CallKey, SetupCache, call_key

if TYPE_CHECKING:
    from graders.tasks import TaskInstance

__all__ = ["Episode", "EpisodeManager", "EpisodeInfo", "CREATE_THREADS", "HISTORY_BYTES"]

log = logging.getLogger("toolgym.episodes")

State = Literal["live", "closed"]

HISTORY_BYTES = 16 * 2**20
"""Default bound on the compressed records of released episodes kept readable (a few thousand episodes)."""

CREATE_THREADS = 1
"""Worker threads creating worlds at once: more would only take the GIL from the event loop's calls."""

_create_limiter: anyio.CapacityLimiter | None = None


def _limiter() -> anyio.CapacityLimiter:
    global _create_limiter
    if _create_limiter is None:
        _create_limiter = anyio.CapacityLimiter(CREATE_THREADS)
    return _create_limiter


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
    lock: anyio.Lock = field(default_factory=lambda: anyio.Lock(fast_acquire=True), repr=False)
    """Serialises tool calls of this episode, so concurrent calls never interleave inside one savepoint. An
    uncontended acquire does not yield to the event loop (``fast_acquire``): a call's transport already does, and
    an in-process caller (``toolgym check``, the RL API) would otherwise pay a loop turn per call."""
    call_keys: list[CallKey] | None = field(default=None, repr=False)
    """The calls this episode was created to play (:meth:`EpisodeManager.create` ``prefix``), as
    ``servers.setups.call_key`` names them: with them, its world can serve later episodes that share a prefix."""
    _floors: list[dict[str, int]] = field(default_factory=list, repr=False)
    """The world's id floors after each tool call (kept only with ``call_keys``)."""
    _impure: int | None = field(default=None, repr=False)
    """The seq of the first call whose answer was not a function of the world and the call (``ToolContext.personal``)."""

    def impure_call(self, seq: int) -> None:
        """Note that call ``seq`` answered from something besides the world and the call: no later episode may take it
        over (:meth:`played` stops before it)."""
        if self._impure is None or seq < self._impure:
            self._impure = seq

    @property
    def seq(self) -> int:
        """Number of tool calls recorded so far."""
        return self._tool_calls

    def append(self, event: ToolCallEvent | MessageEvent) -> None:
        """Add an event to the record: the JSONL file first (when one is open), then memory.

        Raises:
            RecordUnwritable: the file refused the line (now or earlier); the event is not kept anywhere,
                so the in-memory record never holds what the file lacks.
        """
        if self.writer is not None:
            self.writer.write(event)
        if isinstance(event, ToolCallEvent):
            self._tool_calls += 1
            if self.call_keys is not None:
                self._floors.append(dict(self.world.id_floors))
        self.record.events.append(event)

    def played(self) -> list[tuple[CallKey, ToolCallEvent, dict[str, int]]]:
        """Each tool call this episode played as (its key, its event, the id floors after it), when its calls were
        named up front and its record holds exactly those calls and nothing else; else nothing."""
        keys = self.call_keys
        events = [e for e in self.record.events if not isinstance(e, ClosedEvent)]
        if keys is None or len(events) != len(keys) or len(self._floors) != len(keys):
            return []
        if not all(isinstance(e, ToolCallEvent) for e in events):
            return []
        played = list(zip(keys, events, self._floors, strict=True))
        return played[: self._impure - 1] if self._impure is not None else played  # type: ignore[return-value]

    @property
    def record_failure(self) -> str | None:
        """Why the record file stopped being written (None while it is whole, or when there is none)."""
        return self.writer.failure if self.writer is not None else None

    def ensure_recordable(self) -> None:
        """Refuse a call up front when the record can no longer be written.

        Raises:
            RecordUnwritable: an earlier line could not be written; the episode takes no more calls.
        """
        failure = self.record_failure
        if failure is not None:
            raise RecordUnwritable(
                f"episode {self.id!r} takes no more calls: its record could not be written ({failure}); its world "
                "holds exactly what its record does. Free space, then start a new episode"
            )

    def elapsed_ms(self) -> float:
        """Milliseconds since creation."""
        return (time.monotonic() - self.created) * 1000

    @property
    def changes(self) -> int:
        """Row changes logged since the episode started (what grading reads; O(1))."""
        if self.world.closed:
            return 0
        return max(0, self.world.change_mark() - self.world._start_mark)  # noqa: SLF001


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
        history_bytes: bound on the memory those records take (compressed); the oldest go first.
        sync_records: fsync each record file when its episode closes (a server's records are the only copy;
            a runner's are rebuilt by ``--resume`` from its results, so it skips the wait).
        memory: a memory budget; a create that would not fit raises ``MemoryLimitReached`` (capped or not).
        setups: the task setups to build from and keep worlds in (``toolgym check`` gives its own, which must
            see two agreeing builds); default: the environment's process-wide cache (``SetupCache.shared``),
            or none with ``reuse_setups=False``.
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
        history_bytes: int = HISTORY_BYTES,
        sync_records: bool = True,
        memory: MemoryBudget | None = None,
        reuse_setups: bool = True,
        setups: SetupCache | None = None,
    ) -> None:
        self.environment = environment
        self.setups = setups if setups is not None else SetupCache.shared(environment) if reuse_setups else None
        """Where each task instance's setup is built (once; in ``toolgym check`` twice, to prove it deterministic), then
        replayed from its logged rows, and a finished episode's world kept as it was left, for a later episode of the
        same instance (``servers/setups.py``): GRPO groups, trials and the check play one instance many times. None
        (``reuse_setups=False``): built per episode."""
        self.memory = memory
        """The memory budget every create is checked against (``servers/admission.py``); None: no memory cap."""
        self._building = 0
        """Episodes of any kind being created in a worker thread (their worlds are not measured yet)."""
        self.max_live = max_live
        self.idle_timeout = idle_timeout
        self.closed_ttl = closed_ttl
        self.history = history
        self.history_bytes = history_bytes
        self.sync_records = sync_records
        self.record_dir = record_dir
        if record_dir is not None:
            _mark_records(record_dir)
        self._episodes: dict[str, Episode] = {}
        self._released: OrderedDict[str, bytes] = OrderedDict()
        """Records of released episodes, as compressed JSONL (a tenth of the objects' memory)."""
        self._released_bytes = 0
        """Bytes held by ``_released`` (kept under ``history_bytes``)."""
        self._capped_live = 0
        """Capped episodes holding a world (kept as a count so health never walks the episodes)."""
        self._pending = 0
        """Capped episodes being created in a worker thread (they count against ``max_live`` already)."""
        self.abandoned = 0
        """Creates given up before their episode existed (the client left): nothing of them was kept."""
        self.released_count = 0
        """Episodes released so far (the HTTP reaper trims the allocator when this moves)."""
        self.on_release: list[Callable[[Episode], None]] = []
        self.on_close: list[Callable[[Episode], None]] = []
        """Called once when an episode stops being live (closed by a client, a grade, the reaper or a release)."""
        malloc.configure()

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
        prefix: Sequence[tuple[str, dict[str, Any]]] | None = None,
    ) -> Episode:
        """Create an episode: clone the world, apply the task's setup, open its record.

        Args:
            capped: count the episode against ``max_live``. False is for a caller that bounds its episodes
                itself, so that they never use up the room of the others (``/mcp`` sessions vs. evaluation
                episodes created through the control API).
            prefix: the calls (tool, arguments) the caller will play, in order. The episode may then start
                with the longest prefix of them already played, taken from the world of an earlier episode of
                the same instance that played it (``servers/setups.py``: :meth:`SetupCache.fork`): its record
                holds those calls' events and ``episode.seq`` says how many; the caller plays the rest. The
                world, the record and every later call are as if the whole prefix had been played here.

        Raises:
            EpisodeLimitReached: ``max_live`` capped episodes already hold a world (after reaping the stale ones).
            TaskError: ``task`` names no template of the environment.
            RecordError: the record file cannot be written.
        """
        if capped:
            self._check_room()
        self._check_memory()
        keys = forked = None
        if prefix is not None and task is not None and self.setups is not None:
            keys = [call_key(tool, arguments) for tool, arguments in prefix]
            forked = self.setups.fork(task, seed, keys)
        if forked is None:
            episode = self._register(*self._build(task, seed), task, seed, record_path, episode_id, capped)
            episode.call_keys = keys
            return episode
        world, instance, steps, start_hash = forked
        episode = self._register(world, instance, self.environment.task_fixture_seed, start_hash, task, seed,
                                 record_path, episode_id, capped)
        try:
            for event, _ in steps:
                episode.append(event)
        except BaseException:
            self.release(episode.id)
            raise
        episode.call_keys = keys
        episode._floors = [dict(floors) for _, floors in steps]
        return episode

    async def create_async(
        self,
        task: str | None = None,
        seed: int = 0,
        *,
        record_path: Path | None = None,
        episode_id: str | None = None,
        capped: bool = True,
    ) -> Episode:
        """:meth:`create`, with the clone and the task setup in a worker thread (the event loop stays free), unless the
        instance's setup is ready to lay or undo (``SetupCache.ready``: well under a millisecond).

        Raises:
            EpisodeLimitReached, TaskError, RecordError: as :meth:`create`.
        """
        if capped:
            self._check_room()
        self._check_memory()
        if capped:
            self._pending += 1
        self._building += 1
        built: tuple[World, TaskInstance | None, int, str] | None = None
        try:
            env = self.environment
            if task is not None:
                env.task_template(task)  # an unknown task fails here, without a thread
            # Cancelled while it waits for the thread (its client left): nothing is made. Cancelled while the
            # world is being made: the thread finishes (it cannot be stopped midway), then the world is freed
            # here, never registered, so no episode outlives the client that asked for it.
            if task is not None and self.setups is not None and self.setups.ready(task, seed):
                built = self._build(task, seed)  # pages to lay or a kept world to undo: less than a thread's hand-over
            else:
                async with _limiter():
                    with anyio.CancelScope(shield=True):
                        built = await anyio.to_thread.run_sync(self._build, task, seed)
            await anyio.lowlevel.checkpoint_if_cancelled()
        except anyio.get_cancelled_exc_class():
            self.abandoned += 1
            if built is not None:
                built[0].release()
            raise
        finally:
            self._building -= 1
            if capped:
                self._pending -= 1
        assert built is not None
        return self._register(*built, task, seed, record_path, episode_id, capped)

    def _check_memory(self) -> None:
        """Refuse a world the memory budget cannot hold (MemoryLimitReached), before any of it is made."""
        budget = self.memory
        if budget is None:
            return
        if not budget.world_bytes:  # sized once, from the fixture every world of this manager is cloned from
            env = self.environment
            budget.cost_worlds(env.fixture.world_bytes(env.task_fixture_seed))
        budget.admit(self._building)

    def _check_room(self) -> None:
        if self._capped_count() + self._pending >= self.max_live:
            self.reap()
            if self._capped_count() + self._pending >= self.max_live:
                raise EpisodeLimitReached(
                    f"{self.max_live} episodes are open in environment {self.environment.name!r}; "
                    "close some (control API: DELETE /control/episodes/ID) or raise max_live"
                )

    def _build(self, task: str | None, seed: int) -> tuple[World, TaskInstance | None, int, str]:
        """The CPU-heavy part of a create (no manager state touched: safe in a worker thread)."""
        env = self.environment
        if task is None:
            world = env.new_world(seed)
            instance = None
            fixture_seed = seed
        else:
            world, instance = self.setups.instantiate(task, seed) if self.setups is not None else env.instantiate_task(task, seed)
            fixture_seed = env.task_fixture_seed
        try:
            world.mark_start()
            start_hash = world.hash()
        except BaseException:
            world.release()
            raise
        return world, instance, fixture_seed, start_hash

    def _register(
        self,
        world: World,
        instance: TaskInstance | None,
        fixture_seed: int,
        start_hash: str,
        task: str | None,
        seed: int,
        record_path: Path | None,
        episode_id: str | None,
        capped: bool,
    ) -> Episode:
        env = self.environment
        ident = episode_id or f"ep-{secrets.token_hex(6)}"
        header = EpisodeHeader(
            episode_id=ident,
            env=env.name,
            fixture_version=env.fixture.version,
            task=task,
            seed=seed,
            fixture_seed=fixture_seed,
            start_hash=start_hash,
            prompt=instance.prompt if instance is not None else None,
            clock=world.clock.now.isoformat(),
        )
        path = record_path or (self.record_dir / f"{ident}.jsonl" if self.record_dir else None)
        if record_path is not None:
            outputs.register(record_path, "records")  # a record anywhere: hidden from sandboxed agents
        writer: RecordWriter | None = None
        try:
            writer = RecordWriter(path, sync=self.sync_records) if path is not None else None
            if writer is not None:
                writer.write(header)
        except RecordError:
            if writer is not None:
                writer.discard()  # no file without its header: nothing half-made stays behind
            world.release()
            raise
        record = Record(header=header)
        episode = Episode(id=ident, environment=env, world=world, task=instance, record=record, writer=writer, capped=capped)
        self._episodes[ident] = episode
        if capped:
            self._capped_live += 1
        return episode

    def _capped_count(self) -> int:
        return self._capped_live

    @property
    def creating(self) -> int:
        """Creates in progress now, of any kind: waiting for the create thread or making their world."""
        return self._building

    @property
    def capped_count(self) -> int:
        """Episodes counting against ``max_live`` (holding a world, or being created)."""
        return self._capped_count() + self._pending

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
            return _unpack(self._released[episode_id])
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
                try:
                    episode.writer.write(footer)
                except RecordUnwritable as exc:
                    # Closing always succeeds: the record is whole in memory; its file stays without a footer,
                    # which every reader reports as incomplete (and finish keeps the episode for its record).
                    log.warning(
                        "episode %s closed (end hash %s after %d calls), but its record file has no footer: %s",
                        episode.id, footer.end_hash, episode.seq, exc,
                    )
                episode.writer.close()
            for hook in self.on_close:
                hook(episode)
        return episode

    def release(self, episode_id: str) -> None:
        """Close if needed, free the world, keep the record in the bounded history. Idempotent."""
        episode = self._episodes.get(episode_id)
        if episode is None:
            return
        self.close(episode_id)
        del self._episodes[episode_id]
        if episode.capped:
            self._capped_live -= 1
        task = episode.task
        if not (self.setups is not None and task is not None and self.setups.take_back(
                task.template_id, task.seed, episode.world, start_hash=episode.record.header.start_hash, played=episode.played())):
            episode.world.release()
        episode.released = True
        self.released_count += 1
        if self.history > 0:
            packed = zlib.compress(episode.record.to_jsonl().encode(), 1)
            previous = self._released.pop(episode_id, None)  # a retried episode may reuse its id
            if previous is not None:
                self._released_bytes -= len(previous)
            if len(packed) <= self.history_bytes:
                self._released[episode_id] = packed
                self._released_bytes += len(packed)
        while self._released and (len(self._released) > self.history or self._released_bytes > self.history_bytes):
            _, dropped = self._released.popitem(last=False)
            self._released_bytes -= len(dropped)
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

    def history_counts(self) -> dict[str, int]:
        """What is remembered of released episodes: records kept, their bytes and the bounds (for health)."""
        return {
            "records": len(self._released),
            "bytes": self._released_bytes,
            "max_records": self.history,
            "max_bytes": self.history_bytes,
        }

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


def _mark_records(folder: Path) -> None:
    """Mark a record folder as the kit's output (``fixtures/outputs.py``): sandboxed agents never see it.

    Best effort: a folder that cannot be made or marked is reported by the first record written into it.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
        outputs.mark(folder, "records")
    except OSError:
        pass


def _unpack(packed: bytes) -> Record:
    """A record kept compressed after its episode's release, back as a :class:`Record`."""
    header, *events = zlib.decompress(packed).decode().splitlines()
    return Record.model_validate({"header": json.loads(header), "events": [json.loads(line) for line in events]})
