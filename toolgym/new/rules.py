"""Rules as data: the small expression language of a spec's preconditions, parsed once and evaluated on the world.

A rule is an expression that must hold for an action to go ahead::

    order.status in [delivered, shipped]          # bare words in a list are text values
    amount <= invoice.total - sum(refunds.amount)  # an argument, a row's money, an aggregate over child rows
    count(refunds) < 3                             # how many child rows the row has
    invoice.customer.country != 'Norway'           # a parent row reached through a reference field
    account.opened_on < today

Names are the entities the action involves (its row; for ``create``, the parent row too, by its entity name),
the action's arguments, and ``today``. Money is compared as exact decimals in the currency's units. Only
comparisons, ``and``/``or``/``not``, ``+ - *``, literals and ``sum``/``count`` over an entity's child rows are
allowed: a rule is data, never code.
"""

from __future__ import annotations

import ast
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolgym.new.errors import NewError

if TYPE_CHECKING:
    from fixtures.world import World
    from toolgym.new.spec import ActionSpec, FieldSpec, Spec

__all__ = ["parse_rule", "check_rules", "Row", "evaluate", "action_names", "replacement_names", "compare_bound"]

_CMP = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
        ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
        ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_ALLOWED = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.Compare, ast.BinOp,
            ast.Add, ast.Sub, ast.Mult, ast.Constant, ast.Name, ast.Load, ast.Attribute, ast.List, ast.Tuple, ast.Call,
            *_CMP)


def parse_rule(text: str) -> ast.Expression:
    """Parse a rule; ValueError names what is not allowed."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"not an expression ({exc.msg})") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise ValueError(f"{type(node).__name__} is not allowed in a rule (comparisons, and/or/not, + - *, sum(), count())")
        if isinstance(node, ast.Call) and (not isinstance(node.func, ast.Name) or node.func.id not in ("sum", "count", "values")
                                           or len(node.args) != 1 or node.keywords):
            raise ValueError("the only functions are sum(children.field), count(children) and values(children.field)")
    return tree


def action_names(spec: Spec, action: ActionSpec) -> dict[str, str]:
    """Names a rule of ``action`` may use: entity names (→ ``"row"``) and argument names (→ ``"arg"``)."""
    names = {"today": "today"} if action.kind == "create" else {action.entity: "row", "today": "today"}  # a new row is not there yet
    if action.kind in ("create", "children"):  # children: each chosen child by its entity name, and the row they belong to
        parent = spec.entities[action.entity].fields[action.parent or ""].ref or ""
        names[parent] = "row"
    names.update({f: "arg" for f in action.fields if f != action.parent})
    if action.refund is not None:  # the row refunded to, and its id as given
        names[action.refund.to] = "row"
        names[f"{action.refund.to}_id"] = "arg"
    names.update({n: "row" for n in replacement_names(spec, action)})
    return names


def replacement_names(spec: Spec, action: ActionSpec) -> dict[str, str]:
    """A ``replace`` action's name for the row each chosen child gets instead (``new_variant``) → its entity."""
    if action.kind != "children" or not action.replace:
        return {}
    target = spec.entities[action.entity].fields[action.replace].ref or ""
    return {f"new_{target}": target}


