"""Setting up an action template's instance: the arguments a request carries, the world that makes its case hold,
how a colleague words it, and the end state that shows it done.

Arguments are drawn as a person would ask: numbers near the row's own and within the range the column shows, text a
column already holds, a row of the person's own (a payment method) for a refund, children of the row named by their
titles. :meth:`ActionSetup.settle` then makes exactly the drawn case hold — every rule, or all but one — by moving an
argument across its bound, choosing another argument value or refund target, or planting a value the column already
holds on the row or on one chosen child.
"""

from __future__ import annotations

import random
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from fixtures.world import World
from graders.setup import pick, rows
from toolgym.new.action_words import ActionWords
from toolgym.new.rules import Row, compare_bound, evaluate
from toolgym.new.templates import _title

if TYPE_CHECKING:
    from toolgym.new.spec import ActionSpec

__all__ = ["ActionSetup", "fresh"]

_REASONS = ("changed my mind", "found it cheaper elsewhere", "it arrived too late", "no reason given")
"""Reasons people give that a rule listing its accepted reasons may not accept."""


class ActionSetup(ActionWords):
    """Arguments, case set-up, wording and end state of action templates (see the module docstring)."""

    def children_of(self, action: ActionSpec, world: World, row: dict[str, Any]) -> list[dict[str, Any]]:
        """The row's children an action may choose, each named by a title no sibling shares."""
        e = self.spec.entities[action.entity]
        subject = self.spec.subject(action)
        kids = rows(world, f'SELECT * FROM "{e.table}" WHERE "{e.fields[action.parent or ""].column}" = ? ORDER BY "{e.fields[e.key or ""].column}"',
                    self.key(subject, row))
        titles = [(_title(e, k) or "").casefold() for k in kids]
        return [dict(k) for k, t in zip(kids, titles, strict=True) if t and titles.count(t) == 1]

    def refund_targets(self, action: ActionSpec, world: World, subject: str, row: dict[str, Any]) -> list[dict[str, Any]]:
        """Rows a refund of this row may go to: those of the same person (their payment methods), else those the row's
        children refer to."""
        assert action.refund is not None
        to = self.spec.entities[action.refund.to]
        owner = self._owner(world, subject, row) if self.spec.verify is not None else None
        if owner is not None:
            link = next((f for f in to.fields.values() if f.kind == "ref" and f.ref == self.spec.verify.entity), None)  # type: ignore[union-attr]
            if link is not None:
                return [dict(r) for r in rows(world, f'SELECT * FROM "{to.table}" WHERE "{link.column}" = ? ORDER BY 1',
                                              self.key(self.spec.verify.entity, owner))]  # type: ignore[union-attr]
        found = []
        for ce in self.spec.entities.values():
            back = next((f for f in ce.fields.values() if f.kind == "ref" and f.ref == subject), None)
            fwd = next((f for f in ce.fields.values() if f.kind == "ref" and f.ref == action.refund.to), None)
            if back and fwd:
                found += [dict(r) for r in rows(world, f'SELECT t.* FROM "{to.table}" t JOIN "{ce.table}" c ON c."{fwd.column}" = '
                                                       f't."{to.fields[to.key or ""].column}" WHERE c."{back.column}" = ?', self.key(subject, row))]
        return found

    def _arguments(self, action: ActionSpec, world: World, rng: random.Random, row: dict[str, Any]) -> dict[str, Any] | None:
        e = self.spec.entities[action.entity]
        subject = self.spec.subject(action)
        args: dict[str, Any] = {}
        if action.kind == "children":
            kids = self.children_of(action, world, row)
            if not kids:
                return None
            chosen = sorted(rng.sample(kids, k=rng.randint(1, min(3, len(kids)))), key=lambda k: str(self.key(action.entity, k)))
            args[f"{e.key}s"] = [self.key(action.entity, k) for k in chosen]
            if action.replace:  # each chosen child exchanged for a sibling of what it refers to (another variant of its product)
                news = []
                for kid in chosen:
                    options = self.replacement_options(action, world, kid)
                    if not options:
                        return None
                    news.append(self.held(e.fields[action.replace], rng.choice(options)))
                args[f"new_{action.replace}s"] = news
        names = [n for n in action.fields if n != action.parent]
        want = len(names)
        if action.kind == "update":
            names, want = rng.sample(names, k=len(names)), min(len(names), rng.randint(1, 2))
        for n in names:
            if len([a for a in args if a in e.fields]) >= want:
                break
            value = self._draw(action, world, rng, row, n)
            if value is None and action.kind != "update":
                return None
            if value is not None:
                args[n] = value
        if not any(a in e.fields for a in args) and names:
            return None
        if action.refund is not None:
            targets = self.refund_targets(action, world, subject, row)
            if not targets:
                return None
            args[f"{action.refund.to}_id"] = self.key(action.refund.to, rng.choice(targets))
        if action.kind == "update" and all(row.get(e.fields[n].column) == self.gen.stored(e, n, v) for n, v in args.items()):
            return None  # the row already holds every drawn value: the tool would refuse no_change, not the task's case
        return args

    def _draw(self, action: ActionSpec, world: World, rng: random.Random, row: dict[str, Any], n: str) -> Any:
        """A value a person would ask for: near the row's own and within the column's range for numbers, a value the
        column holds elsewhere for plain text, a fresh one for contact details."""
        e = self.spec.entities[action.entity]
        f = e.fields[n]
        current = row.get(f.column) if action.kind == "update" else None
        if f.kind == "ref":
            target = self.spec.entities[f.ref or ""]
            named = self.named_rows(world, f.ref or "")
            if named:
                return self.key(f.ref or "", pick(rng, named, target.label))
            keys = rows(world, f'SELECT "{target.fields[target.key or ""].column}" AS k FROM "{target.table}" ORDER BY 1 LIMIT 500')
            return pick(rng, keys, target.label)["k"] if keys else None
        if f.kind in ("money", "integer"):
            bounds = rows(world, f'SELECT min("{f.column}") AS lo, max("{f.column}") AS hi FROM "{e.table}"')[0]
            lo, hi = bounds["lo"], bounds["hi"]
            if lo is None:
                return None
            base = int(current) if current is not None else int(rows(world, f'SELECT "{f.column}" AS v FROM "{e.table}" WHERE "{f.column}" '
                                                                             "IS NOT NULL ORDER BY random() LIMIT 1")[0]["v"])
            spread = max(1, abs(base) // 4)
            floor = int(lo) if int(lo) < 0 else max(int(lo), 1)  # below zero only where the data goes there (an altitude)
            value = min(max(base + rng.randint(-spread, spread), floor), int(hi))
            if current is not None and value == int(current):  # a change, near the row's own: below it when the data has no room above
                value = base + rng.randint(1, spread) if base + spread <= int(hi) else max(1, base - rng.randint(1, spread))
            if f.kind == "money":
                return str(Decimal(value).scaleb(-f.scale).quantize(Decimal(1).scaleb(-f.scale)))
            return value
        if f.kind == "category" and f.values:
            return rng.choice(f.values)
        if f.kind == "date":
            return world.clock.today.isoformat()
        listed = self._listed(action, n)
        if listed:
            return rng.choice(listed)
        if any(w in n for w in ("mail", "phone", "fax", "postal", "zip", "postcode", "address")) or "reason" in n:
            return fresh(n, rng) if "reason" not in n else rng.choice(_REASONS)
        held = rows(world, f'SELECT DISTINCT "{f.column}" AS v FROM "{e.table}" WHERE "{f.column}" IS NOT NULL AND "{f.column}" != ? '
                           "ORDER BY 1 LIMIT 200", "" if current is None else current)
        return str(rng.choice(held)["v"]) if held else None  # nothing else on record: no value a person would ask for

    def _listed(self, action: ActionSpec, n: str) -> list[str]:
        """Text values a rule of the action lists for argument ``n`` (``reason in ['no longer needed', ...]``)."""
        import ast

        out: list[str] = []
        for _, tree in self.gen.rules[action.name]:
            for node in ast.walk(tree):
                if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == n:
                    for comp in node.comparators:
                        items = comp.elts if isinstance(comp, (ast.List, ast.Tuple)) else [comp]
                        out += [i.value if isinstance(i, ast.Constant) else i.id for i in items
                                if isinstance(i, ast.Constant) and isinstance(i.value, str) or isinstance(i, ast.Name)]
        return out

    def _scope(self, action: ActionSpec, world: World, subject: str, row: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
        e = self.spec.entities[action.entity]
        scope: dict[str, Any] = {"today": world.clock.today.isoformat(), subject: Row(self.spec, subject, row, world)}
        for n, v in args.items():
            if n in e.fields:
                scope[n] = Decimal(v) if e.fields[n].kind == "money" else v
        if action.refund is not None:
            to = action.refund.to
            scope[f"{to}_id"] = args[f"{to}_id"]
            target = rows(world, f'SELECT * FROM "{self.spec.entities[to].table}" WHERE "{self.spec.entities[to].fields[self.spec.entities[to].key or ""].column}" = ?',
                          args[f"{to}_id"])
            scope[to] = Row(self.spec, to, dict(target[0]), world) if target else None
        return scope

    def _holds(self, action: ActionSpec, world: World, subject: str, row: dict[str, Any], kids: list[dict[str, Any]],
               args: dict[str, Any], tree: Any) -> bool:
        scope = self._scope(action, world, subject, row, args)
        if action.kind == "children":
            return all(bool(evaluate(tree, self.spec, self.child_scope(action, world, scope, k, args, i))) for i, k in enumerate(kids))
        return bool(evaluate(tree, self.spec, scope))

    def child_scope(self, action: ActionSpec, world: World, scope: dict[str, Any], kid: dict[str, Any], args: dict[str, Any],
                    index: int) -> dict[str, Any]:
        """``scope`` with chosen child ``index`` by its entity name (and, for an exchange, its new row as ``new_<entity>``)."""
        out = {**scope, action.entity: Row(self.spec, action.entity, kid, world)}
        if action.replace:
            f = self.spec.entities[action.entity].fields[action.replace]
            value = (args.get(f"new_{action.replace}s") or [None] * (index + 1))[index]
            target = f.ref or ""
            found = rows(world, f'SELECT * FROM "{self.spec.entities[target].table}" WHERE "{self.spec.ref_column(f)}" = ?', value)
            out[f"new_{target}"] = Row(self.spec, target, dict(found[0]), world) if found else None
        return out

    def replacement_options(self, action: ActionSpec, world: World, kid: dict[str, Any]) -> list[dict[str, Any]]:
        """Rows a chosen child of an exchange may get instead of the one it refers to: its siblings — rows sharing each
        of its references (the other variants of the same product) — never itself."""
        e = self.spec.entities[action.entity]
        f = e.fields[action.replace or ""]
        target = self.spec.entities[f.ref or ""]
        current = rows(world, f'SELECT * FROM "{target.table}" WHERE "{self.spec.ref_column(f)}" = ?', kid[f.column])
        if not current:
            return []
        same = [(g.column, current[0][g.column]) for g in target.fields.values() if g.kind == "ref" and current[0][g.column] is not None]
        if not same:
            return []
        where = " AND ".join(f'"{c}" = ?' for c, _ in same)
        keycol = target.fields[target.key or ""].column
        found = rows(world, f'SELECT * FROM "{target.table}" WHERE {where} AND "{keycol}" != ? ORDER BY "{keycol}" LIMIT 50',
                     *[v for _, v in same], current[0][keycol])
        return [dict(r) for r in found]
    def _settle(self, action: ActionSpec, world: World, rng: random.Random, subject: str, row: dict[str, Any],
                args: dict[str, Any], which: str, frozen: tuple[str, ...] = ()) -> bool:
        """Make the world and the arguments fit the case: every rule holds, or only rule ``which`` fails (module
        docstring); False when this row cannot (and then the world is as it was)."""
        undo: list[tuple[str, str, Any, str, Any]] = []
        try:
            done = self._settle_rules(action, world, rng, subject, row, args, which, frozen, undo)
        except BaseException:
            done = False
            raise
        finally:
            if not done:
                for table, keycol, key, column, old in reversed(undo):
                    world.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE "{keycol}" = ?', (old, key))
        return done

    def _settle_rules(self, action: ActionSpec, world: World, rng: random.Random, subject: str, row: dict[str, Any],
                      args: dict[str, Any], which: str, frozen: tuple[str, ...], undo: list[Any]) -> bool:
        se, e = self.spec.entities[subject], self.spec.entities[action.entity]
        working = dict(row)
        kids = []
        if action.kind == "children":
            keycol = e.fields[e.key or ""].column
            kids = [dict(rows(world, f'SELECT * FROM "{e.table}" WHERE "{keycol}" = ?', k)[0]) for k in args[f"{e.key}s"]]
        originals = [dict(k) for k in kids]
        for rule, tree in self.gen.rules[action.name]:
            want = rule.code != which
            if self._holds(action, world, subject, working, kids, args, tree) == want:
                continue
            fixed = self._move_argument(action, world, rng, subject, working, kids, args, tree, want)
            if not fixed and action.refund is not None and action.refund.to in rule.check:
                for target in self.refund_targets(action, world, subject, working):
                    trial = {**args, f"{action.refund.to}_id": self.key(action.refund.to, target)}
                    if self._holds(action, world, subject, working, kids, trial, tree) == want:
                        args.update(trial)
                        fixed = True
                        break
            if not fixed and action.replace and "new_" in rule.check:
                fixed = self._choose_replacements(action, world, rng, subject, working, kids, args, tree, want)
            if not fixed and action.kind == "children" and f"{action.entity}." in rule.check:
                fixed = self._plant_children(action, world, rng, subject, working, kids, args, tree, want)
            if not fixed and "values(" in rule.check:
                fixed = self._plant_child_values(action, world, rng, subject, working, kids, args, tree, want, undo)
            if not fixed:
                for fname, f in se.fields.items():
                    if f.kind in ("key", "ref", "secret") or fname in frozen or f"{subject}.{fname}" not in rule.check:
                        continue
                    for value in self._options(world, subject, fname, rng):
                        trial = {**working, f.column: value}
                        if self._holds(action, world, subject, trial, kids, args, tree) == want:
                            working, fixed = trial, True
                            break
                    if fixed:
                        break
            if not fixed:
                return False
        for rule, tree in self.gen.rules[action.name]:  # a later plant must not have undone an earlier rule
            if self._holds(action, world, subject, working, kids, args, tree) != (rule.code != which):
                return False
        if action.kind == "transition" and which == "ok" and working[e.fields[action.field or ""].column] == action.to:
            return False
        if action.kind == "children" and which == "ok" and action.set and not action.replace and all(
                all(k[e.fields[n].column] == v for n, v in action.set.items()) for k in kids):
            return False
        _write(world, se, row, working)
        for before, after in zip(originals, kids, strict=True):
            _write(world, e, before, after)
        return True

    def _plant_child_values(self, action: ActionSpec, world: World, rng: random.Random, subject: str, working: dict[str, Any],
                            kids: list[dict[str, Any]], args: dict[str, Any], tree: Any, want: bool, undo: list[Any]) -> bool:
        """A rule over the row's children's values (``'shipped' not in values(order_items.status)``): plant a value on
        one child (to break it), or give every child one value that keeps it. Written at once (the rule reads the world);
        ``undo`` takes it back if the case cannot be set up."""
        import ast

        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "values" and isinstance(node.args[0], ast.Attribute)):
                continue
            plural, fname = getattr(node.args[0].value, "id", ""), node.args[0].attr
            child = next((n for n, c in self.spec.entities.items() if c.plural == plural), None)
            if child is None or child == action.entity and action.kind == "children":
                continue
            c = self.spec.entities[child]
            link = next((g for g in c.fields.values() if g.kind == "ref" and g.ref == subject), None)
            if link is None or c.key is None or fname not in c.fields:
                continue
            keycol, column = c.fields[c.key].column, c.fields[fname].column
            found = rows(world, f'SELECT "{keycol}" AS k, "{column}" AS v FROM "{c.table}" WHERE "{link.column}" = ? ORDER BY "{keycol}"',
                         working[self.spec.ref_column(link)])
            if not found:
                continue
            targets = [r for r in found] if want else [rng.choice(found)]
            for value in self._options(world, child, fname, rng):
                for r in targets:
                    world.execute(f'UPDATE "{c.table}" SET "{column}" = ? WHERE "{keycol}" = ?', (value, r["k"]))
                if self._holds(action, world, subject, working, kids, args, tree) == want:
                    undo += [(c.table, keycol, r["k"], column, r["v"]) for r in targets]
                    return True
                for r in targets:
                    world.execute(f'UPDATE "{c.table}" SET "{column}" = ? WHERE "{keycol}" = ?', (r["v"], r["k"]))
        return False

    def _options(self, world: World, ename: str, fname: str, rng: random.Random) -> list[Any]:
        """Values to plant in a field: a category's values, else values the column already holds elsewhere."""
        e = self.spec.entities[ename]
        f = e.fields[fname]
        options = list(f.values) if f.kind == "category" and f.values else [r["v"] for r in rows(
            world, f'SELECT DISTINCT "{f.column}" AS v FROM "{e.table}" WHERE "{f.column}" IS NOT NULL ORDER BY 1 LIMIT 200')]
        rng.shuffle(options)
        return options

    def _choose_replacements(self, action: ActionSpec, world: World, rng: random.Random, subject: str, working: dict[str, Any],
                             kids: list[dict[str, Any]], args: dict[str, Any], tree: Any, want: bool) -> bool:
        """Exchange each chosen child for a row that keeps the rule (``want``), or one of them for a row that breaks it."""
        e = self.spec.entities[action.entity]
        f = e.fields[action.replace or ""]
        news = list(args[f"new_{action.replace}s"])
        scope = self._scope(action, world, subject, working, args)
        order = list(range(len(kids))) if want else [rng.randrange(len(kids))]
        for i in order:
            options = self.replacement_options(action, world, kids[i])
            rng.shuffle(options)
            for option in options:
                trial = {**args, f"new_{action.replace}s": [*news[:i], self.held(f, option), *news[i + 1:]]}
                if bool(evaluate(tree, self.spec, self.child_scope(action, world, scope, kids[i], trial, i))) == want:
                    news = trial[f"new_{action.replace}s"]
                    break
            else:
                if want or not options:
                    return False
                return False
        trial = {**args, f"new_{action.replace}s": news}
        if self._holds(action, world, subject, working, kids, trial, tree) != want:
            return False
        args.update(trial)
        return True

    def _plant_children(self, action: ActionSpec, world: World, rng: random.Random, subject: str, working: dict[str, Any],
                        kids: list[dict[str, Any]], args: dict[str, Any], tree: Any, want: bool) -> bool:
        """Make every chosen child pass the rule (``want``), or one of them fail it, by planting a value its column holds."""
        e = self.spec.entities[action.entity]
        scope = self._scope(action, world, subject, working, args)
        fields = [n for n, f in e.fields.items() if f.kind not in ("key", "ref", "secret") and f"{action.entity}.{n}" in str(
            next(r.check for r, t in self.gen.rules[action.name] if t is tree))]
        targets = [i for i, k in enumerate(kids) if not evaluate(tree, self.spec, self.child_scope(action, world, scope, k, args, i))] if want \
            else [rng.randrange(len(kids))]
        for i in targets:
            kid = kids[i]
            done = False
            for n in fields:
                for value in self._options(world, action.entity, n, rng):
                    trial = {**kid, e.fields[n].column: value}
                    if bool(evaluate(tree, self.spec, self.child_scope(action, world, scope, trial, args, i))) == want:
                        kid.update(trial)
                        done = True
                        break
                if done:
                    break
            if not done:
                return False
        return self._holds(action, world, subject, working, kids, args, tree) == want

    def _move_argument(self, action: ActionSpec, world: World, rng: random.Random, subject: str, working: dict[str, Any],
                       kids: list[dict[str, Any]], args: dict[str, Any], tree: Any, want: bool) -> bool:
        """Move a number argument across its bound, or choose another text value (a listed reason, or one it does not list)."""
        e = self.spec.entities[action.entity]
        scope = self._scope(action, world, subject, working, args)
        for n in [a for a in args if a in e.fields and e.fields[a].kind in ("money", "integer")]:
            bound = compare_bound(tree, n, self.spec, scope)
            if bound is None or bound[1] is None:
                continue
            op, limit = bound
            limit = Decimal(limit)
            unit = Decimal(1).scaleb(-e.fields[n].scale) if e.fields[n].kind == "money" else Decimal(1)
            if op in ("<=", "<"):
                value = (limit - (unit if op == "<" else 0)) if want else limit + unit * rng.randint(1, max(1, int(limit / unit) // 4 or 1))
                if want and value > unit:
                    value = unit * rng.randint(max(1, int(value / unit) * 3 // 4), int(value / unit))
            else:
                value = (limit + (unit if op == ">" else 0)) if want else limit - unit
            if value <= 0:
                continue
            trial = {**args, n: str(value.quantize(unit)) if e.fields[n].kind == "money" else int(value)}
            if self._holds(action, world, subject, working, kids, trial, tree) == want:
                args.update(trial)
                return True
        for n in [a for a in args if a in e.fields and e.fields[a].kind in ("text", "category")]:
            listed = self._listed(action, n)
            pool = list(dict.fromkeys([*listed, *(e.fields[n].values or []), *_REASONS]))
            rng.shuffle(pool)
            for value in pool:
                trial = {**args, n: value}
                if self._holds(action, world, subject, working, kids, trial, tree) == want:
                    args.update(trial)
                    return True
        return False


def _write(world: World, entity: Any, before: dict[str, Any], after: dict[str, Any]) -> None:
    """Write the fields of ``after`` that differ from ``before`` to the row (keyed by ``before``)."""
    changed = {c: v for c, v in after.items() if before[c] != v}
    if changed:
        keycol = entity.fields[entity.key or ""].column
        world.execute(f'UPDATE "{entity.table}" SET ' + ", ".join(f'"{c}" = ?' for c in changed) + f' WHERE "{keycol}" = ?',
                      (*changed.values(), before[keycol]))


def fresh(name: str, rng: random.Random) -> str:
    """A new contact detail of the kind ``name`` holds (an e-mail, a phone, a postcode, an address)."""
    n = rng.randint(100, 9999)
    if "mail" in name:
        return f"{rng.choice(('sam', 'alex', 'kim', 'lee', 'noor', 'rio'))}.{n}@example.org"
    if "phone" in name or "fax" in name:
        return f"+1 555 {rng.randint(100, 999)} {n:04d}"
    if "postal" in name or "zip" in name or "postcode" in name:
        return f"{rng.randint(10000, 99999)}"
    if "address" in name:
        return f"{n} {rng.choice(('Oak', 'Elm', 'Birch', 'Cedar', 'Maple'))} Street"
    return f"{rng.choice(('North', 'South', 'East', 'West', 'New'))} {name.replace('_', ' ').title()} {n}"
