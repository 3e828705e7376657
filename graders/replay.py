"""Rebuilding an episode's end world from its record, offline, in O(changed rows).

A record carries, for every successful tool call, each row write with its before/after image. Replaying
those images in order onto a fresh world of the same (template, seed) reproduces the end state without
running any tool code. Writes are applied as absolute after-images (upsert / update-to-image / delete),
so a schema's own triggers firing during the replay converge to the same rows. The rebuilt world's
canonical hash must equal the record's ``closed.end_hash``; anything else is a :class:`RecordError` that
names the problem.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from fixtures.changes import LoggedChange
from fixtures.errors import RecordError
from fixtures.hashing import primary_key, user_tables
from servers.record import Record

if TYPE_CHECKING:
    from fixtures.world import World
    from graders.tasks import TaskInstance
    from servers.environment import Environment

__all__ = ["apply_changes", "check_record", "rebuild_end_world"]


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def apply_changes(world: World, changes: Iterable[LoggedChange]) -> int:
    """Apply logged row changes to ``world`` in order; returns how many were applied.

    Raises:
        RecordError: a change names an unknown table or a row that is not there.
    """
    tables = set(user_tables(world.conn))
    keys: dict[str, list[str]] = {}
    applied = 0
    for change in changes:
        if change.table not in tables:
            raise RecordError(f"change #{change.seq} writes table {change.table!r}, which this environment's world does not have")
        key_columns = keys.get(change.table)
        if key_columns is None:
            key_columns = keys[change.table] = primary_key(world.conn, change.table)
        table = _q(change.table)
        if change.op == "insert":
            row = _image(change, change.after)
            columns = list(row)
            updates = ", ".join(f"{_q(c)} = excluded.{_q(c)}" for c in columns if c not in key_columns)
            conflict = f" ON CONFLICT ({', '.join(_q(c) for c in key_columns)}) DO " + (f"UPDATE SET {updates}" if updates else "NOTHING")
            world.execute(
                f"INSERT INTO {table} ({', '.join(_q(c) for c in columns)}) VALUES ({', '.join('?' for _ in columns)}){conflict}",
                tuple(row[c] for c in columns),
            )
        else:
            before = _image(change, change.before)
            where = " AND ".join(f"{_q(c)} = ?" for c in key_columns)
            old_key = tuple(before.get(c) for c in key_columns)
            if change.op == "update":
                after = _image(change, change.after)
                sets = ", ".join(f"{_q(c)} = ?" for c in after)
                cursor = world.execute(f"UPDATE {table} SET {sets} WHERE {where}", (*after.values(), *old_key))
            else:
                cursor = world.execute(f"DELETE FROM {table} WHERE {where}", old_key)
            if cursor.rowcount == 0 and change.op == "update":
                raise RecordError(f"change #{change.seq} updates {change.table}{list(old_key)}, which does not exist at that point of the replay")
        applied += 1
    return applied


def _image(change: LoggedChange, row: dict[str, Any] | None) -> dict[str, Any]:
    if row is None:
        raise RecordError(f"change #{change.seq} ({change.op} on {change.table}) lacks its row image")
    return row


def check_record(environment: Environment, record: Record) -> None:
    """Refuse records that cannot be re-graded here, with the reason.

    Raises:
        RecordError: another environment, another fixture version, free play, not closed, or missing calls.
    """
    header = record.header
    where = f"record of episode {header.episode_id!r}"
    if header.env != environment.name:
        raise RecordError(f"{where} is from environment {header.env!r}, not {environment.name!r}")
    if header.fixture_version != environment.fixture.version:
        raise RecordError(
            f"{where} was made with fixture version {header.fixture_version}, this code builds {environment.fixture.version}: "
            "the fixture's schema or generator changed since, so its worlds cannot be rebuilt"
        )
    if header.task is None:
        raise RecordError(f"{where} is free play (no task): there is no rubric to grade it with")
    closed = record.closed
    if closed is None:
        raise RecordError(f"{where} has no 'closed' event: the episode was not closed or the file is truncated")
    calls = record.tool_calls
    if closed.tool_calls != len(calls) or [e.seq for e in calls] != list(range(1, len(calls) + 1)):
        raise RecordError(
            f"{where} is incomplete: its footer counts {closed.tool_calls} tool calls, the file holds "
            f"{len(calls)} (seqs {[e.seq for e in calls][:10]}); the file was truncated or edited"
        )


def rebuild_end_world(environment: Environment, record: Record) -> tuple[World, TaskInstance]:
    """The end world of a closed task episode, rebuilt from its record, and its task instance.

    Raises:
        RecordError: the record is unusable here (see :func:`check_record`), the task template no longer
            produces the same start, or the logged changes do not reproduce the recorded end hash.
        TaskError: the record names a task template this environment does not have.
    """
    check_record(environment, record)
    header = record.header
    closed = record.closed
    assert header.task is not None and closed is not None  # check_record guarantees both
    world, instance = environment.instantiate_task(header.task, header.seed)
    try:
        world.mark_start()
        if header.prompt is not None and instance.prompt != header.prompt:
            raise RecordError(
                f"record of episode {header.episode_id!r}: task template {header.task!r} (seed {header.seed}) now "
                "produces a different prompt than the one recorded; the template changed since the record was made"
            )
        for event in record.tool_calls:
            if event.changes:
                apply_changes(world, event.changes)
        end = world.hash()
        if end != closed.end_hash:
            start_world, _ = environment.instantiate_task(header.task, header.seed)
            try:
                start = start_world.hash()
            finally:
                start_world.release()
            if start != header.start_hash:
                raise RecordError(
                    f"record of episode {header.episode_id!r}: task {header.task!r} seed {header.seed} now starts from "
                    f"{start}, the record from {header.start_hash}; the template's setup changed since the record was made"
                )
            raise RecordError(
                f"record of episode {header.episode_id!r}: replaying its logged changes gives {end}, but the record "
                f"says the episode ended at {closed.end_hash}; the record was edited or its changes are incomplete"
            )
    except BaseException:
        world.release()
        raise
    return world, instance
