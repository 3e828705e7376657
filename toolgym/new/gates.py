"""The one place a generated template says which facts justify its answer, its refusal or its act.

Gates name rows and fields, never tools (``graders.criteria.seen``): a generated result model declares the row it
shows (``@row_view`` in :mod:`toolgym.new.runtime`), so a fact read with ``get_<entity>``, with
``search_<plural>`` (a summary shows a row's references, categories, money and dates), or in a parent's
``related`` counts passes the same gate. Helpers:

- :func:`read_gate`: the agent saw row ``key`` of an entity (the given fields of it);
- :func:`rule_gates`: the facts a refused rule was decided on — the fields its expression reads, of the rows it
  reads them from (the row acted on, a parent reached through a reference, the row a refund would go to, the
  children a ``count``/``sum``/``values`` goes over), explained only as far as the rule's value needs (of a failed
  ``and``, the part that failed);
- :func:`figure_gate`: a count or a sum over a row's children: every counted row seen (with the fields that
  qualify it), or the parent's ``related`` count where that is the figure; over more rows than a person pages
  through, the search result that showed the figure (``total``, ``sums``) — a figure is not a row, so there the
  gate matches the result it was shown in, which the lint accepts as the fact itself.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from graders.criteria import AnyToolCalled, Fact, Seen, fact
from toolgym.new.rules import Row, evaluate

if TYPE_CHECKING:
    from toolgym.new.runtime import GeneratedEnvironment

__all__ = ["read_gate", "row_fact", "rule_gates", "figure_gate", "PAGEABLE"]

PAGEABLE = 100
"""Rows a careful person still reads one by one (two pages of 50); over this, a figure comes from the search's
``total`` or ``sums``."""


def row_fact(gen: GeneratedEnvironment, entity: str, key: Any, fields: list[str] | tuple[str, ...] = ()) -> Fact:
    """The fact "row ``key`` of ``entity`` was shown, with ``fields``" (fields some tool shows; others are dropped)."""
    e = gen.spec.entities[entity]
    shown = [f for f in dict.fromkeys(fields) if f in ("related", "currency") and f not in e.fields
             or f in e.fields and e.fields[f].visible and e.fields[f].kind != "secret"]
    return fact(e.table, key if isinstance(key, list) else [key], *shown)


def read_gate(gen: GeneratedEnvironment, entity: str, key: Any, fields: list[str], name: str, *, weight: float = 2,
              also: list[Fact] | tuple[Fact, ...] = ()) -> Seen:
    """A gate: the agent saw row(s) ``key`` of ``entity`` with ``fields`` before deciding; ``also``: other facts that
    count as well (another row showing the same thing, a parent's counts)."""
    return Seen(name=name, any_of=[row_fact(gen, entity, key, fields), *also], weight=weight, gate=True)


def _path(node: ast.AST) -> tuple[str, list[str]] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    return (node.id, parts) if isinstance(node, ast.Name) else None


class _Explainer:
    """The facts a rule's value rests on, in a scope of rows (module docstring)."""

    def __init__(self, gen: GeneratedEnvironment, scope: dict[str, Any]) -> None:
        self.gen, self.spec, self.scope = gen, gen.spec, scope

    def value(self, node: ast.AST) -> Any:
        return evaluate(ast.Expression(body=node), self.spec, self.scope)  # type: ignore[arg-type]

    def facts(self, node: ast.AST) -> list[list[Fact]]:
        """Groups of alternatives: every group must be seen (one fact of it)."""
        if isinstance(node, ast.Expression):
            return self.facts(node.body)
        if isinstance(node, ast.BoolOp):
            value = bool(self.value(node))
            decisive = [v for v in node.values if bool(self.value(v)) == value]
            if isinstance(node.op, ast.And) != value and decisive:  # a failed and / a held or: one part decides it
                return min((self.facts(v) for v in decisive), key=len)
            return [g for v in node.values for g in self.facts(v)]
        if isinstance(node, ast.UnaryOp):
            return self.facts(node.operand)
        if isinstance(node, (ast.Compare, ast.BinOp)):
            parts = [node.left, *node.comparators] if isinstance(node, ast.Compare) else [node.left, node.right]
            return [g for p in parts for g in self.facts(p)]
        if isinstance(node, (ast.List, ast.Tuple)):
            return [g for e in node.elts for g in self.facts(e)]
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.Call):
            return self._children(node)
        return []

    def _attribute(self, node: ast.Attribute) -> list[list[Fact]]:
        found = _path(node)
        if found is None or not isinstance(self.scope.get(found[0]), Row):
            return []
        row: Row | None = self.scope[found[0]]
        out: list[list[Fact]] = []
        for i, part in enumerate(found[1]):
            if row is None:
                break
            e = self.spec.entities[row.entity]
            last = i == len(found[1]) - 1
            name = part if part in e.fields and (last or e.fields[part].kind == "ref") else f"{part}_id"
            if name not in e.fields:
                break
            # a field with no value is never shown (provenance counts values): then the row itself is the fact
            held = row.data.get(e.fields[name].column) is not None
            out.append([row_fact(self.gen, row.entity, row.key, [name] if held else [])])
            if last:
                break
            row = row.get(name, navigate=True)
        return out

    def _children(self, node: ast.Call) -> list[list[Fact]]:
        arg = node.args[0]
        plural = arg.value.id if isinstance(arg, ast.Attribute) else getattr(arg, "id", "")  # type: ignore[attr-defined]
        child = next((n for n, e in self.spec.entities.items() if e.plural == plural), None)
        if child is None:
            return []
        ce = self.spec.entities[child]
        for row in self.scope.values():
            if not isinstance(row, Row) or row.entity == child:
                continue
            links = [n for n, f in ce.fields.items() if f.kind == "ref" and f.ref == row.entity]
            if not links:
                continue
            link = ce.fields[links[0]]
            target = self.spec.ref_column(link)
            kids = row.world.query(f'SELECT "{ce.fields[ce.key or ""].column}" AS k FROM "{ce.table}" WHERE "{link.column}" = ?',
                                   (row.data[target],))
            keys = [r["k"] for r in kids]
            fields = [links[0]]  # every child row seen (the field summed may be empty on some: shown rows show it when set)
            options = [row_fact(self.gen, child, keys, fields)] if keys and len(keys) <= PAGEABLE else []
            if len(links) == 1 and self.spec.entities[row.entity].key is not None:
                if node.func.id == "count" or not keys:  # type: ignore[attr-defined]
                    options.append(row_fact(self.gen, row.entity, row.key, ["related"]))  # the parent's counts show it
            return [options] if options else []
        return []


