"""Action templates of a generated environment: each action of the spec, done or refused as the seed's world decides.

``do_<action>`` poses one neutral request about a row described in words; its case is drawn per seed — compliant, or
breaking exactly one of the action's rules (one refusal twin per rule), or, for actions that need it, details that do
not verify — and the setup makes the deciding fact hold (plants a status or a total the column already holds elsewhere,
moves a money or count argument across its bound). ``latest_<action>`` asks the same about the latest row of a named
owner: find, decide, act, answer. Gates name the row whose data decides.
"""

from __future__ import annotations

import functools
import math
import random
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from fixtures.errors import TaskError
from fixtures.world import World
from graders.criteria import ToolCalled, ToolNotCalled, state
from graders.outcome import completed, refused
from graders.setup import case, pick, rows
from graders.tasks import TaskDraft, TaskTemplate, answer_call, call, negative, optional_call, refusal_call
from toolgym.new.reword import compose
from toolgym.new.rules import Row, compare_bound, evaluate
from toolgym.new.templates import _OPENERS, _UPDATE_ONE_SIDED, Deriver, _label, _order, _quoted, _title

if TYPE_CHECKING:
    from toolgym.new.spec import ActionSpec

__all__ = ["ActionDeriver"]

_NEAR = 8
"""Subjects a seed tries in its drawn case before another case: seeds' first subjects are far apart (:func:`_stride`)."""


