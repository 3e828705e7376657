"""Task setups built once and replayed: each (template, seed)'s setup as the row changes it made, for callers that
make many episodes of the same instances (``toolgym check`` plays a hundred trajectories on each).

A task's setup runs its template's build function: candidate queries, planted rows, a persona. Running it again
for every attack, variant and replay of an instance gives the same rows every time (design decision 7), so the
first episode of an instance keeps what its setup did — the change log's entries, the id sequences' state and
the instance — and every later one replays those entries on a fresh (pooled) world: O(rows planted), where
copying a whole post-setup world costs more than most setups (a finance world is 8.5 MB). The replay goes
through the same change tracking, so the clone's change log, hash, diff and next ids are those of a fresh
instantiation, and grades cannot tell the difference. Better still, a world an episode is done with is kept for
the next episode of the same instance: what the episode did is undone (O(its changes)), the setup stays.

An instance is replayed from its second episode on — in ``toolgym check`` (``confirm``) only after a second build
agreed with the first, as the check's own determinism test must run the setup twice for real — and only when the
replay is exact: its setup wrote nothing the log does not see
(:meth:`World.unlogged_writes`: only tracked tables, and search indexes through their own triggers) and no REAL
value (the log keeps 15 digits).
Otherwise every episode of it runs the setup again.

Outside ``toolgym check`` one cache serves every episode manager of an environment in the process
(:meth:`SetupCache.shared`): an RL loop that opens each episode on a manager of its own (``clients.rl.open_episode``)
replays an instance it played before as a server does. An entry remembers the template object that built it, so a
template replaced in its environment is built again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from fixtures.changes import LoggedChange
from fixtures.hashing import primary_key

if TYPE_CHECKING:
    from fixtures.pages import PageImage
    from fixtures.world import World
    from graders.tasks import TaskInstance
    from servers.environment import Environment
    from servers.record import ToolCallEvent

__all__ = ["SetupCache", "call_key", "CallKey"]

_SHARED_LOCK = threading.Lock()
_SHARED_ATTRIBUTE = "_toolgym_shared_setups"
"""Where an environment holds its process-wide cache: on the object itself, so the two go together (a weak-keyed
map would keep every environment alive, as its cache refers back to it)."""

KEPT_SHARING = 64
"""Worlds kept between episodes when they share their template's pages (~1 MB each in finance: connection, parsed
schema, written pages): enough for an RL loop's round over dozens of instances to find each one's world again."""
IMAGE_BYTES = 64 << 20
"""Bound on the setups' page images a cache holds (a finance setup's is ~120 KiB: some 500 instances)."""
KEPT_COPIES = 8
"""Worlds kept between episodes when each is a whole copy of its template (finance: 8.5 MB each)."""

CallKey = tuple[Any, ...]
"""A tool call as :func:`call_key` names it: equal keys are the same call, to the type of every value."""


def _canon(value: Any) -> Any:
    # Typed all the way down: 1, 1.0 and True validate differently, so they must never name the same call
    if value is None or isinstance(value, bool | str):
        return (type(value).__name__, value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", repr(value))  # NaN equals NaN here, as it behaves the same in every call
    if isinstance(value, dict):
        return ("dict", tuple((_canon(k), _canon(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(_canon(v) for v in value))
    return (type(value).__qualname__, repr(value))


def call_key(tool: str, arguments: dict[str, Any]) -> CallKey:
    """The identity of a tool call for :meth:`SetupCache.fork`: the tool and its arguments, key order and types kept."""
    return (tool, _canon(arguments))


@dataclass(frozen=True)
class _Step:
    """One call a kept world's episode played: what it was, what it recorded, and where the world stood after it."""

    key: CallKey
    event: ToolCallEvent
    mark: int
    """The change log's position after the call."""
    floors: dict[str, int]
    """The world's id floors after the call (``fixtures/ids.py``: a table's first mint sets its floor)."""


@dataclass
class _Kept:
    """A world an episode of an instance is done with, as that episode left it (undone only when reused)."""

    world: World
    start_hash: str | None = None
    steps: tuple[_Step, ...] = ()


