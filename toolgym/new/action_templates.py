"""Action templates of a generated environment: each action of the spec, done or refused as the seed's world decides.

``do_<action>`` poses one neutral request about a row described in words; its case is drawn per seed — compliant, or
breaking exactly one of the action's rules (one refusal twin per rule), or, for actions that need it, details that do
not verify — and the setup makes the deciding fact hold (plants a status or a total the column already holds elsewhere,
moves a money or count argument across its bound). ``latest_<action>`` asks the same about the latest row of a named
owner: find, decide, act, answer. Gates name the row whose data decides.
"""

from __future__ import annotations

import ast
import functools
import math
import random
from typing import TYPE_CHECKING, Any

from fixtures.errors import TaskError
from fixtures.persona import Persona, Terms, plant_persona
from fixtures.world import World
from graders.criteria import AnyToolCalled, CallOrder, ToolCalled, ToolNotCalled
from graders.outcome import completed, refused
from graders.setup import case, rows
from graders.tasks import TaskDraft, TaskTemplate, answer_call, call, negative, optional_call, refusal_call
from toolgym.new.action_setup import ActionSetup
from toolgym.new.chains import order_field
from toolgym.new.gates import read_gate, rule_gates
from toolgym.new.oracle_reads import fit_reads
from toolgym.new.reword import compose, fill
from toolgym.new.rules import evaluate
from toolgym.new.templates import _OPENERS, _UPDATE_ONE_SIDED, NAMED, _label, _moment, _order, _quoted, _title

if TYPE_CHECKING:
    from toolgym.new.spec import ActionSpec

__all__ = ["ActionDeriver"]

_NEAR = 8
"""Subjects a seed tries in its drawn case before another case: seeds' first subjects are far apart (:func:`_stride`)."""


