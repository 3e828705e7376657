"""The reads of a generated oracle, fitted to its gates: each read is required exactly when the task needs it.

A template's ``seen`` gates say which rows and fields must be shown before the decision; the oracle's reads are the
finds a person makes (a search by a name, a listing of a parent's children) and the reads of the deciding rows.
Which of them a gate needs depends on the instance: an order's status shows in the search that found it, a track's
length only on its own page; a listing of forty children shows them all, of four hundred only a page. So the
oracle is fitted per instance from what each read *shows* (computed the way read provenance computes it, from the
rows each call returns): a read that is the only one showing a gate's fact is required, reads that show it
together (pages) are required, a read another read can stand in for is optional (``toolgym check`` proves both: the
oracle passes without any optional step and fails without any required one), and a gate no read shows yet gets one
(the row's ``get_``, or a listing of the rows by the parent they share).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graders.criteria import Seen
from graders.tasks import ToolCall

if TYPE_CHECKING:
    from fixtures.world import World
    from toolgym.new.runtime import GeneratedEnvironment

__all__ = ["fit_reads", "shown_by"]

Shown = dict[tuple[str, str], set[str]]


def _fields(gen: GeneratedEnvironment, ename: str, row: dict[str, Any], *, summary: bool, world: World) -> set[str]:
    model = gen.public(ename, row, summary=summary, world=None if summary else world)
    return {n for n, v in model.model_dump(mode="json").items() if v is not None}


def shown_by(gen: GeneratedEnvironment, world: World, step: ToolCall) -> Shown:
    """What ``step`` (a ``get_`` or ``search_`` call) shows on ``world``: ``(table, key)`` → fields with a value."""
    spec = gen.spec
    out: Shown = {}
    if step.tool.startswith("get_") and step.tool[4:] in spec.entities:
        ename = step.tool[4:]
        e = spec.entities[ename]
        found = world.query(f'SELECT * FROM "{e.table}" WHERE "{e.fields[e.key or ""].column}" = ?', (step.arguments.get(e.key or ""),))
        if found:
            out[(e.table, str(step.arguments[e.key or ""]))] = _fields(gen, ename, dict(found[0]), summary=False, world=world)
        return out
    ename = next((n for n, e in spec.entities.items() if step.tool == f"search_{e.plural}"), None)
    if ename is None:
        return out
    e = spec.entities[ename]
    if e.key is None:
        return out
    for row in gen.search(world, ename, step.arguments):
        out[(e.table, str(row[e.fields[e.key].column]))] = _fields(gen, ename, row, summary=True, world=world)
    return out


def _covers(gate: Seen, shown: Shown) -> bool:
    return any(all(f in shown.get((a.table, k), set()) for k in a.keys for f in a.fields) and
               all((a.table, k) in shown for k in a.keys) for a in gate.any_of)


def _union(parts: list[Shown]) -> Shown:
    out: Shown = {}
    for part in parts:
        for row, fields in part.items():
            out.setdefault(row, set()).update(fields)
    return out


def _read_for(gen: GeneratedEnvironment, world: World, gate: Seen) -> list[ToolCall]:
    """Reads that show ``gate``'s first fact: the row's ``get_``, or a listing by the reference its rows share."""
    spec = gen.spec
    alt = gate.any_of[0]
    ename = next((n for n, e in spec.entities.items() if e.table == alt.table and e.key is not None), None)
    if ename is None:
        return []
    e = spec.entities[ename]
    if len(alt.keys) == 1:
        value: Any = alt.keys[0]
        if gen.is_int(e, e.fields[e.key or ""]):
            value = int(value)
        return [ToolCall(tool=f"get_{ename}", arguments={e.key or "": value})]
    marks = ", ".join("?" for _ in alt.keys)
    found = world.query(f'SELECT * FROM "{e.table}" WHERE "{e.fields[e.key or ""].column}" IN ({marks})', tuple(alt.keys))
    for fname, f in e.fields.items():
        if f.kind == "ref" and f.visible and found and len({r[f.column] for r in found}) == 1 and found[0][f.column] is not None:
            value = found[0][f.column]
            siblings = world.query(f'SELECT count(*) AS n FROM "{e.table}" WHERE "{f.column}" = ?', (value,))[0]["n"]
            return [ToolCall(tool=f"search_{e.plural}", arguments={fname: value, "limit": 50, "offset": offset})
                    for offset in range(0, siblings, 50)][:4]  # every page of the rows they share a parent with
    return [ToolCall(tool=f"get_{ename}", arguments={e.key or "": int(k) if gen.is_int(e, e.fields[e.key or ""]) else k}) for k in alt.keys[:10]]


def fit_reads(gen: GeneratedEnvironment, world: World, calls: list[ToolCall], gates: list[Any], decision: str | None) -> list[ToolCall]:
    """``calls`` with reads added where a gate has none and each read's ``optional`` flag set (module docstring).

    ``decision``: the tool whose first call the gates' facts must precede (None: the final answer, last).
    """
    seen_gates = [g for g in gates if isinstance(g, Seen)]
    cut = next((i for i, c in enumerate(calls) if c.tool == decision), len(calls) - 1)
    before, after = list(calls[:cut]), list(calls[cut:])
    for gate in seen_gates:  # a gate nothing shows yet: add the read that shows it
        shown = _union([shown_by(gen, world, c) for c in before])
        if not _covers(gate, shown):
            before += _read_for(gen, world, gate)
    reads = [i for i, c in enumerate(before) if c.tool.startswith(("get_", "search_"))]
    views = {i: shown_by(gen, world, before[i]) for i in reads}
    needed: set[int] = set()
    for gate in seen_gates:
        single = [i for i in reads if _covers(gate, views[i])]
        if len(single) == 1:
            needed.add(single[0])
        elif not single:  # shown only by several reads together (pages): each of them is needed
            needed |= {i for i in reads if any((a.table, k) in views[i] for a in gate.any_of for k in a.keys)}
    fitted = [c.model_copy(update={"optional": i not in needed}) if i in views else c for i, c in enumerate(before)]
    return fitted + after
