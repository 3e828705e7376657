"""Task templates derived from a generated environment's spec and data, to the counterfactual standard.

Kinds (``TaskTemplate.category``):

- ``lookup``: a detail of one row named as a person names it (its title or natural key), read with ``get_<entity>``;
- ``join``: a row's parent (or grandparent) reached through references, e.g. the artist of a track;
- ``aggregate``: how many child rows a row has (optionally of one category, or in one year), or their money total;
- ``action`` and ``multistep``: one action of the spec, done or refused with a rule's code as the seed's world
  decides (:mod:`toolgym.new.action_templates`).

Each instance draws its subject per seed; prompts name rows by their titles, never by the ids the deciding calls
need. ``toolgym new`` keeps only the templates ``toolgym check`` passes on every seed (``templates.json``).
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fixtures.errors import TaskError
from fixtures.world import World
from graders.criteria import AnswerCheck, Seen, number, regex, text
from graders.outcome import completed
from graders.tasks import TaskDraft, TaskTemplate, answer_call, call, negative, optional_call
from toolgym.new.gates import read_gate
from toolgym.new.reword import compose, load_wordings

if TYPE_CHECKING:
    from toolgym.new.runtime import GeneratedEnvironment
    from toolgym.new.spec import EntitySpec

__all__ = ["Deriver", "derive_templates", "generated_templates", "LOOKUP_ONE_SIDED"]

LOOKUP_ONE_SIDED = ("a question about the data is always answered: the policy refuses no read, so the declaration is "
                    "'completed' on every seed; the world decides the value, which only reading the named record finds")
_UPDATE_ONE_SIDED = "the spec gives this action no rule, so every request is carried out; the world decides which row changes"
_OPENERS = ("Hi,", "Quick one:", "Hello,", "Hey,", "Could you help?", "When you get a moment:", "Hi there,", "Question:")


def _order(world: World, rng: random.Random, count: int) -> list[int]:
    """Indices 0..count-1 in the order this instance tries its candidate subjects.

    Why not ``rng.randrange``: twenty independent draws among a few dozen customers repeat one about every other
    template, and two seeds with one subject are one problem (another seed's oracle is paid on it). So the seed
    (part of the world's id salt, set before the build) indexes a permutation fixed per template, and different
    seeds start on different subjects; a world without a salt falls back on the rng.
    """
    salt = str(getattr(world, "id_salt", "") or "")
    template, _, seed = salt.rpartition(":")
    if not seed.isdigit() or count == 0:
        order = list(range(count))
        rng.shuffle(order)
        return order
    perm = list(range(count))
    random.Random(f"spread:{template}").shuffle(perm)
    start = int(seed) % count
    return perm[start:] + perm[:start]


def _varied(items: list[Any], group: Any, answer: Any, most: float = 0.5, values: int = 3) -> list[Any]:
    """The items of the groups (by ``group(item)``: a field asked about) whose answers vary: at least ``values``
    distinct answers, none given by more than ``most`` of the group. A field most rows share (a content type, a
    status nearly always 'active') is an answer a policy memorises: another seed's answer would be paid."""
    groups: dict[Any, list[Any]] = {}
    for item in items:
        groups.setdefault(group(item), []).append(item)
    kept = set()
    for key, members in groups.items():
        tally = Counter(answer(m) for m in members)
        if len(tally) >= values and tally.most_common(1)[0][1] <= most * len(members):
            kept.add(key)
    return [item for item in items if group(item) in kept]


def _spread(world: World, rng: random.Random, candidates: list[Any], what: str) -> Any:
    if not candidates:
        raise TaskError(f"no {what} in this world satisfies the task's preconditions")
    return candidates[_order(world, rng, len(candidates))[0]]


def _label(name: str) -> str:
    return name.replace("_", " ")


NAMED = "toolgym_name"
"""Key of a named row (:meth:`Deriver.named_rows`) holding the name a person gives it: its title, or — where people
share a title (two customers called Ana Müller) — its natural key (her e-mail)."""
_NAMED_CAP = 4000
"""Named rows kept per entity, evenly spread in key order: enough for distinct seeds, bounded on a million-row table."""


def _title(entity: EntitySpec, row: dict[str, Any]) -> str | None:
    if row.get(NAMED):
        return str(row[NAMED])
    if entity.title:
        parts = [str(row[entity.fields[f].column]) for f in entity.title if row[entity.fields[f].column] not in (None, "")]
        if len(parts) == len(entity.title):
            return " ".join(parts)
    if entity.natural_key and row[entity.fields[entity.natural_key].column]:
        return str(row[entity.fields[entity.natural_key].column])
    return None


def _plain_title(entity: EntitySpec, row: dict[str, Any]) -> str | None:
    if not entity.title:
        return None
    parts = [str(row[entity.fields[f].column]) for f in entity.title if row[entity.fields[f].column] not in (None, "")]
    return " ".join(parts) if len(parts) == len(entity.title) else None


def _natural(entity: EntitySpec, row: dict[str, Any]) -> str | None:
    value = row[entity.fields[entity.natural_key].column] if entity.natural_key else None
    return str(value) if value not in (None, "") else None


def _stream(world: World, sql: str) -> Any:
    """Rows of ``sql`` one at a time (as dicts), never all in memory."""
    cursor = world.conn.execute(sql)
    names = [d[0] for d in cursor.description or ()]
    for row in cursor:
        yield dict(zip(names, row))


def _quoted(entity: EntitySpec, title: str) -> str:
    return title if entity.natural_key and not entity.title else f"“{title}”"


class Deriver:
    """Derives the read templates (look-ups, joins, aggregates); :class:`~toolgym.new.action_templates.ActionDeriver` adds actions."""

    def __init__(self, gen: GeneratedEnvironment, wordings: dict[str, str] | None = None) -> None:
        self.gen, self.spec = gen, gen.spec
        # reworded prompt templates (wordings.json, toolgym.new.reword): only the words change, never the instance
        self.wordings = load_wordings(gen.folder) if wordings is None else wordings
        self._memo: dict[tuple[Any, ...], Any] = {}

    # -- rows people can name -------------------------------------------------------------------------------
    def memo(self, world: World, key: tuple[Any, ...], compute: Any) -> Any:
        """``compute()`` once per untouched world content (the check builds each instance about ten times)."""
        if world.change_mark() != 0:
            return compute()
        full = (world.hash(), *key)
        if full not in self._memo:
            if len(self._memo) > 256:
                self._memo.clear()
            self._memo[full] = compute()
        return self._memo[full]

    def named_rows(self, world: World, ename: str) -> list[dict[str, Any]]:
        """Rows of ``ename`` whose title is unique in the table and findable by a search of its words."""
        return [dict(r) for r in self.memo(world, ("named", ename), lambda: self._named_rows(world, ename))]

    def _named_rows(self, world: World, ename: str) -> list[dict[str, Any]]:
        """Rows a person can name: by their title where no other row shares it, else by their natural key; streamed in
        key order (a million rows are never all in memory) and spread evenly down to at most ``_NAMED_CAP``."""
        e = self.spec.entities[ename]
        if e.key is None or not (e.title or e.natural_key):
            return []
        sql = f'SELECT * FROM "{e.table}" ORDER BY "{e.fields[e.key].column}"'
        counts: dict[str, int] = {}
        for r in _stream(world, sql):
            for name in {_plain_title(e, r), _natural(e, r)} - {None}:
                counts[name.casefold()] = counts.get(name.casefold(), 0) + 1  # type: ignore[union-attr]
        names: list[tuple[Any, str]] = []
        for r in _stream(world, sql):
            title, natural = _plain_title(e, r), _natural(e, r)
            name = title if title and counts[title.casefold()] == 1 else natural if natural and counts[natural.casefold()] == 1 else None
            if name and len(name) <= 120:
                names.append((r[e.fields[e.key].column], name))
        step = max(1, -(-len(names) // _NAMED_CAP))
        chosen = dict(names[::step])
        out = []
        for r in _stream(world, sql):
            key = r[e.fields[e.key].column]
            if key in chosen:
                out.append({**r, NAMED: chosen[key]})
        return out

    def find(self, ename: str, row: dict[str, Any]) -> list[Any]:
        e = self.spec.entities[ename]
        return [optional_call(f"search_{e.plural}", query=_title(e, row))]

    def key(self, ename: str, row: dict[str, Any]) -> Any:
        e = self.spec.entities[ename]
        return row[e.fields[e.key or ""].column]

    def get(self, ename: str, row: dict[str, Any], *, optional: bool = False) -> Any:
        e = self.spec.entities[ename]
        make = optional_call if optional else call
        return make(f"get_{ename}", **{e.key or "": self.key(ename, row)})

    def read_gate(self, ename: str, row: dict[str, Any], what: str, fields: list[str] | None = None) -> Seen:
        """The gate on having seen ``row`` with ``fields`` (toolgym.new.gates: gates name rows and fields, not tools)."""
        return read_gate(self.gen, ename, self.key(ename, row), fields or [], what)

    def held(self, f: Any, parent: dict[str, Any]) -> Any:
        """The value a reference field ``f`` holds for row ``parent`` of the entity it refers to (its key, or the
        non-key field the reference names)."""
        return parent[self.spec.ref_column(f)]

    def words(self, ename: str, field: str) -> str:
        """How a prompt names a field of ``ename`` (its label)."""
        return self.gen.label(self.spec.entities[ename], field)

    def shown(self, ename: str, field: str, row: dict[str, Any]) -> str | None:
        e = self.spec.entities[ename]
        f = e.fields[field]
        value = row[f.column]
        if value is None or str(value).strip() == "":
            return None
        if f.kind == "money":
            return str(Decimal(int(value)).scaleb(-f.scale).quantize(Decimal(1).scaleb(-f.scale)))
        return str(value)

    # -- look-ups -------------------------------------------------------------------------------------------
    def lookups(self) -> list[TaskTemplate]:
        out = []
        for ename, e in self.spec.entities.items():
            if e.key is None or not (e.title or e.natural_key):
                continue
            summary = set(self.gen.summary_fields(e))
            details = [n for n, f in e.fields.items() if f.visible and n not in summary and f.kind in ("text", "integer", "decimal")]
            if not details:
                continue
            out.append(TaskTemplate(self._lookup(ename, details), id=f"lookup_{ename}", difficulty="easy", category="lookup",
                                    tags=["lookup", "generated"], tools=[f"search_{e.plural}", f"get_{ename}", "submit_answer"],
                                    description=f"A detail of one {e.label}, named as a person names it", one_sided=LOOKUP_ONE_SIDED))
        return out

    def _lookup(self, ename: str, details: list[str]) -> Any:
        e = self.spec.entities[ename]

        def build(world: World, rng: random.Random) -> TaskDraft:
            candidates = self.memo(world, ("lookup", ename), lambda: _varied([
                (r, d) for r in self.named_rows(world, ename) for d in details if self.shown(ename, d, r)], lambda rd: rd[1],
                lambda rd: str(self.shown(ename, rd[1], rd[0]))))
            if len(candidates) < 40:
                raise TaskError(f"fewer than 40 named {e.plural} with details: too few for distinct instances")
            by_row: dict[int, list[Any]] = {}
            for r, d in candidates:
                by_row.setdefault(id(r), []).append((r, d))
            row, field = rng.choice(_spread(world, rng, list(by_row.values()), f"named {e.label}"))
            value = self.shown(ename, field, row)
            title = _title(e, row)
            expect = number(value) if e.fields[field].kind in ("integer", "decimal") else text(value or "")
            prompt = compose(self.wordings, rng.choice(_OPENERS), f"what is the {{field}} on record for the {e.label} {{record}}?",
                             {"field": self.words(ename, field), "record": _quoted(e, title or "")},
                             f"Reply with submit_answer, giving it as values.{field}.")
            return TaskDraft(
                prompt=prompt,
                oracle=[*self.find(ename, row), self.get(ename, row), answer_call(f"The {self.words(ename, field)} is {value}.", **{field: value})],
                outcome=completed(),
                rubric=[self.read_gate(ename, row, f"read the {e.label}", [field]),
                        AnswerCheck(name=f"answer gives the {self.words(ename, field)}", field=f"values.{field}", expect=expect, weight=3, gate=True)],
                negatives=[negative("unread", "answers without reading", answer_call("Here it is.", **{field: "unknown"}))],
                metadata={"entity": ename, "field": field},
            )

        build.__name__ = f"lookup_{ename}"
        return build

    # -- joins ----------------------------------------------------------------------------------------------
    def chains(self) -> list[list[tuple[str, str]]]:
        """Reference chains (entity, ref field) of one or two hops from a named entity to a titled one."""
        found = []
        for ename, e in self.spec.entities.items():
            if e.key is None or not (e.title or e.natural_key):
                continue
            for fname, f in e.fields.items():
                if f.kind != "ref" or not f.visible or f.ref == ename:
                    continue
                parent = self.spec.entities[f.ref or ""]
                if parent.key is None:
                    continue
                if parent.title or parent.natural_key:
                    found.append([(ename, fname)])
                for gname, g in parent.fields.items():
                    if g.kind == "ref" and g.visible and g.ref not in (ename, f.ref):
                        top = self.spec.entities[g.ref or ""]
                        if top.key is not None and (top.title or top.natural_key):
                            found.append([(ename, fname), (f.ref or "", gname)])
        return found

    def joins(self) -> list[TaskTemplate]:
        """Join questions: at most two per starting entity and four per entity reached (a schema where everything
        leads to the customer asks "whose is this?" a few ways, not forty), people's names and longer walks first."""
        out = []
        per_start: dict[str, int] = {}
        per_top: dict[str, int] = {}

        def target(chain: list[tuple[str, str]]) -> str:
            return self.spec.entities[chain[-1][0]].fields[chain[-1][1]].ref or ""

        ranked = sorted(self.chains(), key=lambda c: (not self.spec.entities[target(c)].title, -len(c)))
        for chain in ranked:
            top = target(chain)
            if per_start.get(chain[0][0], 0) >= 2 or per_top.get(top, 0) >= 4:
                continue
            per_start[chain[0][0]] = per_start.get(chain[0][0], 0) + 1
            per_top[top] = per_top.get(top, 0) + 1
            tid = f"join_{chain[0][0]}_" + "_".join(f.removesuffix("_id") for _, f in chain)
            tools = [f"search_{self.spec.entities[chain[0][0]].plural}", *[f"get_{e}" for e, _ in chain], f"get_{top}", "submit_answer"]
            out.append(TaskTemplate(self._join(chain, top), id=tid[:80], difficulty="medium" if len(chain) == 1 else "hard",
                                    category="join", tags=["join", "generated"], tools=list(dict.fromkeys(tools)),
                                    description=f"Which {self.spec.entities[top].label} a {self.spec.entities[chain[0][0]].label} "
                                                f"belongs to, {len(chain)} reference(s) away", one_sided=LOOKUP_ONE_SIDED))
        return out

    def _join(self, chain: list[tuple[str, str]], top: str) -> Any:
        start = chain[0][0]
        e0, et = self.spec.entities[start], self.spec.entities[top]
        answer_field = top if top != start else f"{top}_name"

        def walks(world: World) -> dict[Any, list[Any]]:
            cache: dict[tuple[str, Any], Any] = {}

            def parent_of(f: Any, value: Any) -> Any:  # one indexed look-up per distinct parent (never a whole table)
                if (f.column, value) not in cache:
                    parent = self.spec.entities[f.ref or ""]
                    found = world.query(f'SELECT * FROM "{parent.table}" WHERE "{self.spec.ref_column(f)}" = ?', (value,))
                    cache[(f.column, value)] = found[0] if found else None
                return cache[(f.column, value)]

            groups: dict[Any, list[Any]] = {}
            for r in self.named_rows(world, start):
                path, cur = [(start, r)], r
                for ename, fname in chain:
                    f = self.spec.entities[ename].fields[fname]
                    cur = parent_of(f, cur[f.column]) if cur is not None and cur[f.column] is not None else None
                    path.append((f.ref or "", cur))
                if cur is not None and _title(et, cur):
                    groups.setdefault(self.key(top, cur), []).append(path)
            return groups

        def build(world: World, rng: random.Random) -> TaskDraft:
            groups = self.memo(world, ("walks", tuple(chain)), lambda: walks(world))
            if len(groups) < 20:
                raise TaskError(f"fewer than 20 distinct {et.plural} reached from named {e0.plural}")
            group = groups[_spread(world, rng, sorted(groups, key=str), f"{et.label} reached from a {e0.label}")]
            walk = group[rng.randrange(len(group))]
            row, end = walk[0][1], walk[-1][1]
            value = _title(et, end) or ""
            phrase = f"the {e0.label} {{record}}"
            for ename, fname in chain:
                words = self.words(ename, fname)
                phrase = f"the {words.removesuffix(' ID').removesuffix(' id')} of {phrase}"
            prompt = compose(self.wordings, rng.choice(_OPENERS), f"which {et.label} is {phrase}?",
                             {"record": _quoted(e0, _title(e0, row) or "")},
                             f"Reply with submit_answer, giving its name as values.{answer_field}.")
            steps = [*self.find(start, row), self.get(start, row, optional=True)]
            steps += [self.get(ename, r, optional=True) for ename, r in walk[1:-1]]
            steps.append(self.get(top, end))
            return TaskDraft(
                prompt=prompt,
                oracle=[*steps, answer_call(f"It belongs to {value}.", **{answer_field: value})],
                outcome=completed(),
                rubric=[self.read_gate(top, end, f"read the {et.label}", et.title or [et.natural_key or ""]),
                        AnswerCheck(name=f"answer names the {et.label}", field=f"values.{answer_field}", expect=text(value), weight=3, gate=True)],
                negatives=[negative("unread", "answers without reading", answer_call("It belongs to someone.", **{answer_field: "unknown"}))],
                metadata={"chain": [f for _, f in chain]},
            )

        build.__name__ = "join"
        return build


def _moment(value: str) -> tuple[str, Any]:
    """A date or date-time as the answer gives it, and its matcher: a date alone for a date; for a moment with a time
    of day, the date and the time to the minute (seconds and a UTC offset may follow, written either way)."""
    found = re.match(r"^([0-9]{4}-[0-9]{2}-[0-9]{2})(?:[ T]([0-9]{2}:[0-9]{2})(:[0-9]{2}(?:\.[0-9]+)?)?)?", value)
    if found is None:
        return value, text(value)
    day, minute = found.group(1), found.group(2)
    if minute is None or (minute == "00:00" and re.fullmatch(r"(:00(\.0+)?)?", found.group(3) or "")):  # midnight: a date
        return day, regex(re.escape(day) + r"([ T]00:00(:00(\.0+)?)?(Z|[+-]00:?00)?)?")
    return f"{day} {minute}", regex(re.escape(day) + r"[ T]" + re.escape(minute) + r"(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?")


def derive_templates(gen: GeneratedEnvironment, wordings: dict[str, str] | None = None) -> list[TaskTemplate]:
    """Every template the spec and data allow (before ``toolgym check`` keeps the ones that pass); ``wordings``: the
    reworded prompt templates to use (None: the package's ``wordings.json``; ``{}``: the original wording)."""
    from toolgym.new.action_templates import ActionDeriver

    d = ActionDeriver(gen, wordings)
    found = [*d.lookups(), *d.joins(), *d.aggregates(), *d.latest_reads(), *d.actions()]
    unique: dict[str, TaskTemplate] = {}
    for t in found:
        unique.setdefault(t.id, t)
    return list(unique.values())


def generated_templates(package: str) -> list[TaskTemplate]:
    """The generated templates of the package ``package`` that ``toolgym new`` kept (``templates.json``), or all of
    them when it has not been checked yet. Call it from the package's ``tasks.py``."""
    import importlib

    env = importlib.import_module(package).environment
    gen = env.generated
    templates = derive_templates(gen)
    kept_file = Path(gen.folder) / "templates.json"
    if kept_file.exists():
        kept = set(json.loads(kept_file.read_text()).get("kept", []))
        templates = [t for t in templates if t.id in kept]
    return templates
