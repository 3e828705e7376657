"""Coherent worlds: a task's setup must not contradict the world it plants into, or the counterpart.

A template plants rows (a lost card, a fraud charge, a late parcel) and a counterpart who answers questions.
An instance whose planted charge predates the card it was made with, or whose customer answers "what would you
like?" with "Sorry, I don't have that to hand", is a defect a careful agent trips on: it cannot be played
correctly, so its label is noise. ``toolgym check`` lints every instance it builds:

* **timelines**: every row the setup inserted or changed, in a table with a time column
  (``Environment.timeline``: the column saying when the row came to be or happened), is no earlier than each
  row it references that has one (a transaction on a card after the card was issued, a reply after the
  message it answers) — and no row the setup changed is later than a planted child of its own;
* **counterparts**: a planted counterpart answers every topic any counterpart of the environment can speak to
  (``Environment.persona_topics``: what they would like, why they called) in words that fit — a fact, or a
  scripted line (``Persona.says``) — never the generic "I don't have that to hand";
* whatever the environment adds (``Environment.consistency``: domain checks such as a date the prompt names
  against the record it is about).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fixtures.changes import fold_changes
from fixtures.persona import ask, load_persona

if TYPE_CHECKING:
    from fixtures.world import World
    from graders.tasks import TaskInstance
    from servers.environment import Environment

__all__ = ["consistency_problems", "timeline_problems", "counterpart_problems"]

_CHILDREN_CHECKED = 2000
"""Children of a changed parent compared with it at most (bounds the lint on a parent with huge fan-out)."""


def _moment(value: Any) -> str | None:
    """An ISO date or instant as a comparable string (``2026-03-27`` or ``2026-03-27T10:00:00``), else None."""
    if not isinstance(value, str) or len(value) < 10 or value[4] != "-" or value[7] != "-":
        return None
    return value.replace(" ", "T").removesuffix("Z")


def _before(child: str, parent: str) -> bool:
    """Whether ``child`` happens strictly before ``parent`` (dates compared by day when either has no time)."""
    if len(child) == 10 or len(parent) == 10:
        return child[:10] < parent[:10]
    return child < parent


def _references(world: World, table: str, cache: dict[str, list[tuple[str, str, str]]]) -> list[tuple[str, str, str]]:
    """(column, parent table, parent column) of every foreign key of ``table``."""
    if table not in cache:
        rows = world.conn.execute(f'PRAGMA foreign_key_list("{table}")').fetchall()
        cache[table] = [(str(r[3]), str(r[2]), str(r[4]) if r[4] else "") for r in rows]
    return cache[table]


def timeline_problems(environment: Environment, world: World) -> list[str]:
    """Planted rows that happen before what they reference, or changed parents after their planted children."""
    timeline = environment.timeline
    if not timeline:
        return []
    planted = [c for c in fold_changes(world.changes_since(0)) if c.op in ("insert", "update") and c.after is not None]
    cache: dict[str, list[tuple[str, str, str]]] = {}
    problems: list[str] = []
    for change in planted:
        row = change.after or {}
        column = timeline.get(change.table)
        when = _moment(row.get(column)) if column else None
        for fk_column, parent, parent_key in _references(world, change.table, cache):
            parent_time = timeline.get(parent)
            value = row.get(fk_column)
            if parent_time is None or value is None or when is None:
                continue
            key = parent_key or "rowid"
            found = world.query(f'SELECT "{parent_time}" AS t FROM "{parent}" WHERE "{key}" = ?', (value,))
            then = _moment(found[0]["t"]) if found else None
            if then is not None and _before(when, then):
                problems.append(f"planted {change.table} {change.key} ({column} {when}) is earlier than {parent} {value} it "
                                f"references ({parent_time} {then})")
        if when is None:
            continue
        for child, children in _children(world, change.table, cache, environment):
            child_time = timeline[child]
            for fk_column, parent_key in children:
                key = row.get(parent_key or "rowid")
                if key is None:
                    continue
                early = world.query(f'SELECT "{child_time}" AS t FROM "{child}" WHERE "{fk_column}" = ? AND "{child_time}" IS NOT NULL '
                                    f'ORDER BY "{child_time}" LIMIT {_CHILDREN_CHECKED}', (key,))
                first = next((m for m in (_moment(r["t"]) for r in early) if m is not None), None)
                if first is not None and _before(first, when):
                    problems.append(f"planted {change.table} {change.key} ({column} {when}) is later than {child} that references "
                                    f"it ({child_time} {first})")
    return sorted(set(problems))


def _children(world: World, table: str, cache: dict[str, list[tuple[str, str, str]]],
              environment: Environment) -> list[tuple[str, list[tuple[str, str]]]]:
    """Tables with a time column that reference ``table``: (child, [(fk column, referenced column)])."""
    found = []
    for child in environment.timeline:
        refs = [(column, key) for column, parent, key in _references(world, child, cache) if parent == table]
        if refs:
            found.append((child, refs))
    return found


def counterpart_problems(environment: Environment, world: World) -> list[str]:
    """Topics the planted counterpart would answer with its generic fallback instead of words that fit."""
    persona = load_persona(world) if "persona" in _tables(world) else None
    if persona is None:
        return []
    silent = [t for t in environment.persona_topics if not ask(persona, t).known and t not in persona.says]
    if not silent:
        return []
    return [f"the counterpart {persona.name!r} answers {', '.join(silent)} with the generic {persona.unknown!r}: give each a fact "
            "or a scripted line that fits (Persona.says)"]


def _tables(world: World) -> set[str]:
    return {r["name"] for r in world.query("SELECT name FROM sqlite_master WHERE type = 'table'")}


def consistency_problems(environment: Environment, world: World, instance: TaskInstance) -> list[str]:
    """Every coherence problem of one instance's world right after its setup (see the module docstring)."""
    problems = timeline_problems(environment, world) + counterpart_problems(environment, world)
    extra = environment.consistency
    if extra is not None:
        problems += list(extra(world, instance))
    return problems
