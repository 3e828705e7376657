"""Aggregate templates of a generated environment: a count, a total, the latest or the largest over a named row's children.

"How many invoices does the customer “Luís Gonçalves” have?", "what is the total amount of the payments of order
#W2378156?", "what is the time hour of the latest flight to “Chicago Ohare Intl”?". A count is the search page's
``total`` and a sum its ``sums`` (over every page: thousands of children are one call); the latest or largest child
is first in a search sorted by that field. Gates name the rows counted (or, over more rows than a person pages
through, the figure the search showed). Totals of a catalogue's prices (the variants of a product) and the largest
of a price copied from a catalogue (an order item's) are never asked; of those that build, at most six aggregates
over one child entity and six about one parent entity are kept.
"""

from __future__ import annotations

import random
from dataclasses import replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from fixtures.errors import TaskError
from fixtures.world import World
from graders.criteria import AnswerCheck, Seen, number
from graders.outcome import completed
from graders.setup import rows
from graders.tasks import TaskDraft, TaskTemplate, answer_call, call, negative
from toolgym.new.gates import PAGEABLE, figure_gate, row_fact
from toolgym.new.reword import compose
from toolgym.new.templates import (
    _OPENERS,
    LOOKUP_ONE_SIDED,
    Deriver,
    _label,
    _moment,
    _order,
    _quoted,
    _spread,
    _stream,
    _title,
)

if TYPE_CHECKING:
    from toolgym.new.spec import EntitySpec

__all__ = ["AggregateDeriver"]


