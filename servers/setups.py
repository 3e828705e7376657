"""Task setups built once and replayed: each (template, seed)'s setup as the row changes it made, for callers that
make many episodes of the same instances (``toolgym check`` plays a hundred trajectories on each).

A task's setup runs its template's build function: candidate queries, planted rows, a persona. Running it again
for every attack, variant and replay of an instance gives the same rows every time (design decision 7), so the
first episode of an instance keeps what its setup did — the change log's entries, the id sequences' state and
the instance — and every later one replays those entries on a fresh (pooled) world: O(rows planted), where
copying a whole post-setup world costs more than most setups (a finance world is 8.5 MB). The replay goes
through the same tracking triggers, so the clone's change log, hash, diff and next ids are those of a fresh
instantiation, and grades cannot tell the difference. Better still, a world an episode is done with is kept for
the next episode of the same instance: what the episode did is undone (O(its changes)), the setup stays.

An instance is replayed only after a second build agreed with the first (the check's own determinism test runs
the setup twice for real), and only when that is exact: its setup wrote nothing the log does not see (every row change
SQLite counted is a logged row and its log line) and no REAL value (the log keeps 15 digits).
Otherwise every episode of it runs the setup again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from fixtures.changes import LoggedChange
from fixtures.hashing import primary_key

if TYPE_CHECKING:
    from fixtures.world import World
    from graders.tasks import TaskInstance
    from servers.environment import Environment

__all__ = ["SetupCache"]


@dataclass(frozen=True)
class _Setup:
    changes: tuple[LoggedChange, ...] | None
    """The setup's logged row changes in order; None when a replay would not be exact (run the setup again)."""
    instance: TaskInstance
    id_salt: str | None
    id_floors: dict[str, int] = field(default_factory=dict)
    confirmed: bool = False
    """A second build gave the same instance and changes: only then is it replayed (a nondeterministic template
    must still be caught by the check's "instantiate twice" test)."""


class SetupCache:
    """The setups of the last ``limit`` task instances of one environment (least recently used first out), and a
    few of their worlds kept between episodes (:meth:`take_back`)."""

    def __init__(self, environment: Environment, limit: int = 256, idle: int = 8) -> None:
        """``idle`` bounds the worlds kept between episodes (each holds a world's memory)."""
        self.environment = environment
        self.limit = limit
        # never more idle worlds than the fixture itself pools: a fixture of big worlds (sized by its pool) keeps few
        self.idle = min(idle, getattr(environment.fixture, "pool_size", idle))
        self._setups: OrderedDict[tuple[str, int], _Setup] = OrderedDict()
        self._idle: OrderedDict[tuple[str, int], list[World]] = OrderedDict()
        self._idle_count = 0
        self._keys: dict[str, list[str]] = {}
        self.replayed = 0
        self.built = 0
        self.reused = 0
        self._lock = threading.Lock()
        """Creates may build in worker threads (``EpisodeManager.create_async``) while the loop releases episodes."""

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
        if setup is not None and setup.changes is not None and setup.confirmed:
            self._setups.move_to_end(key)
            kept = self._idle.get(key)
            if kept:
                self._idle_count -= 1
                world = kept.pop()
                world.id_floors = dict(setup.id_floors)  # the ids the last episode minted are not this one's
                self.reused += 1
                return world, setup.instance
            self.replayed += 1
            return self._replay(setup), setup.instance
        return self._build(template_id, seed)

    def take_back(self, template_id: str, seed: int, world: World) -> bool:
        """Keep ``world`` (an episode of this instance is done with it) for the next episode of the same instance:
        what the episode did is undone, the setup kept. False when it cannot be (then release it as usual).

        The episode's World object is finished (:meth:`World.handover`): it can no longer reach the database.
        """
        with self._lock:
            return self._take_back(template_id, seed, world)

    def _take_back(self, template_id: str, seed: int, world: World) -> bool:
        key = (template_id, seed)
        setup = self._setups.get(key)
        if self.idle <= 0 or setup is None or setup.changes is None or not world.rewind_to_start():
            return False
        self._idle.setdefault(key, []).append(world.handover())
        self._idle.move_to_end(key)
        self._idle_count += 1
        while self._idle_count > self.idle:
            oldest, worlds = next(iter(self._idle.items()))
            worlds.pop(0).release()
            self._idle_count -= 1
            if not worlds:
                del self._idle[oldest]
        return True

    def _build(self, template_id: str, seed: int) -> tuple[World, TaskInstance]:
        env = self.environment
        world = env.fixture.world(env.task_fixture_seed)
        try:
            before = world.conn.total_changes
            instance = env.task_template(template_id).instantiate(world, seed)
            written = world.conn.total_changes - before
            changes = world.changes_since(0)
        except BaseException:
            world.release()
            raise
        self.built += 1
        key = (template_id, seed)
        first = self._setups.get(key)
        # total_changes counts trigger writes too: each tracked row change is the row and its log line. Anything else
        # (a full-text index kept by its own triggers, a table the log does not track) makes a replay inexact.
        exact = written == 2 * len(changes) and not any(
            isinstance(v, float) for c in changes for row in (c.before, c.after) if row for v in row.values())
        setup = _Setup(changes=tuple(changes) if exact else None, instance=instance, id_salt=world.id_salt,
                       id_floors=dict(world.id_floors))
        if first is not None:  # the second build: replay from now on only if it agrees with the first
            same = (first.changes == setup.changes and first.id_floors == setup.id_floors
                    and first.instance.model_dump_json() == instance.model_dump_json())
            setup = replace(setup, confirmed=True) if same else replace(setup, changes=None)
        self._setups[key] = setup
        while len(self._setups) > self.limit:
            self._setups.popitem(last=False)
        return world, instance

    def _replay(self, setup: _Setup) -> World:
        env = self.environment
        world = env.fixture.world(env.task_fixture_seed)
        try:
            for change in setup.changes or ():
                self._apply(world, change)
        except BaseException:
            world.release()
            raise
        world.id_salt = setup.id_salt
        world.id_floors = dict(setup.id_floors)
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

    def clear(self) -> None:
        """Forget every kept setup and release every kept world."""
        with self._lock:
            self._clear()

    def _clear(self) -> None:
        self._setups.clear()
        for worlds in self._idle.values():
            for world in worlds:
                world.release()
        self._idle.clear()
        self._idle_count = 0
