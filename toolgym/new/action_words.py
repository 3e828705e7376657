"""How an action template's request reads, and what shows it done.

:class:`ActionWords` words a request the way a colleague writes it (a template the same for every seed, the seed's
facts filled in: "please exchange the order items “Laptop” for the variant with colour: black of the order #W2378156")
and lists the end state of the completed case: the row changed as asked, each chosen child changed or exchanged, the
others untouched, money where it went in exact minor units.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fixtures.world import World
from graders.criteria import state
from graders.setup import rows
from toolgym.new.chains import ChainDeriver
from toolgym.new.templates import _label, _quoted, _title

if TYPE_CHECKING:
    from toolgym.new.spec import ActionSpec

__all__ = ["ActionWords"]


class ActionWords(ChainDeriver):
    """Requests in words and completed end states of action templates (module docstring)."""

    def _request(self, action: ActionSpec, desc: str, args: dict[str, Any], world: World) -> tuple[str, dict[str, str]]:
        """The request as a colleague words it, as a template (the same for every seed) and the seed's facts."""
        e = self.spec.entities[action.entity]
        verb = action.name.split("_")[0]
        refund = ""
        facts: dict[str, str] = {"subject": desc}
        if action.refund is not None:
            to = self.spec.entities[action.refund.to]
            refund, facts["target"] = f", refunded to the {to.label} {{target}}", str(args[f"{action.refund.to}_id"])
        if action.kind == "children":
            facts["items"] = self._wording(action, args, world).removeprefix(": ")
            return f"please {verb} the {_label(e.plural)} {{items}} of {{subject}}{refund}", facts
        if action.kind == "transition":
            extra = ", ".join(f"{self.words(action.entity, n)}: {args[n]}" for n in action.fields if n in args)
            if extra:
                facts["details"] = f" ({extra})"
            verbed = action.name.removesuffix(f"_{action.entity}").replace("_", " ")
            return f"please {verbed} {{subject}}{'{details}' if extra else ''}{refund}", facts
        if action.kind == "update":
            changes = [f"the {self.words(action.entity, n)} to {v}" + (f" {self.spec.currency}" if e.fields[n].kind == "money" else "")
                       for n, v in args.items()]
            return "please set {changes} for {subject}", {"changes": " and ".join(changes), "subject": desc}
        article = "an" if e.label[:1] in "aeiou" else "a"
        return f"please add {article} {e.label} to {{subject}}{{details}}", {"subject": desc, "details": self._wording(action, args, world)}

    def _wording(self, action: ActionSpec, args: dict[str, Any], world: World) -> str:
        e = self.spec.entities[action.entity]
        if action.kind == "children":
            keycol = e.fields[e.key or ""].column
            names = [_quoted(e, _title(e, rows(world, f'SELECT * FROM "{e.table}" WHERE "{keycol}" = ?', k)[0]) or "") for k in args[f"{e.key}s"]]
            if action.replace:  # "“Laptop” for the one with colour: black, storage: 1TB"
                f = e.fields[action.replace]
                names = [f"{name} for {self.describe_sibling(world, f, new)}" for name, new in zip(names, args[f"new_{action.replace}s"], strict=True)]
                return ": " + "; and ".join(names)
            return ": " + (" and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else names[0])
        parts = []
        for n, v in args.items():
            if n not in e.fields:
                continue
            f = e.fields[n]
            if f.kind == "ref":
                target = self.spec.entities[f.ref or ""]
                found = rows(world, f'SELECT * FROM "{target.table}" WHERE "{target.fields[target.key or ""].column}" = ?', v)
                title = _title(target, found[0]) if found and (target.title or target.natural_key) else None
                parts.append(f"{target.label} {_quoted(target, title)}" if title else f"{self.words(action.entity, n)} {v}")
                continue
            unit = f" {self.spec.currency}" if f.kind == "money" else ""
            parts.append(f"{self.words(action.entity, n)} {v}{unit}")
        return ": " + ", ".join(parts) if parts else ""

    def describe_sibling(self, world: World, f: Any, value: Any) -> str:
        """How a person names the row an exchange gives: its title, else what sets it apart from its siblings (the
        options of a variant: ``colour: black, storage: 1TB``)."""
        target = self.spec.entities[f.ref or ""]
        found = rows(world, f'SELECT * FROM "{target.table}" WHERE "{self.spec.ref_column(f)}" = ?', value)
        row = dict(found[0]) if found else {}
        title = _title(target, row) if row else None
        if title:
            return f"the {target.label} {_quoted(target, title)}"
        for n, g in target.fields.items():
            if g.kind in ("text", "freetext") and g.visible and row.get(g.column):
                return f"the {target.label} with {_spoken(str(row[g.column]))}"
        return f"the {target.label} {value}"

    def _done(self, action: ActionSpec, world: World, row: dict[str, Any], args: dict[str, Any]) -> list[Any]:
        """The end state of the completed case: the row (or each chosen child) changed as asked, money where it went."""
        e = self.spec.entities[action.entity]
        subject = self.spec.subject(action)
        se = self.spec.entities[subject]
        where_key = f'"{se.fields[se.key or ""].column}" = ?'
        out: list[Any] = []
        if action.kind == "transition":
            f = e.fields[action.field or ""]
            out.append(state(f'SELECT "{f.column}" FROM "{e.table}" WHERE {where_key}', self.key(subject, row), expect=action.to, weight=3,
                             gate=True, name=f"{e.label} set to {action.to}"))
            out += [state(f'SELECT "{e.fields[n].column}" FROM "{e.table}" WHERE {where_key}', self.key(subject, row),
                          expect=self.gen.stored(e, n, args[n]), weight=1, gate=True, name=f"{_label(n)} recorded") for n in action.fields if n in args]
        elif action.kind == "update":
            out += [state(f'SELECT "{e.fields[n].column}" FROM "{e.table}" WHERE {where_key}', self.key(subject, row),
                          expect=self.gen.stored(e, n, v), weight=3, gate=True, name=f"{_label(n)} changed") for n, v in args.items()]
        elif action.kind == "children":
            keycol = e.fields[e.key or ""].column
            for k in args[f"{e.key}s"]:
                out += [state(f'SELECT "{e.fields[n].column}" FROM "{e.table}" WHERE "{keycol}" = ?', k, expect=v, weight=2, gate=True,
                              name=f"{e.label} {k} set to {v}") for n, v in action.set.items()]
            if action.replace:  # each chosen child now refers to the row it was exchanged for
                f = e.fields[action.replace]
                out += [state(f'SELECT "{f.column}" FROM "{e.table}" WHERE "{keycol}" = ?', k, expect=new, weight=2, gate=True,
                              name=f"{e.label} {k} exchanged") for k, new in zip(args[f"{e.key}s"], args[f"new_{action.replace}s"], strict=True)]
            out += [state(f'SELECT "{se.fields[n].column}" FROM "{se.table}" WHERE {where_key}', self.key(subject, row), expect=v, weight=1,
                          gate=True, name=f"{se.label} set to {v}") for n, v in action.parent_set.items()]
            chosen = ", ".join("?" for _ in args[f"{e.key}s"])
            if action.set:
                out.append(state(f'SELECT count(*) FROM "{e.table}" WHERE "{e.fields[action.parent or ""].column}" = ? AND "{keycol}" NOT IN ({chosen}) AND ('
                             + " OR ".join(f'"{e.fields[n].column}" IS NOT ?' for n in action.set) + ")", self.key(subject, row),
                             *args[f"{e.key}s"], *action.set.values(), expect=rows(world, f'SELECT count(*) AS n FROM "{e.table}" WHERE "{e.fields[action.parent or ""].column}" = ? AND "{keycol}" NOT IN ({chosen}) AND ('
                             + " OR ".join(f'"{e.fields[n].column}" IS NOT ?' for n in action.set) + ")", self.key(subject, row),
                             *args[f"{e.key}s"], *action.set.values())[0]["n"], weight=1, gate=True, name=f"the other {_label(e.plural)} unchanged"))
        else:
            link = e.fields[action.parent or ""]
            where = [f'"{link.column}" = ?'] + [f'"{e.fields[n].column}" = ?' for n in args if n in e.fields]
            params = [self.key(subject, row), *[self.gen.stored(e, n, v) for n, v in args.items() if n in e.fields]]
            before = world.query(f'SELECT count(*) AS n FROM "{e.table}" WHERE ' + " AND ".join(where), tuple(params))[0]["n"]
            out.append(state(f'SELECT count(*) FROM "{e.table}" WHERE ' + " AND ".join(where), *params, expect=before + 1, weight=3, gate=True,
                             name=f"{e.label} created"))
        if action.refund is not None:
            out += self._refund_done(action, world, row, args)
        return out

    def _refund_done(self, action: ActionSpec, world: World, row: dict[str, Any], args: dict[str, Any]) -> list[Any]:
        r = action.refund
        assert r is not None
        subject = self.spec.subject(action)
        e = self.spec.entities[action.entity]
        if action.kind == "children":
            keycol = e.fields[e.key or ""].column
            minor = sum(int(rows(world, f'SELECT "{e.fields[r.amount].column}" AS m FROM "{e.table}" WHERE "{keycol}" = ?', k)[0]["m"] or 0)
                        for k in args[f"{e.key}s"])
        else:
            plural, _, fname = r.amount.partition(".")
            ce = next(x for x in self.spec.entities.values() if x.plural == plural)
            link = next(g for g in ce.fields.values() if g.kind == "ref" and g.ref == subject)
            minor = int(rows(world, f'SELECT coalesce(sum("{ce.fields[fname].column}"), 0) AS s FROM "{ce.table}" WHERE "{link.column}" = ?',
                             self.key(subject, row))[0]["s"])
        to = self.spec.entities[r.to]
        tkey = args[f"{r.to}_id"]
        out: list[Any] = []
        if r.balance is not None:
            col = to.fields[r.balance].column
            before = rows(world, f'SELECT "{col}" AS b FROM "{to.table}" WHERE "{to.fields[to.key or ""].column}" = ?', tkey)[0]["b"]
            if before is not None:
                out.append(state(f'SELECT "{col}" FROM "{to.table}" WHERE "{to.fields[to.key or ""].column}" = ?', tkey, expect=int(before) + minor,
                                 weight=2, gate=True, name=f"{self.gen.money_text(to.fields[r.balance], minor)} credited to the {to.label}"))
        if r.record is not None:
            rec = self.spec.entities[r.record]
            back = next(g for g in rec.fields.values() if g.kind == "ref" and g.ref == subject)
            fwd = next(g for g in rec.fields.values() if g.kind == "ref" and g.ref == r.to)
            money = next(g for g in rec.fields.values() if g.kind == "money")
            sql = f'SELECT count(*) FROM "{rec.table}" WHERE "{back.column}" = ? AND "{fwd.column}" = ? AND "{money.column}" = ?'
            params = [self.key(subject, row), tkey, minor]
            before = world.query(sql.replace("count(*)", "count(*) AS n"), tuple(params))[0]["n"]
            out.append(state(sql, *params, expect=before + 1, weight=2, gate=True, name=f"the refund of {self.gen.money_text(money, minor)} recorded"))
        return out


def _spoken(text: str) -> str:
    """A JSON object of options as a person says it (``{"color": "black"}`` → ``color: black``); other text as it is."""
    import json

    try:
        data = json.loads(text)
    except ValueError:
        return text
    if isinstance(data, dict) and data:
        return ", ".join(f"{k}: {v}" for k, v in data.items())
    return text