class AggregateDeriver(Deriver):
    """The read templates plus aggregates over children (module docstring)."""

    def aggregates(self) -> list[TaskTemplate]:
        """Counts, totals, latest and largest over a named row's children; of those that can be built, at most six
        over one child entity and six about one parent entity are kept (toolgym.new.build: a ``cap:`` tag)."""
        from toolgym.new.chains import CAP_TAG

        out = []
        for t in self._aggregates():
            child, parent = t.tags[-1].split(">")
            out.append(replace(t, tags=[*t.tags[:-1], f"{CAP_TAG}{child}:6", f"{CAP_TAG}questions about a {parent}:6"]))
        return out

    def _aggregates(self) -> list[TaskTemplate]:
        out = []
        for cname, c in self.spec.entities.items():
            for fname, f in c.fields.items():
                pname = f.ref or ""
                if f.kind != "ref" or not f.visible or pname == cname:
                    continue
                p = self.spec.entities[pname]
                if p.key is None or not (p.title or p.natural_key):
                    continue
                cats = [n for n, g in c.fields.items() if g.kind == "category" and g.values and g.visible]
                dates = [n for n, g in c.fields.items() if g.kind == "date" and g.visible][:1]
                monies = [n for n, g in c.fields.items() if g.kind == "money" and g.visible]
                tools = [f"search_{p.plural}", f"search_{c.plural}", "submit_answer"]
                base = f"{cname}_of_{pname}" if fname.removesuffix("_id") == pname else f"{cname}_by_{fname.removesuffix('_id')}"
                out.append(TaskTemplate(self._aggregate(cname, fname, None, cats + dates), id=f"count_{base}"[:80], category="aggregate",
                                        tags=["aggregate", "generated", f"{c.plural} over>{p.label}"], tools=tools, one_sided=LOOKUP_ONE_SIDED,
                                        description=f"How many {c.plural} a {p.label} has (with a filter on some seeds)"))
                for d in dates:
                    out.append(TaskTemplate(self._extreme(cname, fname, d), id=f"latest_{base}"[:80], category="aggregate",
                                            tags=["aggregate", "generated", f"{c.plural} over>{p.label}"], tools=tools, one_sided=LOOKUP_ONE_SIDED,
                                            description=f"The {self.words(cname, d)} of a {p.label}'s latest {c.label}"))
                refs = [g for n, g in c.fields.items() if g.kind == "ref" and g.visible and n != fname]
                for m in monies[:1]:
                    copied = any(m in self.spec.entities[g.ref or ""].fields for g in refs)  # an item's price is its variant's
                    referenced = any(g.kind == "ref" and g.ref == cname for e in self.spec.entities.values() for g in e.fields.values())
                    # a catalogue's rows (variants of a product, tracks of a genre: rows others refer to, undated) have prices
                    # that add up to nothing a person asks; lines, payments and invoices do
                    catalogue = not dates and not self._ordered(c) and (not refs or referenced)
                    if not copied:
                        out.append(TaskTemplate(self._extreme(cname, fname, m), id=f"largest_{m}_{base}"[:80], category="aggregate",
                                                tags=["aggregate", "money", "generated", f"{c.plural} over>{p.label}"], tools=tools, one_sided=LOOKUP_ONE_SIDED,
                                                description=f"The largest {_label(m)} among a {p.label}'s {c.plural}"))
                    if catalogue:
                        continue
                    out.append(TaskTemplate(self._aggregate(cname, fname, m, cats + dates), id=f"total_{m}_{base}"[:80], category="aggregate",
                                            tags=["aggregate", "money", "generated", f"{c.plural} over>{p.label}"], tools=tools, one_sided=LOOKUP_ONE_SIDED,
                                            description=f"The total {_label(m)} of a {p.label}'s {c.plural}", difficulty="hard"))
        return out

    def _ordered(self, entity: EntitySpec) -> bool:
        """Whether rows of ``entity`` happen in time (a date, or a year column): events, not a catalogue."""
        from toolgym.new.chains import order_field

        return order_field(entity) is not None

    def _aggregate(self, cname: str, fname: str, money: str | None, filters: list[str]) -> Any:
        c = self.spec.entities[cname]
        link = c.fields[fname]
        pname = link.ref or ""
        p = self.spec.entities[pname]

        def build(world: World, rng: random.Random) -> TaskDraft:
            named = self.named_rows(world, pname)
            wanted = {self.held(link, r) for r in named}
            counts = self.memo(world, ("counts", cname, fname), lambda: {r["k"]: r["n"] for r in _stream(
                world, f'SELECT "{link.column}" AS k, count(*) AS n FROM "{c.table}" GROUP BY 1') if r["k"] in wanted})
            # a count is the page's `total` and a sum its `sums`, over every page: thousands of children are one call
            parents = [r for r in named if 2 <= counts.get(self.held(link, r), 0)]
            if len(parents) < 20:
                raise TaskError(f"fewer than 20 named {p.plural} with {c.plural}")
            if money is None:
                # seeds cycle through the counts the data shows, so no count is the usual answer a policy memorises
                by_size: dict[int, list[Any]] = {}
                for r in parents:
                    by_size.setdefault(counts[self.held(link, r)], []).append(r)
                if len(by_size) < 2:
                    raise TaskError(f"the named {p.plural} have {' or '.join(map(str, sorted(by_size)))} {c.plural} each: "
                                    "one count for all, an answer a policy memorises")
                sizes = sorted(by_size)
                parents = by_size[sizes[_order(world, rng, len(sizes))[0]]]
            parent = _spread(world, rng, parents, f"{p.label} with {c.plural}")
            pkey = self.held(link, parent)
            keycol = c.fields[c.key or ""].column
            cols = ", ".join(f'"{c.fields[n].column}"' for n in dict.fromkeys([*filters, *([money] if money else [])]))
            children = rows(world, f'SELECT "{keycol}" AS "toolgym_key"{", " + cols if cols else ""} FROM "{c.table}" '
                                   f'WHERE "{link.column}" = ? ORDER BY rowid', pkey)
            args: dict[str, Any] = {fname: pkey}
            used: list[str] = []
            phrase = ""
            usable = [f for f in filters if any(ch[c.fields[f].column] for ch in children)]
            if usable and rng.random() < 0.6:
                f = rng.choice(usable)
                g = c.fields[f]
                used.append(f)
                if g.kind == "category":
                    value = str(rng.choice([ch[g.column] for ch in children if ch[g.column] is not None]))
                    args[f] = value
                    phrase = f" whose {self.words(cname, f)} is {value}"
                    children = [ch for ch in children if str(ch[g.column]) == value]
                else:
                    year = str(rng.choice([ch[g.column] for ch in children if ch[g.column]]))[:4]
                    args[f"{f}_from"], args[f"{f}_to"] = f"{year}-01-01", f"{year}-12-31"
                    phrase = f" with a {self.words(cname, f)} in {year}"
                    children = [ch for ch in children if str(ch[g.column] or "")[:4] == year]
            title = _quoted(p, _title(p, parent) or "")
            pages = [call(f"search_{c.plural}", **args, limit=50)]
            if PAGEABLE >= len(children) > 50:  # every counted row is read: the second page too (over PAGEABLE, `total` and `sums` say it)
                pages.append(call(f"search_{c.plural}", **args, limit=50, offset=50))
            keys = [ch["toolgym_key"] for ch in children]
            whole = not used and money is None

            def gate(figure: tuple[str, Any]) -> Any:
                return figure_gate(self.gen, cname, fname, self.key(pname, parent), pname, keys, used,
                                   args, f"saw the {p.label}'s {_label(c.plural)}", figure=figure, whole=whole)

            if money is None:
                n = str(len(children))
                prompt = compose(self.wordings, rng.choice(_OPENERS), f"how many {_label(c.plural)}{{filter}} does the {p.label} {{record}} have?",
                                 {"filter": phrase, "record": title}, "Reply with submit_answer, giving the number as values.count.")
                return TaskDraft(prompt=prompt, oracle=[*self.find(pname, parent), *pages, answer_call(f"{n}.", count=n)],
                                 outcome=completed(),
                                 rubric=[gate(("total", len(children))),
                                         AnswerCheck(name="answer gives the count", field="values.count", expect=number(n), weight=3, gate=True)],
                                 negatives=[negative("unread", "answers without counting", answer_call("Some.", count="1"))])
            m = c.fields[money]
            minor = sum(int(ch[m.column] or 0) for ch in children)
            total = str(Decimal(minor).scaleb(-m.scale).quantize(Decimal(1).scaleb(-m.scale)))
            prompt = compose(self.wordings, rng.choice(_OPENERS),
                             f"what is the total {self.words(cname, money)} of the {_label(c.plural)}{{filter}} of the {p.label} {{record}}?",
                             {"filter": phrase, "record": title}, "Reply with submit_answer, giving it as values.total.")
            return TaskDraft(prompt=prompt, oracle=[*self.find(pname, parent), *pages, answer_call(f"{total}.", total=total)],
                             outcome=completed(),
                             rubric=[gate((f"sums.{money}", total)),
                                     AnswerCheck(name="answer gives the total", field="values.total", expect=number(total), weight=3, gate=True)],
                             negatives=[negative("unread", "answers without adding up", answer_call("Zero.", total="0.00"))])

        build.__name__ = "aggregate"
        return build

    def _extreme(self, cname: str, fname: str, field: str) -> Any:
        """The largest value of ``field`` (a date: the latest; money: the largest) among a named row's children."""
        c = self.spec.entities[cname]
        link = c.fields[fname]
        pname = link.ref or ""
        p = self.spec.entities[pname]
        g = c.fields[field]

        def build(world: World, rng: random.Random) -> TaskDraft:
            named = self.named_rows(world, pname)
            wanted = {self.held(link, r) for r in named}
            stats = self.memo(world, ("extreme", cname, fname, field), lambda: {r["k"]: (r["n"], r["d"]) for r in _stream(
                world, f'SELECT "{link.column}" AS k, count(*) AS n, count(DISTINCT "{g.column}") AS d '
                       f'FROM "{c.table}" WHERE "{g.column}" IS NOT NULL GROUP BY 1') if r["k"] in wanted})
            # the children sorted by the field, largest or latest first: the top one is on the first page however many
            parents = [r for r in named if (st := stats.get(self.held(link, r))) and 2 <= st[0] and st[1] >= 2]
            if len(parents) < 20:
                raise TaskError(f"fewer than 20 named {p.plural} with {c.plural} to compare")
            parent = _spread(world, rng, parents, f"{p.label} with {c.plural}")
            held = self.held(link, parent)
            top = rows(world, f'SELECT max("{g.column}") AS m FROM "{c.table}" WHERE "{link.column}" = ?', held)[0]["m"]
            keycol = c.fields[c.key or ""].column
            holders = [r["k"] for r in rows(world, f'SELECT "{keycol}" AS k FROM "{c.table}" WHERE "{link.column}" = ? AND "{g.column}" = ? '
                                                   f'ORDER BY "{keycol}" LIMIT 20', held, top)]
            title = _quoted(p, _title(p, parent) or "")
            sort = {fname: held, "sort": field, "descending": True}
            # the value comes from a row that holds it (whatever showed it: the sorted search, the row itself)
            gate = Seen(name=f"saw the {p.label}'s {c.label} with the {'largest' if g.kind == 'money' else 'latest'} {self.words(cname, field)}",
                        any_of=[row_fact(self.gen, cname, k, [field]) for k in holders], gate=True, weight=2)
            if g.kind == "money":
                value = str(Decimal(int(top)).scaleb(-g.scale).quantize(Decimal(1).scaleb(-g.scale)))
                ask, expect = f"what is the largest {self.words(cname, field)} among the {_label(c.plural)} of the {p.label} {{record}}?", number(value)
            else:
                value, expect = _moment(str(top))
                ask = f"what is the {self.words(cname, field)} of the latest {c.label} of the {p.label} {{record}}?"
            prompt = compose(self.wordings, rng.choice(_OPENERS), ask, {"record": title}, f"Reply with submit_answer, giving it as values.{field}.")
            return TaskDraft(prompt=prompt,
                             oracle=[*self.find(pname, parent), call(f"search_{c.plural}", **sort, limit=50),
                                     answer_call(f"{value}.", **{field: value})],
                             outcome=completed(),
                             rubric=[gate, AnswerCheck(name=f"answer gives the {self.words(cname, field)}", field=f"values.{field}", expect=expect,
                                                       weight=3, gate=True)],
                             negatives=[negative("unread", "answers without listing", answer_call("Not sure.", **{field: "0"}))])

        build.__name__ = "extreme"
        return build