def rule_gates(gen: GeneratedEnvironment, tree: ast.Expression, scope: dict[str, Any], name: str, *, weight: float = 2) -> list[Seen]:
    """The gates on the facts rule ``tree`` was decided on in ``scope`` (rows by entity name, arguments, ``today``):
    one gate per fact, each with its alternatives (module docstring). Empty when the rule reads no row (it bounds
    an argument by a constant the policy states)."""
    groups = _Explainer(gen, scope).facts(tree)
    merged: dict[str, list[Fact]] = {}
    for group in groups:  # one gate per row: its fields merged (order.status and order.user_id are one read)
        if len(group) == 1 and len(group[0].keys) == 1:
            merged.setdefault(f"{group[0].table}/{group[0].keys[0]}", []).append(group[0])
        else:
            merged.setdefault(repr(group), []).extend(group)
    gates = []
    for label, facts in merged.items():
        if "/" in label and not label.startswith("["):
            first = facts[0]
            fields = list(dict.fromkeys(f for x in facts for f in x.fields))
            alternatives = [fact(first.table, first.keys, *fields)]
        else:
            alternatives = facts
        words = ", ".join(a.describe() for a in alternatives[:2])
        gates.append(Seen(name=f"{name}: saw {words}", any_of=alternatives, weight=weight, gate=True))
    return gates


def figure_gate(gen: GeneratedEnvironment, child: str, link: str, parent_key: Any, parent_entity: str, keys: list[Any],
                fields: list[str], search_args: dict[str, Any], name: str, *, figure: tuple[str, str] | None = None,
                whole: bool = False) -> Seen | AnyToolCalled:
    """A gate on a count or sum over children (module docstring).

    Args:
        keys: the children the figure is over (after any filter).
        fields: the fields that qualify a child for the figure (the filter's, the summed one).
        search_args: the search that lists exactly those children (for the large case).
        figure: the result path and value the search shows (``("total", "12")``, ``("sums.amount", "9.50")``).
        whole: the figure is the count of all the parent's children (its ``related`` count shows it).
    """
    c = gen.spec.entities[child]
    p = gen.spec.entities[parent_entity]
    single = sum(1 for f in c.fields.values() if f.kind == "ref" and f.ref == parent_entity) == 1
    related = [row_fact(gen, parent_entity, parent_key, ["related"])] if whole and single and p.key is not None else []
    if keys and len(keys) <= PAGEABLE:  # every row seen by its link (a summed field may be empty on some rows)
        return Seen(name=name, any_of=[row_fact(gen, child, keys, [link, *fields]), *related], weight=2, gate=True)
    if related and not keys:
        return Seen(name=name, any_of=related, weight=2, gate=True)
    assert figure is not None
    path, value = figure
    patterns: list[dict[str, Any]] = [{"tool": f"search_{c.plural}", "args": search_args, "result": {path: value}}]
    if related:
        patterns.append({"tool": f"get_{parent_entity}", "args": {p.key or "": parent_key},
                         "result": {f"related.{c.plural}": int(value)}})
    return AnyToolCalled(name=name, patterns=patterns, gate=True, weight=2)