class ActionDeriver(ActionSetup):
    """The read templates plus one action template (and its ``latest_`` variant) per action of the spec."""

    # -- actions and their refusal twins --------------------------------------------------------------------
    def actions(self) -> list[TaskTemplate]:
        out = []
        for action in self.spec.actions:
            e = self.spec.entities[action.entity]
            subject = self.spec.subject(action)
            se = self.spec.entities[subject or ""]
            parents = [self.spec.entities[f.ref or ""].plural for f in se.fields.values() if f.kind == "ref" and f.visible]
            parents += [self.spec.entities[e.fields[n].ref or ""].plural for n in action.fields if e.fields[n].kind == "ref"]
            tools = [f"search_{se.plural}", *[f"search_{p}" for p in parents], f"get_{subject}", action.name, "submit_answer"]
            if action.kind == "children":
                tools[1:1] = [f"search_{e.plural}", f"get_{action.entity}"]
            if action.refund is not None:
                tools[1:1] = [f"search_{self.spec.entities[action.refund.to].plural}", f"get_{action.refund.to}"]
                if action.refund.record:
                    tools[1:1] = [f"search_{self.spec.entities[action.refund.record].plural}"]
            if action.replace:
                target = e.fields[action.replace].ref or ""
                tools[1:1] = [f"search_{self.spec.entities[target].plural}", f"get_{target}"]
            tools[-2:-2] = self._rule_reads(action)
            if self.spec.verify is not None and action.requires_verified:
                tools.insert(0, f"verify_{self.spec.verify.entity}")
            one_sided = "" if (action.rules or action.requires_verified) else _UPDATE_ONE_SIDED
            out.append(TaskTemplate(self._action(action, subject or ""), id=f"do_{action.name}"[:80], category="action",
                                    difficulty="medium", tags=["action", "refusal" if not one_sided else "write", "generated"],
                                    tools=list(dict.fromkeys(tools)), one_sided=one_sided,
                                    description=f"{action.name}: done when its rules hold, refused with the rule's code when "
                                                f"one does not ({len(action.rules)} rule(s)); {e.label}"))
            if action.confirm and self.spec.verify is not None and action.requires_verified:
                asked = ["ask_requester", "confirm_action", *tools]
                out.append(TaskTemplate(self._action(action, subject or "", requester=True), id=f"requester_{action.name}"[:80],
                                        category="multistep", difficulty="hard", tags=["multistep", "action", "requester", "generated"],
                                        tools=list(dict.fromkeys(asked)), one_sided=one_sided,
                                        description=f"{action.name} for the person on the line: ask who they are and what they "
                                                    "mean, verify, decide by the rules, confirm with them, act, answer"))
            if order_field(se) is not None:
                out.append(TaskTemplate(self._action(action, subject or "", latest=True), id=f"latest_{action.name}"[:80],
                                        category="multistep", difficulty="hard", tags=["multistep", "action", "generated"],
                                        tools=list(dict.fromkeys(tools)), one_sided=one_sided,
                                        description=f"{action.name} on the latest {se.label} of a named owner: find, decide, act, answer"))
        return out

    def _rule_reads(self, action: ActionSpec) -> list[str]:
        """The read tools of every entity the action's rules read (a rule's facts may be read with either)."""
        import re

        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", " ".join(r.check for r in action.rules)))
        out: list[str] = []
        for name, entity in self.spec.entities.items():
            if entity.key is not None and (name in words or entity.plural in words or f"new_{name}" in words
                                           or any(f"{w}_id" in self.spec.entities[action.entity].fields and self.spec.entities[action.entity].fields[f"{w}_id"].ref == name for w in words)):
                out += [f"search_{entity.plural}", f"get_{name}"]
        return out

    def _latest(self, world: World, ename: str) -> list[tuple[dict[str, Any], str, list[Any]]]:
        """Rows that are the latest (by their first date) of a named parent's rows, described that way."""
        return self.memo(world, ("latest", ename), lambda: self._latest_rows(world, ename))

    def _latest_rows(self, world: World, ename: str) -> list[tuple[dict[str, Any], str, list[Any]]]:
        """The latest row of each named parent (through the first reference that gives twenty), described that way."""
        e = self.spec.entities[ename]
        for fname, f in e.fields.items():
            if f.kind != "ref" or not f.visible or f.ref == ename:
                continue
            parent = self.spec.entities[f.ref or ""]
            out = [(child, f"the latest {e.label} of {parent.label} {_quoted(parent, _title(parent, owner) or '')}",
                    self.latest_finds(ename, fname, owner)) for child, owner in self.latest_children(world, ename, fname)]
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
            dates = [n for n, g in e.fields.items() if g.kind == "date"][:1] or [n for n in [order_field(e)] if n]  # a date, else a year
            monies = [n for n, g in e.fields.items() if g.kind == "money"][:1]
            if not (dates or monies):
                continue
            # rows no sibling shares the description of (the same parent, moment and amount): one SQL pass, at most a few
            # thousand candidates (a million rows are never all in memory)
            cols = ", ".join(f'"{c}"' for c in [f.column, *(e.fields[n].column for n in dates + monies)])
            found = rows(world, f'SELECT * FROM "{e.table}" WHERE ({cols}) IN (SELECT {cols} FROM "{e.table}" GROUP BY {cols} '
                                f'HAVING count(*) = 1) ORDER BY "{e.fields[e.key or ""].column}" LIMIT 3000')
            described: dict[str, list[Any]] = {}
            for r in found:
                owner = pnamed.get(r[f.column])
                if owner is None:
                    continue
                bits = [f"dated {_moment(str(r[e.fields[d].column]))[0]}" if e.fields[d].kind == "date" else f"of {r[e.fields[d].column]}"
                        for d in dates] + [
                    f"for {self.shown(ename, m, r)} {self.spec.currency}" for m in monies if self.shown(ename, m, r)]
                desc = f"the {e.label} of {parent.label} {_quoted(parent, _title(parent, owner) or '')} " + " ".join(bits)
                finds = [*self.find(f.ref or "", owner), optional_call(f"search_{e.plural}", **{fname: r[f.column]})]
                described.setdefault(desc, []).append((dict(r), desc, finds))
            out = [group[0] for group in described.values() if len(group) == 1]  # a description that still names one row
            if out:
                break
        return out

    def _action(self, action: ActionSpec, subject: str, *, latest: bool = False, requester: bool = False) -> Any:
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
            dates = tuple(n for n, g in se.fields.items() if g.kind == "date" or n == order_field(se))  # "latest" is read in this order: never planted
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
            named = row.get(NAMED)  # the name the request uses (a title, or an e-mail where people share a name)
            row = dict(world.query(f'SELECT * FROM "{se.table}" WHERE "{se.fields[se.key or ""].column}" = ?', (self.key(subject, row),))[0])
            if named:
                row[NAMED] = named
            key_arg = action.parent if action.kind == "create" else se.key if action.kind == "children" else e.key
            act = call(action.name, **{key_arg or "": self.key(subject, row)}, **args)
            steps: list[Any] = list(finds)
            details = ""
            owner = None
            persona_facts: dict[str, str] = {}
            gates_asked: list[Any] = []
            if verify is not None:
                owner = self._owner(world, subject, row)
                if owner is None:
                    raise TaskError(f"the {se.label} has no {verify.entity} to verify")
                ve = self.spec.entities[verify.entity]
                # the oracle verifies by the first group; the gate takes any detail asked, so name and postcode do as well
                group = verify.fields
                given = {n: str(owner[ve.fields[n].column]) for n in group}
                if which == "identity_not_verified":
                    n = rng.choice(group)
                    given[n] = _wrong(given[n], rng)
                details = " The caller gives " + ", ".join(f"{self.words(verify.entity, n)} {v}" for n, v in given.items()) + "."
                if requester:  # the person on the line tells their details when asked; the agent finds their record
                    persona_facts.update(given)
                    asks = [call("ask_requester", topic=n) for n in group]
                    gates_asked += [AnyToolCalled(name="asked the caller who they are", gate=True, weight=1,
                                                 patterns=[{"tool": "ask_requester", "args": {"topic": t}} for t in verify.every_field()])]
                    finder = {"query": given[group[0]]} if len(group) == 1 else {"query": " ".join(given[n] for n in group if n in ve.title)}
                    steps = [*asks, optional_call(f"search_{ve.plural}", **finder), *steps]
                # a refusal the record decides (the order is not pending) needs no verified identity: nothing is done
                check = call if which in ("ok", "identity_not_verified") else optional_call
                steps.append(check(f"verify_{verify.entity}", **{ve.key or "": self.key(verify.entity, owner)}, **given))
            for n, v in args.items():  # the agent finds the id of a row the prompt names
                f = e.fields.get(n)
                if f is not None and f.kind == "ref":
                    target = self.spec.entities[f.ref or ""]
                    found = rows(world, f'SELECT * FROM "{target.table}" WHERE "{target.fields[target.key or ""].column}" = ?', v)
                    if found and _title(target, found[0]):
                        steps += self.find(f.ref or "", found[0])
            request, facts = self._request(action, desc, args, world)
            confirm: list[Any] = []
            gates: list[Any] = []
            if requester:
                assert owner is not None and verify is not None
                who = _title(self.spec.entities[verify.entity], owner) or "the caller"
                told = {t: v for t, v in self._persona_facts(action, subject, row, args, world).items() if t not in group}
                if subject == verify.entity:  # their own row: who they are is which row they mean
                    told.pop(se.natural_key or se.key or "", None)
                persona_facts.update(told)
                what_asks = [call("ask_requester", topic=t) for t in told]
                steps = [*steps[: len(group)], *what_asks, *steps[len(group):]]
                gates_asked += [ToolCalled(name=f"asked the caller for detail {i + 1} of the request", tool="ask_requester",
                                           args={"topic": t}, gate=True, weight=1) for i, t in enumerate(told)]
                plant_persona(world, Persona(name=who, wants=fill(request, facts), facts=persona_facts,
                                             terms={action.name: Terms(agrees=True, reply="Yes, please go ahead.")}))
                about = _title(se, row) or str(self.key(subject, row))
                confirm = [call("confirm_action", action=action.name, about=about)]
                gates = [CallOrder(name=f"the {self.spec.entities[verify.entity].label} agreed before {_label(action.name)}",
                                   first={"tool": "confirm_action", "args": {"action": action.name}, "result": {"agreed": True}},
                                   then={"tool": action.name, "args": {key_arg or "": self.key(subject, row)}}, require_then=True),
                         *gates_asked]
                person = self.spec.entities[verify.entity].label
                what = (f"their {person} details" if subject == verify.entity else _a(se.label) if action.kind != "children"
                        else f"some {_label(e.plural)} of {_a(se.label)}")
                request, facts = f"{_a(person)} is on the line: they want to {{verb}} {{what}}.", {"verb": action.name.split("_")[0], "what": what}
            elif verify is not None:
                request, facts = request + ".{identity}", {**facts, "identity": details}
            else:
                request += "."
            prompt = compose(self.wordings, rng.choice(_OPENERS), request, facts, "Handle it under the policy and reply with submit_answer.")
            meta = {"case": which, "subject": str(self.key(subject, row))}
            if which == "ok":
                listed = self._listed_gate(action, row, args)
                oracle = fit_reads(self.gen, world, [*steps, self.get(subject, row, optional=True), *self._list_children(action, row),
                                                     *confirm, act, answer_call(f"Done: {_label(action.name)}.")], listed, action.name)
                return TaskDraft(prompt=prompt, oracle=oracle,
                                 outcome=completed(), rubric=[*self._done(action, world, row, args), *gates, *listed],
                                 negatives=[negative("claims_only", "says it is done without doing it", answer_call("Done.")),
                                            negative("refuses_compliant", "refuses what the policy allows", self.get(subject, row),
                                                     refusal_call(next((c for c in weights if c != "ok"), "not_allowed"), "Not allowed."))],
                                 metadata=meta)
            code = which
            reason = next((r.message for r, _ in rules if r.code == code), "the identity could not be verified")
            read = self.get(subject, row, optional=True)  # required or not as the gates say (toolgym.new.oracle_reads)
            rubric: list[Any] = [ToolNotCalled(name=f"no {_label(action.name)} attempted", tool=action.name,
                                               args={key_arg or "": self.key(subject, row)}, gate=True)]
            if which == "identity_not_verified":
                assert verify is not None and owner is not None
                rubric.append(ToolCalled(name="checked the identity", tool=f"verify_{verify.entity}",
                                         args={self.spec.entities[verify.entity].key or "": self.key(verify.entity, owner)}, gate=True, weight=2))
                oracle = [*steps, refusal_call(code, f"I cannot do this: {reason}")]
                rubric += gates_asked
            else:
                rubric += gates_asked
                deciding = self._deciding_gates(action, subject, row, args, code, world)
                rubric += deciding
                oracle = fit_reads(self.gen, world, [*steps, read, *self._list_children(action, row, optional=True),
                                                     *self._refund_read_call(action, subject, row, code),
                                                     refusal_call(code, f"I cannot do this: {reason}")], deciding, None)
            return TaskDraft(prompt=prompt, oracle=oracle, outcome=refused(code), rubric=rubric,
                             negatives=[negative("attempts", "tries the action, then refuses", act, refusal_call(code, "Not allowed.")),
                                        negative("refuses_unread", "refuses without looking", refusal_call(code, "Not allowed."))],
                             metadata=meta)

        build.__name__ = f"{'latest' if latest else 'requester' if requester else 'do'}_{action.name}"
        return build

    def _list_children(self, action: ActionSpec, row: dict[str, Any], *, optional: bool = False) -> list[Any]:
        """A children action reads the row's children (their ids and states) before acting."""
        if action.kind != "children":
            return []
        e = self.spec.entities[action.entity]
        return [(optional_call if optional else call)(f"search_{e.plural}", **{action.parent or "": self.key(self.spec.subject(action), row)}, limit=50)]

    def _listed_gate(self, action: ActionSpec, row: dict[str, Any], args: dict[str, Any]) -> list[Any]:
        """A children action's ids come from a read of the children: the gate on having seen every chosen one."""
        if action.kind != "children":
            return []
        e = self.spec.entities[action.entity]
        gates = [read_gate(self.gen, action.entity, list(args[f"{e.key}s"]), [],
                           f"saw the {self.spec.subject(action).replace('_', ' ')}'s {_label(e.plural)} it acts on")]
        if action.replace:  # and the rows they are exchanged for (their ids come from a read too)
            f = e.fields[action.replace]
            target = self.spec.entities[f.ref or ""]
            news = list(dict.fromkeys(args[f"new_{action.replace}s"]))
            if f.to is None:
                gates.append(read_gate(self.gen, f.ref or "", news, [], f"saw the {_label(target.plural)} they are exchanged for"))
        return gates

    def _deciding_gates(self, action: ActionSpec, subject: str, row: dict[str, Any], args: dict[str, Any], code: str,
                        world: World) -> list[Any]:
        """The facts that justify refusing with ``code`` (toolgym.new.gates.rule_gates): the fields the rule reads, of the
        rows it reads them from — the row itself, a parent, a failing chosen child (any that fails), the row a refund
        was to go to, the children it counts or sums. A rule that only bounds an argument needs the row found."""
        tree = next(t for r, t in self.gen.rules[action.name] if r.code == code)
        scope = self._scope(action, world, subject, row, args)
        what = f"the facts behind {code}"
        if action.kind == "children" and any(isinstance(n, ast.Name) and n.id == action.entity for n in ast.walk(tree)):
            e = self.spec.entities[action.entity]
            keycol = e.fields[e.key or ""].column
            per_child = []
            for i, k in enumerate(args[f"{e.key}s"]):
                kid = self.child_scope(action, world, scope, dict(rows(world, f'SELECT * FROM "{e.table}" WHERE "{keycol}" = ?', k)[0]), args, i)
                if not evaluate(tree, self.spec, kid):
                    per_child.append(rule_gates(self.gen, tree, kid, what))
            gates = []
            for i, gate in enumerate(per_child[0] if per_child else []):  # the same fact of any failing child will do
                facts = [f for g in per_child if len(g) == len(per_child[0]) for f in g[i].any_of]
                unique = list({repr(f): f for f in facts}.values())
                gates.append(gate.model_copy(update={"any_of": unique}))
        else:
            gates = rule_gates(self.gen, tree, scope, what)
        return gates or [self.read_gate(subject, row, f"found the {self.spec.entities[subject].label}")]

    def _refund_reads(self, action: ActionSpec, subject: str, row: dict[str, Any]) -> list[dict[str, Any]]:
        """Calls that show how a row was paid: its payment records (they name the payment method used)."""
        r = action.refund
        if r is None or r.record is None:
            return []
        rec = self.spec.entities[r.record]
        back = next(g for n, g in rec.fields.items() if g.kind == "ref" and g.ref == subject)
        name = next(n for n, g in rec.fields.items() if g is back)
        return [{"tool": f"search_{rec.plural}", "args": {name: self.key(subject, row)}}]

    def _refund_read_call(self, action: ActionSpec, subject: str, row: dict[str, Any], code: str) -> list[Any]:
        """The refusal oracle's read of how the row was paid, when a refund rule decides."""
        rule = next(r for r, _ in self.gen.rules[action.name] if r.code == code)
        if action.refund is None or action.refund.to not in rule.check:
            return []
        return [call(p["tool"], **p["args"]) for p in self._refund_reads(action, subject, row)]

    def _persona_facts(self, action: ActionSpec, subject: str, row: dict[str, Any], args: dict[str, Any], world: World) -> dict[str, str]:
        """What the person on the line knows about their request: the identifier of the row they mean, the values
        they want, which items, where a refund goes."""
        se = self.spec.entities[subject]
        facts = {se.natural_key or se.key or "": str(row[se.fields[se.natural_key or se.key or ""].column])}
        e = self.spec.entities[action.entity]
        for n, v in args.items():
            if n in e.fields:
                facts[f"new_{n}" if action.kind == "update" else n] = str(v)
        if action.kind == "children":
            facts["which_items"] = self._wording(action, args, world).removeprefix(": ")
        if action.refund is not None:
            facts[f"{action.refund.to}_id"] = str(args[f"{action.refund.to}_id"])
        return facts

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


def _a(word: str) -> str:
    vowel = word[:1].lower() in "aeiou" and not word.lower().startswith(("us", "uni", "eu", "one"))
    return ("an " if vowel else "a ") + word


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


def _wrong(value: str, rng: random.Random) -> str:
    if "@" in value:
        return "x" + value
    digits = [i for i, ch in enumerate(value) if ch.isdigit()]
    if digits:
        i = rng.choice(digits)
        return value[:i] + str((int(value[i]) + rng.randint(1, 8)) % 10) + value[i + 1:]
    return value + " Jr"
