"""Multi-step questions: find a named row, take its latest child, follow that child's reference, answer.

A person asks "where did plane N11539 fly last?" or "what award did Barry Bonds win most recently?": find the
parent by the name or code they give, list its children newest first (by their first date, or by a year column
where the data has no dates), take the latest, and answer from it — one of its details, or the title of a row it
refers to. Only parents whose latest child is unique are asked about (a tie has no "latest"), and only questions
twenty different parents can be asked (so twenty seeds are twenty problems).

:func:`latest_children` is shared with the action templates (``latest_<action>``: the same find, then an act).
"""

from __future__ import annotations

import random
import re
from typing import TYPE_CHECKING, Any

from fixtures.errors import TaskError
from fixtures.world import World
from graders.criteria import AnswerCheck, number, text
from graders.outcome import completed
from graders.setup import rows
from graders.tasks import TaskDraft, TaskTemplate, answer_call, call, negative, optional_call
from toolgym.new.aggregates import AggregateDeriver
from toolgym.new.gates import read_gate
from toolgym.new.reword import compose
from toolgym.new.templates import _OPENERS, LOOKUP_ONE_SIDED, _moment, _quoted, _spread, _stream, _title

if TYPE_CHECKING:
    from toolgym.new.spec import EntitySpec

__all__ = ["ChainDeriver", "order_field", "CAP_TAG"]

_YEAR = re.compile(r"^(year|year_id|yearid|season|yr)$")
_DATE_PART = re.compile(r"(^|_)(year|month|day|hour|minute|second|yr|mo|dt)(_id)?$|^(year|month|day|hour|minute)")
_ASKED = re.compile(r"(delay|duration|air_time|amount|price|salary|votes|points|score|weight|height|attendance|quantity|award|result)")
_MIN_PARENTS = 20
_PER_CHILD = 4
"""Latest-child questions kept per way of naming their owner (three times as many per child entity): a few ways to
ask, not dozens."""
CAP_TAG = "cap:"
"""A template tag ``cap:<group>:<n>``: of the templates of one group that can be built, ``toolgym new`` keeps the first n."""


def order_field(entity: EntitySpec) -> str | None:
    """The field that says which of an entity's rows is latest: its first visible date, else a year column."""
    dates = [n for n, f in entity.fields.items() if f.kind == "date" and f.visible]
    if dates:
        return dates[0]
    return next((n for n, f in entity.fields.items() if f.kind == "integer" and f.visible and _YEAR.match(n)), None)