@dataclass(frozen=True)
class _Setup:
    changes: tuple[LoggedChange, ...] | None
    """The setup's logged row changes in order; None when a replay would not be exact (run the setup again)."""
    instance: TaskInstance
    id_salt: str | None
    template: Any = None
    """The template object that built it (a template replaced in the environment is built again)."""
    id_floors: dict[str, int] = field(default_factory=dict)
    confirmed: bool = False
    """It may be replayed: a second build gave the same instance and changes, or the cache does not ``confirm``
    (with it, a nondeterministic template must still be caught by the check's "instantiate twice" test)."""
    hashes: list[str] = field(default_factory=list)
    """The hash of the replayed setup's world, once the first replay computed it (every replay ends there)."""
    image: list[PageImage] = field(default_factory=list)
    """The pages the setup wrote (``fixtures/pages.py``), taken from the build that confirmed it (else from the first
    replay), laid on every later fresh world instead of the rows."""


class SetupCache:
    """The setups of the last ``limit`` task instances of one environment (least recently used first out), and a
    few of their worlds kept between episodes (:meth:`take_back`)."""

    def __init__(self, environment: Environment, limit: int = 256, idle: int | None = None, *, confirm: bool = False) -> None:
        """``idle`` bounds the worlds kept between episodes (each holds a world's memory); default
        :data:`KEPT_SHARING` when worlds share their template's pages, else :data:`KEPT_COPIES`. ``confirm``: replay an
        instance only once a second build agreed with the first (``toolgym check``, whose determinism test must
        see two real builds); otherwise from its second episode on (servers, runs, RL: the first build is the
        instance, and every later episode gets exactly its world)."""
        self.environment = environment
        self.limit = limit
        self.confirm = confirm
        self._idle_bound = idle
        self._setups: OrderedDict[tuple[str, int], _Setup] = OrderedDict()
        self._idle: OrderedDict[tuple[str, int], list[_Kept]] = OrderedDict()
        self._idle_count = 0
        self._keys: dict[str, list[str]] = {}
        self._image_bytes = 0
        """Bytes of page images held (under :data:`IMAGE_BYTES`)."""
        self.laid = 0
        """Episodes whose setup was laid as pages (:meth:`World.lay`) rather than replayed row by row."""
        self.replayed = 0
        self.built = 0
        self.reused = 0
        self.forked = 0
        """Episodes that started from a kept world's played calls (:meth:`fork`)."""
        self._lock = threading.Lock()
        """Creates may build in worker threads (``EpisodeManager.create_async``) while the loop releases episodes."""

    @property
    def idle(self) -> int:
        """How many worlds are kept between episodes, at most (decided at the first one kept, when the template is
        loaded anyway: a copy-on-write world costs its connection and written pages, a whole copy its template)."""
        if self._idle_bound is None:
            fixture = self.environment.fixture
            sharing = fixture.shares_pages(self.environment.task_fixture_seed) if hasattr(fixture, "shares_pages") else False
            bound = KEPT_SHARING if sharing else KEPT_COPIES
            # never more whole copies idle than the fixture itself pools: a fixture of big worlds (sized by its pool) keeps few
            self._idle_bound = bound if sharing else min(bound, getattr(fixture, "pool_size", bound))
        return self._idle_bound

    @classmethod
    def shared(cls, environment: Environment) -> SetupCache:
        """The process-wide cache of ``environment``, for every episode manager that is not given one of its own.

        Why: a manager per episode (``clients.rl.open_episode``, a test, a short script) would otherwise build every
        instance anew; an instance's setup is a function of the template and the seed, wherever it is played.
        """
        with _SHARED_LOCK:
            cache = getattr(environment, _SHARED_ATTRIBUTE, None)
            if not isinstance(cache, SetupCache):
                cache = cls(environment)
                setattr(environment, _SHARED_ATTRIBUTE, cache)
            return cache

    def instantiate(self, template_id: str, seed: int) -> tuple[World, TaskInstance]:
        """A world with the task's setup applied, and the instance: built the first time, replayed afterwards.

        Raises:
            TaskError: as :meth:`Environment.instantiate_task`.
        """
        with self._lock:
            return self._instantiate(template_id, seed)

    def _instantiate(self, template_id: str, seed: int) -> tuple[World, TaskInstance]:
        key = (template_id, seed)
        setup = self._setups.get(key)
        if setup is not None and setup.template is not self.environment.task_template(template_id):
            self._forget(template_id)  # the template was replaced: its instances are built again
            setup = None
        if setup is not None and setup.changes is not None and setup.confirmed:
            self._setups.move_to_end(key)
            kept = self._idle.get(key)
            while kept:
                self._idle_count -= 1
                world = kept.pop().world
                if not world.rewind_to_start():  # what the last episode did is undone now, the setup kept
                    world.release()
                    continue
                world.id_floors = dict(setup.id_floors)  # the ids the last episode minted are not this one's
                if setup.hashes:
                    world.assume_hash(setup.hashes[0])
                self.reused += 1
                if not kept:
                    del self._idle[key]
                return world, setup.instance
            if kept is not None and not kept:
                del self._idle[key]
            self.replayed += 1
            return self._replay(setup), setup.instance
        return self._build(template_id, seed)

    def ready(self, template_id: str, seed: int) -> bool:
        """Whether the next episode of this instance is cheap to make: a kept world to undo, or its setup's pages to
        lay (no build, no row replay). Why: a server makes such an episode on its event loop instead of paying a
        worker thread's hand-over, which costs more than the work."""
        setup = self._setups.get((template_id, seed))
        return setup is not None and setup.changes is not None and setup.confirmed and (bool(setup.image) or bool(self._idle.get((template_id, seed))))

    def fork(
        self, template_id: str, seed: int, keys: Sequence[CallKey]
    ) -> tuple[World, TaskInstance, list[tuple[ToolCallEvent, dict[str, int]]], str] | None:
        """A kept world of this instance that already played the longest prefix of the calls ``keys`` name, undone
        back to the end of that prefix; with the instance, the prefix's recorded events (each with the id floors
        after it) and the episode's start hash. None when no kept world shares a first call (then :meth:`instantiate`).

        Why: ``toolgym check`` plays a hundred trajectories per instance, and most share their first calls with
        one played just before (the oracle's work, then another answer); each call's event and effects are a
        function of the world before it and the call, so the prefix need not run again — undoing what came
        after it is O(those changes). The episode continues from there exactly as a fresh one would.
        """
        with self._lock:
            key = (template_id, seed)
            setup = self._setups.get(key)
            kept = self._idle.get(key)
            if setup is None or not kept:
                return None
            best, length = None, 0
            for candidate in kept:
                n = 0
                for step, wanted in zip(candidate.steps, keys, strict=False):
                    if step.key != wanted:
                        break
                    n += 1
                if n > length and candidate.start_hash is not None:
                    best, length = candidate, n
            if best is None:
                return None
            kept.remove(best)
            self._idle_count -= 1
            if not kept:
                del self._idle[key]
            step = best.steps[length - 1]
            if not best.world.rewind_to(step.mark):
                best.world.release()
                return None
            best.world.id_floors = dict(step.floors)
            self.forked += 1
            assert best.start_hash is not None
            return best.world, setup.instance, [(s.event, s.floors) for s in best.steps[:length]], best.start_hash

    def take_back(
        self,
        template_id: str,
        seed: int,
        world: World,
        *,
        start_hash: str | None = None,
        played: Sequence[tuple[CallKey, ToolCallEvent, dict[str, int]]] = (),
    ) -> bool:
        """Keep ``world`` (an episode of this instance is done with it) for a later episode of the same instance,
        as the episode left it: the next one undoes what it needs to (:meth:`instantiate`, :meth:`fork`). False
        when it cannot be kept (then release it as usual).

        ``played``: the episode's calls in order, each with its event and the id floors after it, and
        ``start_hash`` its start hash, so that :meth:`fork` can continue after any prefix of them.
        The episode's World object is finished (:meth:`World.handover`): it can no longer reach the database.
        """
        with self._lock:
            return self._take_back(template_id, seed, world, start_hash, played)

    def _take_back(self, template_id: str, seed: int, world: World, start_hash: str | None,
                   played: Sequence[tuple[CallKey, ToolCallEvent, dict[str, int]]]) -> bool:
        key = (template_id, seed)
        setup = self._setups.get(key)
        if self.idle <= 0 or setup is None or setup.changes is None or world.closed or world.conn.in_transaction:
            return False
        steps: list[_Step] = []
        mark = world.start_mark
        for call, event, floors in played:
            if event.changes:
                mark = max(mark, event.changes[-1].seq)
            steps.append(_Step(key=call, event=event, mark=mark, floors=floors))
        self._idle.setdefault(key, []).append(_Kept(world.handover(), start_hash, tuple(steps)))
        self._idle.move_to_end(key)
        self._idle_count += 1
        while self._idle_count > self.idle:
            oldest, kept = next(iter(self._idle.items()))
            if kept:
                kept.pop(0).world.release()
                self._idle_count -= 1
            if not kept:
                del self._idle[oldest]
        return True

    def _build(self, template_id: str, seed: int) -> tuple[World, TaskInstance]:
        env = self.environment
        template = env.task_template(template_id)
        world = env.fixture.world(env.task_fixture_seed)
        try:
            instance = template.instantiate(world, seed)
            changes = world.changes_since(0)
        except BaseException:
            world.release()
            raise
        self.built += 1
        key = (template_id, seed)
        first = self._setups.get(key)
        # A write the log does not see (a table it does not track, a search index written directly, the schema)
        # makes a replay inexact; a search index's own upkeep does not (its triggers replay it from the rows).
        exact = not world.unlogged_writes() and not any(
            isinstance(v, float) for c in changes for row in (c.before, c.after) if row for v in row.values())
        setup = _Setup(changes=tuple(changes) if exact else None, instance=instance, id_salt=world.id_salt,
                       template=template, id_floors=dict(world.id_floors))
        if first is not None:  # the second build: replay from now on only if it agrees with the first
            same = (first.changes == setup.changes and first.id_floors == setup.id_floors
                    and first.instance.model_dump_json() == instance.model_dump_json())
            setup = replace(setup, confirmed=True) if same else replace(setup, changes=None)
        elif not self.confirm:
            setup = replace(setup, confirmed=True)
        if first is not None:
            self._drop_image(first)
        if setup.confirmed and setup.changes is not None and self._image_bytes < IMAGE_BYTES:
            # The pages this build wrote are the setup's: the instance's next world (the grader's replay of the
            # oracle, a GRPO group's second member) lays them instead of replaying each planted row.
            image = world.page_image()
            if image is not None:
                setup.image.append(image)
                self._image_bytes += image.bytes
        self._setups[key] = setup
        while len(self._setups) > self.limit:
            self._drop_image(self._setups.popitem(last=False)[1])
        return world, instance

    def _drop_image(self, setup: _Setup) -> None:
        self._image_bytes -= sum(image.bytes for image in setup.image)

    def _replay(self, setup: _Setup) -> World:
        env = self.environment
        world = env.fixture.world(env.task_fixture_seed)
        try:
            if setup.image and world.lay(setup.image[0]):
                world.assume_log(setup.changes or ())  # the log the pages hold, already parsed
                self.laid += 1
            else:
                for change in setup.changes or ():
                    self._apply(world, change)
                # the pages of this replay, laid on later fresh worlds: taken once per instance (O(pages written)),
                # and only when the replay logged exactly the setup's changes (what assume_log will then vouch for)
                if not setup.image and self._image_bytes < IMAGE_BYTES and world.changes_since(0) == list(setup.changes or ()):
                    image = world.page_image()
                    if image is not None:
                        setup.image.append(image)
                        self._image_bytes += image.bytes
        except BaseException:
            world.release()
            raise
        world.id_salt = setup.id_salt
        world.id_floors = dict(setup.id_floors)
        if setup.hashes:
            world.assume_hash(setup.hashes[0])
        else:
            setup.hashes.append(world.hash())  # O(rows planted), once per instance
        return world

    def _apply(self, world: World, change: LoggedChange) -> None:
        table = change.table
        if table not in self._keys:
            self._keys[table] = primary_key(world.conn, table)
        keys = self._keys[table]
        where = " AND ".join(f'"{c}" IS ?' for c in keys)
        if change.op == "insert":
            row = change.after or {}
            columns = ", ".join(f'"{c}"' for c in row)
            world.execute(f'INSERT INTO "{table}" ({columns}) VALUES ({", ".join("?" for _ in row)})', tuple(row.values()))
        elif change.op == "update":
            row, old = change.after or {}, change.before or {}
            sets = ", ".join(f'"{c}" = ?' for c in row)
            world.execute(f'UPDATE "{table}" SET {sets} WHERE {where}', (*row.values(), *(old[c] for c in keys)))
        else:
            old = change.before or {}
            world.execute(f'DELETE FROM "{table}" WHERE {where}', tuple(old[c] for c in keys))

    def forget(self, template_id: str) -> None:
        """Forget the setups of ``template_id`` and release the worlds kept for it (its episodes are over)."""
        with self._lock:
            self._forget(template_id)

    def _forget(self, template_id: str) -> None:
        for key in [k for k in self._setups if k[0] == template_id]:
            self._drop_image(self._setups.pop(key))
        for key in [k for k in self._idle if k[0] == template_id]:
            for entry in self._idle.pop(key):
                entry.world.release()
                self._idle_count -= 1

    def clear(self) -> None:
        """Forget every kept setup and release every kept world."""
        with self._lock:
            self._clear()

    def _clear(self) -> None:
        self._setups.clear()
        self._image_bytes = 0
        for kept in self._idle.values():
            for entry in kept:
                entry.world.release()
        self._idle.clear()
        self._idle_count = 0
