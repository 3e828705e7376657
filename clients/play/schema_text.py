"""A tool's input schema in words: each argument's type, whether it is required, its choices and its meaning.

``help TOOL`` prints what an agent reads as JSON Schema, the way a person reads a man page: ``amount`` —
*string, required* — "A positive decimal amount as a string, e.g. 12.50". Only the schema is read (never the
tool's code), so the player learns exactly what an agent can.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["Argument", "arguments_of", "type_text"]

_MAX_CHOICES = 60
"""Enum values listed in full up to this many (a reason-code list is ~45); beyond, the first ones and a count."""


@dataclass(frozen=True)
class Argument:
    """One argument of a tool, as ``help TOOL`` shows it."""

    name: str
    type: str
    """``string``, ``integer``, ``one of: a, b``, ``list of string``, ``object of name → string``..."""
    required: bool
    default: str | None
    """The default as JSON text, when the schema gives one (and it is not null)."""
    description: str
    constraints: str
    """Pattern, length, range, format and examples, in words (empty when none)."""


def _resolve(node: Any, root: dict[str, Any]) -> dict[str, Any]:
    """``node`` with a local ``$ref`` (``#/$defs/X``) followed; anything else unchanged."""
    seen = 0
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/") and seen < 20:
        target: Any = root
        for part in node["$ref"][2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        seen += 1
    return node if isinstance(node, dict) else {}


def _options(node: dict[str, Any], root: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    """The non-null alternatives of an ``anyOf``/``oneOf`` (or the node itself), and whether null is allowed."""
    alternatives = node.get("anyOf") or node.get("oneOf")
    if not isinstance(alternatives, list):
        return [node], node.get("type") == "null"
    resolved = [_resolve(a, root) for a in alternatives]
    kept = [a for a in resolved if a.get("type") != "null"]
    return kept or resolved, len(kept) < len(resolved)


def _choices(values: list[Any]) -> str:
    shown = [v if isinstance(v, str) else json.dumps(v) for v in values[:_MAX_CHOICES]]
    more = f", ... ({len(values)} in all)" if len(values) > _MAX_CHOICES else ""
    return "one of: " + ", ".join(shown) + more


def type_text(node: Any, root: dict[str, Any], depth: int = 0) -> str:
    """A schema node's type in words (``integer``, ``one of: a, b``, ``list of string``...)."""
    node = _resolve(node, root)
    if depth > 4:
        return "value"
    options, _nullable = _options(node, root)
    if len(options) > 1:
        return " or ".join(type_text(o, root, depth + 1) for o in options)
    node = _resolve(options[0], root)
    if "enum" in node and isinstance(node["enum"], list):
        return _choices(node["enum"])
    if "const" in node:
        return _choices([node["const"]])
    kind = node.get("type")
    if isinstance(kind, list):
        kind = " or ".join(str(k) for k in kind if k != "null")
    if kind == "array":
        items = node.get("items")
        return f"list of {type_text(items, root, depth + 1)}" if items else "list"
    if kind == "object":
        properties = node.get("properties")
        if isinstance(properties, dict) and properties:
            return "object with " + ", ".join(properties)
        patterned = node.get("patternProperties")
        extra = node.get("additionalProperties")
        value = (
            next(iter(patterned.values()))
            if isinstance(patterned, dict) and patterned
            else extra
            if isinstance(extra, dict)
            else None
        )
        return f"object of name → {type_text(value, root, depth + 1)}" if value else "object"
    return str(kind or "value")


def _constraints(node: dict[str, Any], root: dict[str, Any]) -> str:
    options, _ = _options(_resolve(node, root), root)
    node = {**node, **_resolve(options[0], root)} if len(options) == 1 else node
    parts: list[str] = []
    if isinstance(node.get("format"), str):
        parts.append(f"format {node['format']}")
    if isinstance(node.get("pattern"), str):
        parts.append(f"pattern {node['pattern']}")
    low, high = node.get("minLength"), node.get("maxLength")
    if node.get("type") == "string" and (low not in (None, 0, 1) or high is not None):
        if high is None:
            parts.append(f"at least {low} characters")
        else:
            parts.append(f"{low}-{high} characters" if low not in (None, 0, 1) else f"at most {high} characters")
    for key, word in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<")):
        if isinstance(node.get(key), int | float) and not isinstance(node.get(key), bool):
            parts.append(f"{word} {node[key]}")
    if node.get("type") == "array" and node.get("maxItems") is not None:
        parts.append(f"at most {node['maxItems']} items")
    if node.get("type") == "object" and isinstance(node.get("patternProperties"), dict):
        parts.append("names match " + ", ".join(node["patternProperties"]))
    examples = node.get("examples")
    if isinstance(examples, list) and examples:
        parts.append("e.g. " + ", ".join(e if isinstance(e, str) else json.dumps(e) for e in examples[:3]))
    return "; ".join(parts)


def _description(node: dict[str, Any], root: dict[str, Any]) -> str:
    if isinstance(node.get("description"), str):
        return node["description"]
    options, _ = _options(_resolve(node, root), root)
    found = next((o.get("description") for o in options if isinstance(o.get("description"), str)), None)
    return found or ""


def arguments_of(schema: dict[str, Any] | None) -> list[Argument]:
    """The arguments of a tool's input schema, required ones first, each in the schema's order."""
    if not isinstance(schema, dict):
        return []
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return []
    required = set(schema.get("required") or ())
    found: list[Argument] = []
    for name, raw in properties.items():
        node = _resolve(raw, schema)
        default = node.get("default")
        found.append(
            Argument(
                name=str(name),
                type=type_text(node, schema),
                required=name in required,
                default=None if default is None else json.dumps(default, ensure_ascii=False),
                description=" ".join(_description(node, schema).split()),
                constraints=_constraints(node, schema),
            )
        )
    return sorted(found, key=lambda a: not a.required)