class ActionDeriver(Deriver):
    """The read templates plus one action template (and its ``latest_`` variant) per action of the spec."""

    # -- actions and their refusal twins --------------------------------------------------------------------
    def actions(self) -> list[TaskTemplate]:
        out = []
        for action in self.spec.actions:
            e = self.spec.entities[action.entity]
            subject = self.spec.entities[action.entity].fields[action.parent].ref if action.kind == "create" else action.entity
            se = self.spec.entities[subject or ""]
            parents = [self.spec.entities[f.ref or ""].plural for f in se.fields.values() if f.kind == "ref" and f.visible]
            parents += [self.spec.entities[e.fields[n].ref or ""].plural for n in action.fields if e.fields[n].kind == "ref"]
            tools = [f"search_{se.plural}", *[f"search_{p}" for p in parents], f"get_{subject}", action.name, "submit_answer"]
            if self.spec.verify is not None and action.requires_verified:
                tools.insert(0, f"verify_{self.spec.verify.entity}")
            one_sided = "" if (action.rules or action.requires_verified) else _UPDATE_ONE_SIDED
            out.append(TaskTemplate(self._action(action, subject or ""), id=f"do_{action.name}"[:80], category="action",
                                    difficulty="medium", tags=["action", "refusal" if not one_sided else "write", "generated"],
                                    tools=list(dict.fromkeys(tools)), one_sided=one_sided,
                                    description=f"{action.name}: done when its rules hold, refused with the rule's code when "
                                                f"one does not ({len(action.rules)} rule(s)); {e.label}"))
            if any(f.kind == "date" for f in se.fields.values()):
                out.append(TaskTemplate(self._action(action, subject or "", latest=True), id=f"latest_{action.name}"[:80],
                                        category="multistep", difficulty="hard", tags=["multistep", "action", "generated"],
                                        tools=list(dict.fromkeys(tools)), one_sided=one_sided,
                                        description=f"{action.name} on the latest {se.label} of a named owner: find, decide, act, answer"))
        return out

    def _latest(self, world: World, ename: str) -> list[tuple[dict[str, Any], str, list[Any]]]:
        """Rows that are the latest (by their first date) of a named parent's rows, described that way."""
        return self.memo(world, ("latest", ename), lambda: self._latest_rows(world, ename))

    def _latest_rows(self, world: World, ename: str) -> list[tuple[dict[str, Any], str, list[Any]]]:
        e = self.spec.entities[ename]
        dates = [n for n, g in e.fields.items() if g.kind == "date" and g.visible]
        for fname, f in e.fields.items():
            if f.kind != "ref" or not f.visible or not dates or f.ref == ename:
                continue
            parent = self.spec.entities[f.ref or ""]
            pnamed = {self.key(f.ref or "", r): r for r in self.named_rows(world, f.ref or "")}
            if len(pnamed) < 10:
                continue
            d = e.fields[dates[0]]
            by_parent: dict[Any, list[dict[str, Any]]] = {}
            for r in rows(world, f'SELECT * FROM "{e.table}" WHERE "{d.column}" IS NOT NULL ORDER BY "{e.fields[e.key or ""].column}"'):
                if r[f.column] in pnamed:
                    by_parent.setdefault(r[f.column], []).append(r)
            out = []
            for pkey, group in by_parent.items():
                top = max(str(r[d.column]) for r in group)
                latest = [r for r in group if str(r[d.column]) == top]
                if len(latest) != 1 or len(group) < 2:
                    continue
                owner = pnamed[pkey]
                desc = f"the latest {e.label} of {parent.label} {_quoted(parent, _title(parent, owner) or '')}"
                out.append((latest[0], desc, [*self.find(f.ref or "", owner), optional_call(f"search_{e.plural}", **{fname: pkey})]))
            if len(out) >= 20:
                return out
        return []

    def _describable(self, world: World, ename: str) -> list[tuple[dict[str, Any], str, list[Any]]]:
        """Rows of ``ename`` with a description a person would give and the searches that find it."""
        return self.memo(world, ("describable", ename), lambda: self._describe_rows(world, ename))

    def _describe_rows(self, world: World, ename: str) -> list[tuple[dict[str, Any], str, list[Any]]]:
        e = self.spec.entities[ename]
        named = self.named_rows(world, ename)
        if named:
            return [(r, f"the {e.label} {_quoted(e, _title(e, r) or '')}", self.find(ename, r)) for r in named]
        out = []
        for fname, f in e.fields.items():
            if f.kind != "ref" or not f.visible:
                continue
            parent = self.spec.entities[f.ref or ""]
            pnamed = {self.key(f.ref or "", r): r for r in self.named_rows(world, f.ref or "")}
            if not pnamed:
                continue
            dates = [n for n, g in e.fields.items() if g.kind == "date"][:1]
            monies = [n for n, g in e.fields.items() if g.kind == "money"][:1]
            all_rows = rows(world, f'SELECT * FROM "{e.table}" ORDER BY "{e.fields[e.key or ""].column}"')
            seen: dict[tuple[Any, ...], int] = {}
            for r in all_rows:
                sig = (r[f.column], *(str(r[e.fields[n].column]) for n in dates + monies))
                seen[sig] = seen.get(sig, 0) + 1
            for r in all_rows:
                owner = pnamed.get(r[f.column])
                sig = (r[f.column], *(str(r[e.fields[n].column]) for n in dates + monies))
                if owner is None or seen[sig] != 1 or not (dates or monies):
                    continue
                bits = [f"dated {str(r[e.fields[d].column])[:10]}" for d in dates] + [
                    f"for {self.shown(ename, m, r)} {self.spec.currency}" for m in monies if self.shown(ename, m, r)]
                desc = f"the {e.label} of {parent.label} {_quoted(parent, _title(parent, owner) or '')} " + " ".join(bits)
                finds = [*self.find(f.ref or "", owner), optional_call(f"search_{e.plural}", **{fname: r[f.column]})]
                out.append((r, desc, finds))
            if out:
                break
        return out

    def _action(self, action: ActionSpec, subject: str, *, latest: bool = False) -> Any:
        e = self.spec.entities[action.entity]
        se = self.spec.entities[subject]
        rules = self.gen.rules[action.name]
        verify = self.spec.verify if action.requires_verified else None
        weights = {"ok": 3.0 + len(rules)}
        weights.update({r.code: 2.0 for r, _ in rules})
        if verify is not None:
            weights["identity_not_verified"] = 2.0

        def build(world: World, rng: random.Random) -> TaskDraft:
            which = case(rng, weights)
            candidates = self._latest(world, subject) if latest else self._describable(world, subject)
            if verify is not None:  # only rows whose person has the details to verify (filtered before the seed's order)
                candidates = self.memo(world, ("verifiable", subject, latest), lambda: self._one_per_owner(world, subject, candidates))
            dates = tuple(n for n, g in se.fields.items() if g.kind == "date")  # the order "latest" is read in: never planted
            if len(candidates) < 20:  # fewer would repeat subjects over 20 seeds: another seed's oracle is paid on them
                raise TaskError(f"fewer than 20 {se.plural} a person could describe")
            walk = _stride(_order(world, rng, len(candidates)))
            # the seed's own first subjects first, in the drawn case, then in another case: a case only a few rows can
            # be set up for (a count of children over a limit) would otherwise send many seeds to those same rows
            plan = [(which, walk[:_NEAR])] + [(c, walk[:_NEAR]) for c in weights if c != which] + [(which, walk[_NEAR:300])]
            found = False
            for attempt, indices in plan:
                for i in indices:
                    row, desc, finds = candidates[i]
                    row = dict(row)
                    args = self._arguments(action, world, rng, row)
                    if args is None:
                        continue
                    if self._settle(action, world, rng, subject, row, args, attempt, frozen=dates if latest else ()):
                        which, found = attempt, True
                        break
                if found:
                    break
            else:
                raise TaskError(f"no {se.label} can be set up for case {which!r} of {action.name}")
            row = dict(rows(world, f'SELECT * FROM "{se.table}" WHERE "{se.fields[se.key or ""].column}" = ?', self.key(subject, row))[0])
            key_arg = action.parent if action.kind == "create" else e.key
            act = call(action.name, **{key_arg or "": self.key(subject, row)}, **args)
            steps: list[Any] = list(finds)
            details = ""
            owner = None
            if verify is not None:
                owner = self._owner(world, subject, row)
                if owner is None:
                    raise TaskError(f"the {se.label} has no {verify.entity} to verify")
                ve = self.spec.entities[verify.entity]
                given = {n: str(owner[ve.fields[n].column]) for n in verify.fields}
                if which == "identity_not_verified":
                    n = rng.choice(verify.fields)
                    given[n] = _wrong(given[n], rng)
                details = " The caller gives " + ", ".join(f"{_label(n)} {v}" for n, v in given.items()) + "."
                steps.append(call(f"verify_{verify.entity}", **{ve.key or "": self.key(verify.entity, owner)}, **given))
            for n, v in args.items():  # the agent finds the id of a row the prompt names
                f = e.fields[n]
                if f.kind == "ref":
                    target = self.spec.entities[f.ref or ""]
                    found = rows(world, f'SELECT * FROM "{target.table}" WHERE "{target.fields[target.key or ""].column}" = ?', v)
                    if found and _title(target, found[0]):
                        steps += self.find(f.ref or "", found[0])
            request, facts = self._request(action, desc, args, world)
            if verify is not None:
                request, facts = request + ".{identity}", {**facts, "identity": details}
            else:
                request += "."
            prompt = compose(self.wordings, rng.choice(_OPENERS), request, facts, "Handle it under the policy and reply with submit_answer.")
            meta = {"case": which, "subject": str(self.key(subject, row))}
            if which == "ok":
                return TaskDraft(prompt=prompt, oracle=[*steps, self.get(subject, row, optional=True), act,
                                                       answer_call(f"Done: {_label(action.name)}.")],
                                 outcome=completed(), rubric=self._done(action, world, row, args),
                                 negatives=[negative("claims_only", "says it is done without doing it", answer_call("Done.")),
                                            negative("refuses_compliant", "refuses what the policy allows", self.get(subject, row),
                                                     refusal_call(next((c for c in weights if c != "ok"), "not_allowed"), "Not allowed."))],
                                 metadata=meta)
            code = which
            reason = next((r.message for r, _ in rules if r.code == code), "the identity could not be verified")
            read = self.get(subject, row)
            rubric: list[Any] = [ToolNotCalled(name=f"no {_label(action.name)} attempted", tool=action.name,
                                               args={key_arg or "": self.key(subject, row)}, gate=True)]
            if which == "identity_not_verified":
                assert verify is not None and owner is not None
                rubric.append(ToolCalled(name="checked the identity", tool=f"verify_{verify.entity}",
                                         args={self.spec.entities[verify.entity].key or "": self.key(verify.entity, owner)}, gate=True, weight=2))
                oracle = [*steps, refusal_call(code, f"I cannot do this: {reason}")]
            else:
                rubric.append(self.read_gate(subject, row, f"read the {se.label}"))
                oracle = [*steps, read, refusal_call(code, f"I cannot do this: {reason}")]
            return TaskDraft(prompt=prompt, oracle=oracle, outcome=refused(code), rubric=rubric,
                             negatives=[negative("attempts", "tries the action, then refuses", act, refusal_call(code, "Not allowed.")),
                                        negative("refuses_unread", "refuses without looking", refusal_call(code, "Not allowed."))],
                             metadata=meta)

        build.__name__ = f"{'latest' if latest else 'do'}_{action.name}"
        return build

    def _one_per_owner(self, world: World, ename: str, candidates: list[Any]) -> list[Any]:
        """Rows whose person has the details to verify, one per person: two seeds on rows of one person would share
        the deciding record of the identity case (the verification), and another seed's oracle would be paid there."""
        v = self.spec.verify
        assert v is not None
        out, seen = [], set()
        for c in candidates:
            owner = self._owner(world, ename, c[0])
            ve = self.spec.entities[v.entity]
            if owner is None or any(owner[ve.fields[n].column] in (None, "") for n in v.fields):
                continue
            key = self.key(v.entity, owner)
            if key not in seen:
                seen.add(key)
                out.append(c)
        return out

    def _verifiable(self, world: World, ename: str, row: dict[str, Any]) -> bool:
        v = self.spec.verify
        assert v is not None
        owner = self._owner(world, ename, row)
        ve = self.spec.entities[v.entity]
        return owner is not None and all(owner[ve.fields[n].column] not in (None, "") for n in v.fields)

    def _owner(self, world: World, ename: str, row: dict[str, Any]) -> dict[str, Any] | None:
        v = self.spec.verify
        assert v is not None
        frontier = [(ename, row)]
        for _ in range(3):
            nxt = []
            for name, r in frontier:
                if name == v.entity:
                    return r
                e = self.spec.entities[name]
                for f in e.fields.values():
                    p = self.spec.entities.get(f.ref or "")
                    if f.kind == "ref" and p is not None and p.key and r.get(f.column) is not None:
                        found = world.query(f'SELECT * FROM "{p.table}" WHERE "{p.fields[p.key].column}" = ?', (r[f.column],))
                        if found:
                            nxt.append((f.ref or "", dict(found[0])))
            frontier = nxt
        return None

    def _arguments(self, action: ActionSpec, world: World, rng: random.Random, row: dict[str, Any]) -> dict[str, Any] | None:
        e = self.spec.entities[action.entity]
        args: dict[str, Any] = {}
        names = [n for n in action.fields if n != action.parent]
        if action.kind == "update":
            names = rng.sample(names, k=min(len(names), rng.randint(1, 2)))
        for n in names:
            f = e.fields[n]
            if f.kind == "ref":
                target = self.spec.entities[f.ref or ""]
                keys = rows(world, f'SELECT "{target.fields[target.key or ""].column}" AS k FROM "{target.table}" ORDER BY 1')
                if not keys:
                    return None
                named = self.named_rows(world, f.ref or "")
                chosen = pick(rng, named, target.label) if named else None
                args[n] = self.key(f.ref or "", chosen) if chosen else pick(rng, keys, target.label)["k"]
            elif f.kind == "money":
                args[n] = f"{rng.randint(1, 200)}.{rng.randint(0, 99):02d}"
            elif f.kind == "category" and f.values:
                args[n] = rng.choice(f.values)
            elif f.kind == "integer":
                args[n] = rng.randint(1, 9)
            elif f.kind == "date":
                args[n] = world.clock.today.isoformat()
            else:
                args[n] = _fresh(n, rng)
        if action.kind == "update" and all(row.get(e.fields[n].column) == self.gen.stored(e, n, v) for n, v in args.items()):
            return None  # the row already holds every drawn value: the tool would refuse no_change, not the task's case
        return args

    def _scope(self, action: ActionSpec, world: World, subject: str, row: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
        e = self.spec.entities[action.entity]
        scope: dict[str, Any] = {"today": world.clock.today.isoformat(), subject: Row(self.spec, subject, row, world)}
        for n, v in args.items():
            scope[n] = Decimal(v) if e.fields[n].kind == "money" else v
        return scope

    def _settle(self, action: ActionSpec, world: World, rng: random.Random, subject: str, row: dict[str, Any],
                args: dict[str, Any], which: str, frozen: tuple[str, ...] = ()) -> bool:
        """Make the world and the arguments fit the case: every rule holds, or only rule ``which`` fails. Plants a
        category value of the subject row, or moves a money argument across its bound; False when this row cannot."""
        se = self.spec.entities[subject]
        e = self.spec.entities[action.entity]
        rules = self.gen.rules[action.name]
        working = dict(row)
        for rule, tree in rules:
            want = rule.code != which
            scope = self._scope(action, world, subject, working, args)
            if bool(evaluate(tree, self.spec, scope)) == want:
                continue
            fixed = False
            for n in [a for a in args if e.fields[a].kind in ("money", "integer")]:
                bound = compare_bound(tree, n, self.spec, scope)
                if bound is None or bound[1] is None:
                    continue
                op, limit = bound
                limit = Decimal(limit)
                unit = Decimal(1).scaleb(-e.fields[n].scale) if e.fields[n].kind == "money" else Decimal(1)
                if op in ("<=", "<"):
                    value = (limit - (unit if op == "<" else 0)) if want else limit + unit * rng.randint(1, 5000)
                    if want and value > unit:
                        value = unit * rng.randint(1, int(value / unit))
                else:
                    value = (limit + (unit if op == ">" else 0)) if want else limit - unit
                if value <= 0:
                    continue
                args[n] = str(value.quantize(unit)) if e.fields[n].kind == "money" else int(value)
                fixed = bool(evaluate(tree, self.spec, self._scope(action, world, subject, working, args))) == want
                if fixed:
                    break
            if not fixed:
                for fname, f in se.fields.items():
                    if f.kind in ("key", "ref", "secret") or fname in frozen or f"{subject}.{fname}" not in rule.check:
                        continue
                    # plant a value the column already holds elsewhere (a status, a total, a date) on the rule's other side
                    options = list(f.values) if f.kind == "category" and f.values else [r["v"] for r in rows(
                        world, f'SELECT DISTINCT "{f.column}" AS v FROM "{se.table}" WHERE "{f.column}" IS NOT NULL ORDER BY 1 LIMIT 200')]
                    rng.shuffle(options)
                    for value in options:
                        trial = {**working, f.column: value}
                        if bool(evaluate(tree, self.spec, self._scope(action, world, subject, trial, args))) == want:
                            working, fixed = trial, True
                            break
                    if fixed:
                        break
            if not fixed:
                return False
        scope = self._scope(action, world, subject, working, args)
        for rule, tree in rules:  # a later plant must not have undone an earlier rule
            if bool(evaluate(tree, self.spec, scope)) != (rule.code != which):
                return False
        if action.kind == "transition" and which == "ok" and working[e.fields[action.field or ""].column] == action.to:
            return False
        changed = {c: v for c, v in working.items() if row[c] != v}
        if changed:
            keycol = se.fields[se.key or ""].column
            world.execute(f'UPDATE "{se.table}" SET ' + ", ".join(f'"{c}" = ?' for c in changed) + f' WHERE "{keycol}" = ?',
                          (*changed.values(), row[keycol]))
        return True

    def _request(self, action: ActionSpec, desc: str, args: dict[str, Any], world: World) -> tuple[str, dict[str, str]]:
        """The request as a colleague words it: "please cancel the order of customer “Ada Berg” dated 2025-03-02",
        "please set the phone to +1 555 0100 for the customer “Ada Berg”", "please add an invoice line to ...: ...";
        as a template (the same for every seed of the action) and the seed's facts for its placeholders."""
        e = self.spec.entities[action.entity]
        verb = action.name.removesuffix(f"_{action.entity}").replace("_", " ")
        if action.kind == "transition" and verb != action.name.replace("_", " "):
            return f"please {verb} {{subject}}", {"subject": desc}
        if action.kind == "update":
            changes = [f"the {_label(n)} to {v}" + (f" {self.spec.currency}" if e.fields[n].kind == "money" else "") for n, v in args.items()]
            return "please set {changes} for {subject}", {"changes": " and ".join(changes), "subject": desc}
        if action.kind == "create":
            article = "an" if e.label[:1] in "aeiou" else "a"
            return f"please add {article} {e.label} to {{subject}}{{details}}", {"subject": desc, "details": self._wording(action, args, world)}
        return f"please {_label(action.name)} — {{subject}}{{details}}", {"subject": desc, "details": self._wording(action, args, world)}

    def _wording(self, action: ActionSpec, args: dict[str, Any], world: World) -> str:
        e = self.spec.entities[action.entity]
        if not args:
            return ""
        parts = []
        for n, v in args.items():
            f = e.fields[n]
            if f.kind == "ref":
                target = self.spec.entities[f.ref or ""]
                found = rows(world, f'SELECT * FROM "{target.table}" WHERE "{target.fields[target.key or ""].column}" = ?', v)
                title = _title(target, found[0]) if found and (target.title or target.natural_key) else None
                parts.append(f"{target.label} {_quoted(target, title)}" if title else f"{_label(n)} {v}")
                continue
            unit = f" {self.spec.currency}" if e.fields[n].kind == "money" else ""
            parts.append(f"{_label(n)} {v}{unit}")
        return ": " + ", ".join(parts)

    def _done(self, action: ActionSpec, world: World, row: dict[str, Any], args: dict[str, Any]) -> list[Any]:
        e = self.spec.entities[action.entity]
        if action.kind == "transition":
            f = e.fields[action.field or ""]
            return [state(f'SELECT "{f.column}" FROM "{e.table}" WHERE "{e.fields[e.key or ""].column}" = ?', self.key(action.entity, row),
                          expect=action.to, weight=3, gate=True, name=f"{e.label} set to {action.to}")]
        if action.kind == "update":
            return [state(f'SELECT "{e.fields[n].column}" FROM "{e.table}" WHERE "{e.fields[e.key or ""].column}" = ?',
                          self.key(action.entity, row), expect=self.gen.stored(e, n, v), weight=3, gate=True, name=f"{_label(n)} changed")
                    for n, v in args.items()]
        link = e.fields[action.parent or ""]
        where = [f'"{link.column}" = ?'] + [f'"{e.fields[n].column}" = ?' for n in args]
        params = [row[self.spec.entities[link.ref or ""].fields[self.spec.entities[link.ref or ""].key or ""].column],
                  *[self.gen.stored(e, n, v) for n, v in args.items()]]
        before = world.query(f'SELECT count(*) AS n FROM "{e.table}" WHERE ' + " AND ".join(where), tuple(params))[0]["n"]
        return [state(f'SELECT count(*) FROM "{e.table}" WHERE ' + " AND ".join(where), *params, expect=before + 1, weight=3, gate=True,
                      name=f"{e.label} created")]


def _stride(order: list[int]) -> list[int]:
    """``order`` visited with a stride: a seed whose first subject cannot be set up tries subjects far from the next
    seeds' first ones (their starts are neighbours in the permutation), so two seeds rarely land on one subject."""
    n = len(order)
    if n <= 1:
        return order
    step = _step(n)
    return [order[(k * step) % n] for k in range(n)]


@functools.lru_cache(maxsize=256)
def _step(n: int) -> int:
    """Seeds start on neighbouring positions (0, 1, 2...): two walks meet within their first _NEAR steps when some
    m * step (m < _NEAR) lands near 0 modulo n, so take the step coprime with n whose first multiples stay farthest
    from 0 (among the first few thousand: near n times the golden ratio's fraction is as good as it gets)."""
    def spread(k: int) -> int:
        return min(min(m * k % n, n - m * k % n) for m in range(1, _NEAR))

    golden = int(n * 0.381966)
    options = {k for k in range(max(1, golden - 2000), min(n, golden + 2000)) if math.gcd(k, n) == 1} or {1}
    return max(sorted(options), key=spread)


def _fresh(name: str, rng: random.Random) -> str:
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


def _wrong(value: str, rng: random.Random) -> str:
    if "@" in value:
        return "x" + value
    digits = [i for i, ch in enumerate(value) if ch.isdigit()]
    if digits:
        i = rng.choice(digits)
        return value[:i] + str((int(value[i]) + rng.randint(1, 8)) % 10) + value[i + 1:]
    return value + " Jr"
