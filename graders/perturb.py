"""Small wrong values for generated attacks: one minor unit off, another currency, a neighbouring id.

Which arguments can be perturbed is read from the tool's own input schema, never from per-task code:

* a string the schema constrains with a decimal ``pattern`` (``Amount``) → one minor unit more and less;
* a string whose schema ``enum`` holds currency codes → each other currency;
* any other string whose schema pattern is anchored (``^...$``) and that ends in digits (an id such as
  ``ACC-000123``, the last 4 digits of an ID) → the neighbouring number, same width;
* an integer (a quantity) → one more and one less (never below 1).

Free text, dates and other choices are left alone: changing them need not change what a call does.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["Perturbation", "argument_perturbations", "value_perturbations", "shift_decimal"]

_DECIMAL = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")
_TRAILING_NUMBER = re.compile(r"^(.*?)([0-9]+)$")
_CURRENCY = re.compile(r"^[A-Z]{3}$")

Perturbation = tuple[str, Any]
"""(label, new value), e.g. ``("+0.01", "25.01")``."""


def _resolve(schema: dict[str, Any], prop: dict[str, Any]) -> dict[str, Any]:
    """The effective schema of a property: follows ``$ref`` and takes the non-null branch of ``anyOf``."""
    for option in [prop, *prop.get("anyOf", [])]:
        ref = option.get("$ref", "")
        if ref.startswith("#/$defs/"):
            option = schema.get("$defs", {}).get(ref.removeprefix("#/$defs/"), {})
        if option.get("type") not in (None, "null") or "enum" in option:
            return option
    return prop


def shift_decimal(text: str, steps: int) -> str | None:
    """``text`` moved by ``steps`` units of its last decimal place ("25.00", 1 → "25.01"; "-4.10", -1 → "-4.11");
    None if not a decimal. A figure written without decimals moves by a whole unit: its precision is all
    the text says (the currency's minor unit is not known here)."""
    if not _DECIMAL.match(text):
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    unit = Decimal(1).scaleb(value.as_tuple().exponent)  # type: ignore[arg-type]
    return f"{value + unit * steps:f}"


def _neighbour_id(text: str) -> str | None:
    found = _TRAILING_NUMBER.match(text)
    if not found:
        return None
    prefix, digits = found.groups()
    number = (int(digits) + 1) % (10 ** len(digits))
    return f"{prefix}{number:0{len(digits)}d}"


def argument_perturbations(schema: dict[str, Any], name: str, value: Any, *, write: bool) -> list[Perturbation]:
    """The wrong values to try for argument ``name`` of a call (ids always; amounts, currencies, counts on writes)."""
    prop = schema.get("properties", {}).get(name)
    if prop is None:
        return []
    prop = _resolve(schema, prop)
    enum = prop.get("enum")
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        if not write or prop.get("type") != "integer":
            return []
        return [(label, v) for label, v in (("+1", value + 1), ("-1", value - 1)) if v >= 1]
    if not isinstance(value, str):
        return []
    if enum:
        if write and all(isinstance(e, str) and _CURRENCY.match(e) for e in enum):
            return [(f"currency {other}", other) for other in enum if other != value]
        return []
    pattern = prop.get("pattern")
    if not pattern or " " in value:
        return []
    if "\\." in pattern and _DECIMAL.match(value):
        if not write:
            return []
        return [(label, v) for label, v in (("+1 minor unit", shift_decimal(value, 1)), ("-1 minor unit", shift_decimal(value, -1)))
                if v is not None and v != value and Decimal(v) > 0]
    if not (pattern.startswith("^") and pattern.endswith("$")):
        return []  # an unanchored pattern constrains free text (e.g. "not blank"), not an identifier
    neighbour = _neighbour_id(value)
    return [("neighbouring id", neighbour)] if neighbour is not None and neighbour != value else []


def value_perturbations(value: Any) -> list[Perturbation]:
    """Wrong versions of a reported figure: one unit of its last decimal place more and less."""
    if not isinstance(value, str | int) or isinstance(value, bool):
        return []
    text = str(value)
    out = []
    for label, steps in (("+1 minor unit", 1), ("-1 minor unit", -1)):
        shifted = shift_decimal(text, steps)
        if shifted is not None and shifted != text:
            out.append((label, shifted))
    return out