def check_rules(spec: Spec, path: Path | str) -> None:
    """Parse every rule of ``spec`` and check the names it uses.

    Raises:
        NewError: a rule does not parse or names something its action does not have (names the action, the rule
            and what it may use).
    """
    plurals = {e.plural: n for n, e in spec.entities.items()}
    for action in spec.actions:
        known = action_names(spec, action)
        for rule in action.rules:
            where = f"spec file {str(path)!r}: action {action.name!r}, rule {rule.code!r} ({rule.check!r})"
            try:
                tree = parse_rule(rule.check)
            except ValueError as exc:
                raise NewError(f"{where}: {exc}") from None
            inside_lists = {id(e) for n in ast.walk(tree) if isinstance(n, (ast.List, ast.Tuple)) for e in n.elts}
            inside_lists |= {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
            rows = [n for n, k in known.items() if k == "row"]
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    arg = node.args[0]
                    base = arg.value if isinstance(arg, ast.Attribute) else arg
                    if not isinstance(base, ast.Name) or base.id not in plurals:
                        raise NewError(f"{where}: {node.func.id}() takes a child entity's plural "  # type: ignore[attr-defined]
                                       f"({', '.join(sorted(plurals))}), e.g. sum(refunds.amount)")
                    child = spec.entities[plurals[base.id]]
                    if not any(f.kind == "ref" and f.ref in rows for f in child.fields.values()):
                        raise NewError(f"{where}: {base.id} do not refer to {' or '.join(rows) or 'a row of this action'}, so "
                                       f"{node.func.id}({base.id}...) has nothing to count")  # type: ignore[attr-defined]
                    if node.func.id == "values":  # type: ignore[attr-defined]
                        if not isinstance(arg, ast.Attribute) or arg.attr not in child.fields:
                            raise NewError(f"{where}: values() takes children.field, a field of {base.id}, e.g. values({base.id}.{next(iter(child.fields))})")
                    elif node.func.id == "sum":  # type: ignore[attr-defined]
                        if not isinstance(arg, ast.Attribute) or not isinstance(arg.value, ast.Name):
                            raise NewError(f"{where}: sum() takes children.field, e.g. sum({base.id}.amount)")
                        if arg.attr not in child.fields or child.fields[arg.attr].kind not in ("money", "integer", "decimal"):
                            numeric = [n for n, f in child.fields.items() if f.kind in ("money", "integer", "decimal")]
                            raise NewError(f"{where}: {base.id} have no number field {arg.attr!r}; sum() takes one of "
                                           f"{', '.join(numeric) or '(none)'}")
                    elif isinstance(arg, ast.Attribute):
                        raise NewError(f"{where}: count() takes the children's plural alone, e.g. count({base.id})")
                elif isinstance(node, ast.Attribute) and not any(node is c for n in ast.walk(tree) if isinstance(n, ast.Attribute) for c in [n.value]):
                    _check_path(spec, node, known, plurals, where)
                elif isinstance(node, ast.Name) and id(node) not in inside_lists and node.id not in known and node.id not in plurals:
                    raise NewError(f"{where}: unknown name {node.id!r}; this rule may use {', '.join(sorted(known))}")
            _check_values(spec, tree, known, plurals, where)


def _check_path(spec: Spec, node: ast.Attribute, known: dict[str, str], plurals: dict[str, str], where: str) -> FieldSpec | None:
    """``entity.field`` / ``entity.parent.field`` names fields that exist: each step but the last a reference."""
    parts: list[str] = []
    cur: ast.AST = node
    while isinstance(cur, ast.Attribute):
        parts.insert(0, cur.attr)
        cur = cur.value
    if not isinstance(cur, ast.Name):
        raise NewError(f"{where}: {ast.unparse(node)!r}: a field is reached from an entity's name, e.g. order.status")
    if cur.id in plurals and cur.id not in known:
        return None  # sum(children.field): checked with the call
    if cur.id not in known:
        raise NewError(f"{where}: unknown name {cur.id!r}; this rule may use {', '.join(sorted(known))}")
    if known.get(cur.id) != "row":
        raise NewError(f"{where}: {cur.id!r} has no fields; fields are read from {', '.join(n for n, k in known.items() if k == 'row')}")
    entity, path = cur.id, cur.id
    for action in spec.actions:  # the replacement row of a replace action is named new_<entity>
        entity = replacement_names(spec, action).get(cur.id, entity)
    for i, part in enumerate(parts):
        e = spec.entities[entity]
        f = e.fields.get(part)
        last = i == len(parts) - 1
        if f is not None and last:
            return f
        ref = f if f is not None and f.kind == "ref" else e.fields.get(f"{part}_id")
        if ref is not None and ref.kind == "ref" and not last:
            if spec.entities[ref.ref or ""].key is None:
                raise NewError(f"{where}: {path}.{part}: {ref.ref} has no single-column key, so its rows cannot be reached")
            entity, path = ref.ref or "", f"{path}.{part}"
            continue
        refs = [n.removesuffix("_id") for n, g in e.fields.items() if g.kind == "ref"]
        what = ("is not a reference, so it has no fields" if f is not None else
                f"is not a field of {entity} (fields: {', '.join(e.fields)}" + (f"; parents: {', '.join(refs)}" if refs else "") + ")")
        raise NewError(f"{where}: {path}.{part} {what}")
    return None


def _check_values(spec: Spec, tree: ast.Expression, known: dict[str, str], plurals: dict[str, str], where: str) -> None:
    """``entity.status in [a, b]`` / ``== 'a'``: each value is one the category field has (a typo never matches)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare) or not isinstance(node.left, ast.Attribute):
            continue
        f = _check_path(spec, node.left, known, plurals, where)
        if f is None or f.kind != "category" or not f.values:
            continue
        for comp in node.comparators:
            items = comp.elts if isinstance(comp, (ast.List, ast.Tuple)) else [comp]
            for item in items:
                value = item.id if isinstance(item, ast.Name) and item.id not in known else (
                    item.value if isinstance(item, ast.Constant) and isinstance(item.value, str) else None)
                if value is not None and value not in f.values:
                    raise NewError(f"{where}: {value!r} is not a value of {ast.unparse(node.left)} ({', '.join(f.values)}); a new value goes into the field's 'values' in the spec first")


class Row:
    """A row as rules see it: fields by the agent's names (money as Decimal units), parents through references."""

    def __init__(self, spec: Spec, entity: str, data: dict[str, Any], world: World) -> None:
        self.spec, self.entity, self.data, self.world = spec, entity, data, world

    @property
    def key(self) -> Any:
        e = self.spec.entities[self.entity]
        return self.data[e.fields[e.key or ""].column]

    def get(self, name: str, *, navigate: bool = False) -> Any:
        """The field ``name`` (money as Decimal units); with ``navigate``, a reference field's row (a step in a path)."""
        e = self.spec.entities[self.entity]
        f = e.fields.get(name)
        if navigate and f is not None and f.kind == "ref":
            return load_row(self.spec, self.world, f.ref or "", self.data[f.column], by=f.to)
        if f is None and f"{name}_id" in e.fields and e.fields[f"{name}_id"].kind == "ref":
            ref = e.fields[f"{name}_id"]
            return load_row(self.spec, self.world, ref.ref or "", self.data[ref.column], by=ref.to)
        if f is None:
            raise ValueError(f"{self.entity} has no field {name!r}")
        value = self.data[f.column]
        if f.kind == "money" and value is not None:
            return Decimal(int(value)).scaleb(-f.scale)
        return value


def load_row(spec: Spec, world: World, entity: str, key: Any, *, by: str | None = None) -> Row | None:
    """The row of ``entity`` whose key (or field ``by``: a reference to a non-key field) is ``key``; None if none."""
    e = spec.entities[entity]
    found = world.query(f'SELECT * FROM "{e.table}" WHERE "{e.fields[by or e.key or ""].column}" = ?', (key,))
    return Row(spec, entity, dict(found[0]), world) if found else None


def _children(spec: Spec, plural: str, scope: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    child = next(n for n, e in spec.entities.items() if e.plural == plural)
    ce = spec.entities[child]
    for row in scope.values():
        if not isinstance(row, Row) or row.entity == child:
            continue
        link = next((f for f in ce.fields.values() if f.kind == "ref" and f.ref == row.entity), None)
        if link is not None:
            return child, [dict(r) for r in row.world.query(f'SELECT * FROM "{ce.table}" WHERE "{link.column}" = ?',
                                                            (row.data[spec.ref_column(link)],))]
    raise ValueError(f"no row in this rule's scope has {plural}")


def evaluate(tree: ast.Expression, spec: Spec, scope: dict[str, Any]) -> Any:
    """The value of a parsed rule in ``scope`` (entity names → :class:`Row`, argument names → values, ``today``).

    A comparison with a missing value (NULL) is False: a rule cannot be shown to hold on data that is not there.
    """

    def ev(node: ast.AST, in_list: bool = False, navigate: bool = False) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant):
            return Decimal(str(node.value)) if isinstance(node.value, float) else node.value
        if isinstance(node, ast.Name):
            if node.id in scope:
                return scope[node.id]
            if in_list:
                return node.id
            raise ValueError(f"unknown name {node.id!r}")
        if isinstance(node, (ast.List, ast.Tuple)):
            return [ev(e, True) for e in node.elts]
        if isinstance(node, ast.Attribute):
            base = ev(node.value, navigate=True)
            if not isinstance(base, Row):
                return None
            return base.get(node.attr, navigate=navigate)
        if isinstance(node, ast.BoolOp):
            values = [bool(ev(v)) for v in node.values]
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.UnaryOp):
            value = ev(node.operand)
            return (not value) if isinstance(node.op, ast.Not) else (None if value is None else -value)
        if isinstance(node, ast.BinOp):
            left, right = ev(node.left), ev(node.right)
            if left is None or right is None:
                return None
            return left + right if isinstance(node.op, ast.Add) else left - right if isinstance(node.op, ast.Sub) else left * right
        if isinstance(node, ast.Compare):
            left = ev(node.left)
            for op, comp in zip(node.ops, node.comparators, strict=True):
                right = ev(comp)
                if left is None or right is None:
                    return False
                if isinstance(right, list):
                    right = [str(v) for v in right] if isinstance(left, str) else right
                try:
                    if not _CMP[type(op)](left, right):
                        return False
                except TypeError:
                    return False
                left = right
            return True
        if isinstance(node, ast.Call):
            arg = node.args[0]
            plural = arg.value.id if isinstance(arg, ast.Attribute) else arg.id  # type: ignore[attr-defined]
            child, found = _children(spec, plural, scope)
            if node.func.id == "count":  # type: ignore[attr-defined]
                return len(found)
            f = spec.entities[child].fields[arg.attr]  # type: ignore[attr-defined]
            if node.func.id == "values":  # type: ignore[attr-defined]
                return [r[f.column] for r in found if r[f.column] is not None]
            total = sum(int(r[f.column] or 0) for r in found) if f.kind == "money" else sum(r[f.column] or 0 for r in found)
            return Decimal(total).scaleb(-f.scale) if f.kind == "money" else total
        raise ValueError(f"cannot evaluate {type(node).__name__}")

    return ev(tree)


def compare_bound(tree: ast.Expression, arg: str, spec: Spec, scope: dict[str, Any]) -> tuple[str, Any] | None:
    """For a rule ``arg OP expr`` (or ``expr OP arg``): (OP as written with arg on the left, the value of expr).

    Task templates use it to choose an argument that keeps or breaks the rule. None for any other shape.
    """
    body = tree.body
    if not isinstance(body, ast.Compare) or len(body.ops) != 1:
        return None
    flip = {ast.Lt: ">", ast.LtE: ">=", ast.Gt: "<", ast.GtE: "<="}
    same = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
    op = type(body.ops[0])
    if op not in same:
        return None
    left, right = body.left, body.comparators[0]
    if isinstance(left, ast.Name) and left.id == arg:
        return same[op], evaluate(ast.Expression(body=right), spec, scope)
    if isinstance(right, ast.Name) and right.id == arg:
        return flip[op], evaluate(ast.Expression(body=left), spec, scope)
    return None