class ChainDeriver(AggregateDeriver):
    """Read templates across a latest child (module docstring), and the latest-child look-up actions share."""

    def latest_children(self, world: World, cname: str, fname: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(latest child, named parent) for every named parent of ``cname`` through ``fname`` with at least two
        children and a unique latest one (one SQL pass: a million children are never all in memory)."""
        return self.memo(world, ("latest-children", cname, fname), lambda: self._latest_children(world, cname, fname))

    def _latest_children(self, world: World, cname: str, fname: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        c = self.spec.entities[cname]
        order = order_field(c)
        link = c.fields[fname]
        if order is None or c.key is None:
            return []
        named = {self.held(link, r): r for r in self.named_rows(world, link.ref or "")}
        if len(named) < _MIN_PARENTS // 2:
            return []
        col, lcol, keycol = c.fields[order].column, link.column, c.fields[c.key].column
        found = _stream(world, f'SELECT t.* FROM "{c.table}" t JOIN (SELECT "{lcol}" AS k, max("{col}") AS m FROM "{c.table}" '
                               f'WHERE "{col}" IS NOT NULL GROUP BY "{lcol}" HAVING count(*) >= 2) s ON t."{lcol}" = s.k AND t."{col}" = s.m '
                               f'ORDER BY t."{lcol}", t."{keycol}"')
        by_parent: dict[Any, list[dict[str, Any]]] = {}
        for r in found:  # streamed: only the named parents' latest children are kept
            if r[lcol] in named:
                by_parent.setdefault(r[lcol], []).append(r)
        return [(group[0], named[k]) for k, group in by_parent.items() if len(group) == 1]

    def latest_finds(self, cname: str, fname: str, parent: dict[str, Any]) -> list[Any]:
        """The calls that find a parent's latest child: the parent by its name, its children newest first."""
        c = self.spec.entities[cname]
        link = c.fields[fname]
        return [*self.find(link.ref or "", parent),
                optional_call(f"search_{c.plural}", **{fname: self.held(link, parent)}, sort=order_field(c), descending=True, limit=5)]

    # -- templates ------------------------------------------------------------------------------------------
    def latest_reads(self) -> list[TaskTemplate]:
        """Per child entity with an order and a named parent: the title of what its latest child refers to (up to
        three references) and one detail of it."""
        out = []
        for cname, c in self.spec.entities.items():
            if c.key is None or order_field(c) is None:
                continue
            refs = [(n, f) for n, f in c.fields.items() if f.kind == "ref" and f.visible and f.ref != cname]
            for fname, f in refs:
                p = self.spec.entities[f.ref or ""]
                if p.key is None or not (p.title or p.natural_key):
                    continue
                # toolgym new keeps the first few of these that can be built: a few per way of naming the owner (a
                # flight's latest by its plane, by its destination), and a few more per child entity in all
                family = [f"{CAP_TAG}the latest {c.label}:{_PER_CHILD * 3}", f"{CAP_TAG}the latest {c.label} by {fname.removesuffix('_id')}:{_PER_CHILD}"]
                others = [(g, self.spec.entities[h.ref or ""]) for g, h in refs if g != fname and h.ref != f.ref
                          and (self.spec.entities[h.ref or ""].title or self.spec.entities[h.ref or ""].natural_key)]
                base = f"latest_{cname}_of_{fname.removesuffix('_id')}"
                tools = [f"search_{p.plural}", f"search_{c.plural}", f"get_{cname}", "submit_answer"]
                for g, target in others[:3]:
                    out.append(TaskTemplate(self._latest_ref(cname, fname, g), id=f"{base}_{g.removesuffix('_id')}"[:80],
                                            category="multistep", difficulty="hard", tags=["multistep", "read", "generated", *family],
                                            tools=list(dict.fromkeys([*tools[:-1], f"search_{target.plural}", f"get_{c.fields[g].ref}", "submit_answer"])),
                                            one_sided=LOOKUP_ONE_SIDED,
                                            description=f"Find a {p.label}, its latest {c.label}, and the {target.label} that refers to"))
                for detail in self._details(c, order_field(c) or ""):
                    out.append(TaskTemplate(self._latest_detail(cname, fname, detail), id=f"{base}_{detail}"[:80], category="multistep",
                                            difficulty="hard", tags=["multistep", "read", "generated", *family], tools=tools,
                                            one_sided=LOOKUP_ONE_SIDED,
                                            description=f"Find a {p.label}, its latest {c.label}, and its {self.words(cname, detail)}"))
        return out

    def _details(self, c: EntitySpec, order: str) -> list[str]:
        """The details of a child a person asks about (at most two): an amount, then a measure (a delay, a duration),
        then text; never a key, a reference or a part of the date (its month, its hour)."""
        ranked = []
        for n, g in c.fields.items():
            if not g.visible or g.kind not in ("money", "text", "category", "integer", "decimal") or n in (order, c.key, c.natural_key):
                continue
            if _DATE_PART.search(n) or n == self._name_of(c) and g.kind != "money":  # a flight's flight is its number
                continue
            rank = 0 if g.kind == "money" else 1 if _ASKED.search(n) else 2 if g.kind in ("text", "category") else 3
            ranked.append((rank, n))
        return [n for _, n in sorted(ranked)[:2]]

    def _name_of(self, c: EntitySpec) -> str:
        return next((n for n, e in self.spec.entities.items() if e is c), "")

    def _answerable(self, world: World, cname: str, fname: str, pick: Any) -> list[Any]:
        pairs = self.latest_children(world, cname, fname)
        out = [p for p in pairs if pick(p[0]) is not None]
        if len(out) < _MIN_PARENTS:
            p = self.spec.entities[self.spec.entities[cname].fields[fname].ref or ""]
            raise TaskError(f"fewer than {_MIN_PARENTS} named {p.plural} whose latest {self.spec.entities[cname].label} answers it")
        return out

    def _latest_ref(self, cname: str, fname: str, g: str) -> Any:
        c = self.spec.entities[cname]
        f, h = c.fields[fname], c.fields[g]
        p, target = self.spec.entities[f.ref or ""], self.spec.entities[h.ref or ""]

        def reached(world: World, child: dict[str, Any]) -> dict[str, Any] | None:
            if child[h.column] is None:
                return None
            found = rows(world, f'SELECT * FROM "{target.table}" WHERE "{self.spec.ref_column(h)}" = ?', child[h.column])
            return dict(found[0]) if found and _title(target, found[0]) else None

        def build(world: World, rng: random.Random) -> TaskDraft:
            child, parent = _spread(world, rng, self._answerable(world, cname, fname, lambda ch: reached(world, ch)), f"{p.label} with {c.plural}")
            end = reached(world, child)
            assert end is not None
            value = _title(target, end) or ""
            answer = target.label.replace(" ", "_") if target.label.replace(" ", "_") != cname else f"{target.label}_name".replace(" ", "_")
            relation = self.words(cname, g).removesuffix(" ID").removesuffix(" id")
            prompt = compose(self.wordings, rng.choice(_OPENERS),
                             f"which {target.label} is the {relation} of the latest {c.label} of the {p.label} {{record}}?",
                             {"record": _quoted(p, _title(p, parent) or "")}, f"Reply with submit_answer, giving its name as values.{answer}.")
            order = order_field(c) or ""
            rubric = [read_gate(self.gen, cname, self.key(cname, child), [g, order], f"saw the latest {c.label}'s {relation}"),
                      read_gate(self.gen, h.ref or "", self.key(h.ref or "", end), target.title or [target.natural_key or ""], f"read the {target.label}"),
                      AnswerCheck(name=f"answer names the {target.label}", field=f"values.{answer}", expect=text(value), weight=3, gate=True)]
            oracle = [*self.latest_finds(cname, fname, parent), call(f"get_{h.ref}", **{target.key or "": self.key(h.ref or "", end)}),
                      answer_call(f"It is {value}.", **{answer: value})]
            return TaskDraft(prompt=prompt, oracle=self._fit(world, oracle, rubric), outcome=completed(), rubric=rubric,
                             negatives=[negative("unread", "answers without reading", answer_call("Not sure.", **{answer: "unknown"}))],
                             metadata={"parent": str(self.key(f.ref or "", parent)), "child": str(self.key(cname, child))})

        build.__name__ = "latest_ref"
        return build

    def _latest_detail(self, cname: str, fname: str, detail: str) -> Any:
        c = self.spec.entities[cname]
        f, d = c.fields[fname], c.fields[detail]
        p = self.spec.entities[f.ref or ""]

        def build(world: World, rng: random.Random) -> TaskDraft:
            child, parent = _spread(world, rng, self._answerable(world, cname, fname, lambda ch: self.shown(cname, detail, ch)),
                                    f"{p.label} with {c.plural}")
            value = self.shown(cname, detail, child) or ""
            if d.kind in ("money", "integer", "decimal"):
                expect = number(value)
            elif d.kind == "date":
                value, expect = _moment(value)
            else:
                expect = text(value)
            words = self.words(cname, detail)
            prompt = compose(self.wordings, rng.choice(_OPENERS), f"what is the {words} of the latest {c.label} of the {p.label} {{record}}?",
                             {"record": _quoted(p, _title(p, parent) or "")}, f"Reply with submit_answer, giving it as values.{detail}.")
            order = order_field(c) or ""
            rubric = [read_gate(self.gen, cname, self.key(cname, child), [detail, order], f"saw the latest {c.label}'s {words}"),
                      AnswerCheck(name=f"answer gives the {words}", field=f"values.{detail}", expect=expect, weight=3, gate=True)]
            oracle = [*self.latest_finds(cname, fname, parent), answer_call(f"It is {value}.", **{detail: value})]
            return TaskDraft(prompt=prompt, oracle=self._fit(world, oracle, rubric), outcome=completed(), rubric=rubric,
                             negatives=[negative("unread", "answers without reading", answer_call("Not sure.", **{detail: "0"}))],
                             metadata={"parent": str(self.key(f.ref or "", parent)), "child": str(self.key(cname, child))})

        build.__name__ = "latest_detail"
        return build

    def _fit(self, world: World, oracle: list[Any], rubric: list[Any]) -> list[Any]:
        from toolgym.new.oracle_reads import fit_reads

        return fit_reads(self.gen, world, oracle, rubric, None)

