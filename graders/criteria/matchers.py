"""Value matchers: how a rubric says what an argument, an answer or a query result must look like.

A matcher is a small frozen model with a ``match`` discriminator, so rubrics stay serialisable. Anywhere a
matcher is expected a plain value may be written instead and means "equal to this value" — the common
case reads as data (``args={"account_id": 7}``). Helpers build the others::

    number("1250.00", tolerance="0.01")   # Decimal comparison, never floats: money stays exact
    text("Acme Corp")                      # case- and whitespace-insensitive equality
    facts(all_of=["INV-1043", "duplicate"]) # each fact must appear in the text (normalised)

Every matcher returns ``(ok, why)`` where ``why`` is a short human-readable explanation, also on success,
so evidence can say what was compared. A matcher never raises on the value it checks, whatever an agent
sent (a huge exponent, NaN, a lone surrogate, a megabyte of text, a list where text was expected): the
value fails with the reason (see :mod:`graders.criteria.numbers` for how figures are read).
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from graders.criteria.numbers import exact, read_number

__all__ = [
    "Matcher",
    "MatcherField",
    "Eq",
    "Number",
    "Range",
    "Text",
    "Facts",
    "OneOf",
    "Regex",
    "Present",
    "Absent",
    "number",
    "number_range",
    "text",
    "facts",
    "one_of",
    "regex",
    "present",
    "absent",
    "coerce_matcher",
    "to_decimal",
    "normalize_text",
    "short",
    "safe_text",
    "lookup",
    "MISSING",
]


class _Missing:
    """Sentinel for "the field is not there" (distinct from a JSON null)."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()

_RENDER_LIMIT = 100_000
"""Values longer than this (as text) are cut before being rendered: evidence shows 80 characters anyway."""


def safe_text(text: str) -> str:
    """``text`` with lone surrogates escaped (``\\ud800``): evidence must always encode as UTF-8 JSON."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def short(value: Any, limit: int = 80) -> str:
    """A compact, deterministic rendering of ``value`` for evidence text (JSON, truncated; never raises)."""
    if value is MISSING:
        return "<missing>"
    if isinstance(value, str) and len(value) > _RENDER_LIMIT:
        value = value[:_RENDER_LIMIT]
    try:
        rendered = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError, RecursionError):
        try:
            rendered = repr(value)
        except (RecursionError, ValueError):
            rendered = f"<unrenderable {type(value).__name__}>"
    rendered = rendered if len(rendered) <= limit else rendered[: limit - 1] + "…"
    return safe_text(rendered)


def normalize_text(value: str) -> str:
    """Lower-case and collapse whitespace, so "  Acme\\nCorp " equals "acme corp"."""
    return " ".join(value.casefold().split())


def to_decimal(value: Any) -> Decimal | None:
    """The figure ``value`` states, read as :func:`graders.criteria.numbers.read_number` reads it, or None.

    Accepts ``"1,250.00"``, ``"$1250"``, ``"1250.00 USD"``, ints, and JSON floats (read through their
    shortest decimal repr, never their binary value). Returns None when ``value`` is not a figure: NaN,
    infinities, exponents, hex, digits of other scripts, misplaced grouping, text, containers.
    """
    if value is MISSING:
        return None
    return read_number(value).value


def lookup(data: Any, path: str) -> Any:
    """The value at a dotted ``path`` ("lines.0.amount") inside nested dicts/lists, or ``MISSING``."""
    current = data
    for part in path.split("."):
        if isinstance(current, dict):
            if part not in current:
                return MISSING
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return MISSING
    return current


_AUTHORED_EXPONENT = 100
"""Rubric figures stay within 10^±100: every comparison with an agent's figure is then exact and cheap."""


def _strict_decimal(value: str) -> str:
    """Validate a decimal string written by a rubric author (no currency noise, no NaN, a sane magnitude)."""
    try:
        parsed = Decimal(value)
    except InvalidOperation:
        raise ValueError(f"{value!r} is not a decimal string") from None
    if not parsed.is_finite():
        raise ValueError(f"{value!r} is not a finite decimal")
    if parsed and abs(parsed.adjusted()) > _AUTHORED_EXPONENT:
        raise ValueError(f"{value!r} is out of range (a rubric figure stays within 1e±{_AUTHORED_EXPONENT})")
    return value


class _Base(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Eq(_Base):
    """Exactly equal (JSON equality: ``1`` equals ``1`` but not ``"1"``)."""

    match: Literal["eq"] = "eq"
    value: Any

    def check(self, actual: Any) -> tuple[bool, str]:
        """Compare ``actual`` to the expected value (``True`` never equals ``1`` here)."""
        if actual is not MISSING and actual == self.value and isinstance(actual, bool) == isinstance(self.value, bool):
            return True, f"= {short(self.value)}"
        return False, f"expected {short(self.value)}, got {short(actual)}"

    def describe(self) -> str:
        """What the matcher accepts, for names and evidence."""
        return short(self.value, 40)


class Number(_Base):
    """A number within ``tolerance`` of ``value``, compared as exact Decimals (money-safe).

    With ``currency``, a figure labelled with another currency (``"12.00 JPY"``, ``"€12.00"`` where USD is
    asked) fails; an unlabelled one, or one in ``currency``, is read as it stands.
    """

    match: Literal["number"] = "number"
    value: str
    """The expected number as a decimal string, e.g. ``"1250.00"``."""
    tolerance: str = "0"
    """Largest accepted absolute difference, as a decimal string."""
    currency: str | None = Field(default=None, pattern=r"^[A-Z]{3}$")
    """The currency the figure is asked in (``USD``); None: any label is read as it stands."""

    @field_validator("value", "tolerance")
    @classmethod
    def _decimal(cls, v: str) -> str:
        return _strict_decimal(v)

    def check(self, actual: Any) -> tuple[bool, str]:
        """Read ``actual`` as a figure and compare it exactly (never raises: a non-figure fails, saying why)."""
        expected = Decimal(self.value)
        read = read_number(actual) if actual is not MISSING else None
        if read is None or read.value is None:
            why = read.problem if read is not None else "missing"
            return False, f"expected the number {self.value}, got {short(actual)} ({why})"
        conflict = read.contradicts(self.currency)
        if conflict is not None:
            return False, f"expected {self.value} {self.currency}, got {short(actual)} ({conflict})"
        got = read.value
        tolerance = Decimal(self.tolerance)
        context = exact()
        diff = context.subtract(got, expected).copy_abs()  # copy_abs: the builtin abs() rounds to 28 digits
        within = f" ± {self.tolerance}" if tolerance else ""
        if diff <= tolerance:
            return True, f"{got} = {self.value}{within}"
        return False, f"expected {self.value}{within}, got {got} (off by {diff})"

    def describe(self) -> str:
        """What the matcher accepts."""
        return self.value if not Decimal(self.tolerance) else f"{self.value}±{self.tolerance}"


class Range(_Base):
    """A number between ``min`` and ``max`` inclusive (either bound may be omitted); Decimal comparison."""

    match: Literal["range"] = "range"
    min: str | None = None
    max: str | None = None

    @field_validator("min", "max")
    @classmethod
    def _decimal(cls, v: str | None) -> str | None:
        return None if v is None else _strict_decimal(v)

    def check(self, actual: Any) -> tuple[bool, str]:
        """Read ``actual`` as a figure and check the bounds (never raises)."""
        got = to_decimal(actual)
        if got is None:
            return False, f"expected a number in {self.describe()}, got {short(actual)} (not a number)"
        if (self.min is not None and got < Decimal(self.min)) or (self.max is not None and got > Decimal(self.max)):
            return False, f"expected a number in {self.describe()}, got {got}"
        return True, f"{got} in {self.describe()}"

    def describe(self) -> str:
        """The interval, e.g. ``[0, 100]``."""
        return f"[{self.min if self.min is not None else '-inf'}, {self.max if self.max is not None else 'inf'}]"


class Text(_Base):
    """Text equal to ``value`` ignoring case and runs of whitespace."""

    match: Literal["text"] = "text"
    value: str

    def check(self, actual: Any) -> tuple[bool, str]:
        """Normalise both sides and compare."""
        if not isinstance(actual, str):
            return False, f"expected text {short(self.value)}, got {short(actual)}"
        if normalize_text(actual) == normalize_text(self.value):
            return True, f"~ {short(self.value)}"
        return False, f"expected text {short(self.value)} (case/space-insensitive), got {short(actual)}"

    def describe(self) -> str:
        """What the matcher accepts."""
        return f"~{short(self.value, 40)}"


class Facts(_Base):
    """Text that mentions every fact of ``all_of`` and at least one of ``any_of`` (normalised substrings)."""

    match: Literal["facts"] = "facts"
    all_of: list[str] = Field(default_factory=list)
    any_of: list[str] = Field(default_factory=list)

    def check(self, actual: Any) -> tuple[bool, str]:
        """Look for each fact in the normalised text."""
        if not isinstance(actual, str):
            return False, f"expected text mentioning facts, got {short(actual)}"
        haystack = normalize_text(actual)
        missing = [f for f in self.all_of if normalize_text(f) not in haystack]
        found_any = [f for f in self.any_of if normalize_text(f) in haystack]
        problems = []
        if missing:
            problems.append("missing " + ", ".join(repr(f) for f in missing))
        if self.any_of and not found_any:
            problems.append("none of " + ", ".join(repr(f) for f in self.any_of))
        if problems:
            return False, "; ".join(problems) + f" in {short(actual)}"
        mentioned = [*self.all_of, *found_any[:1]]
        return True, "mentions " + ", ".join(repr(f) for f in mentioned)

    def describe(self) -> str:
        """What the matcher accepts."""
        parts = [*self.all_of] + ([" | ".join(self.any_of)] if self.any_of else [])
        return "facts(" + ", ".join(parts) + ")"


class OneOf(_Base):
    """Equal to one of ``values``."""

    match: Literal["one_of"] = "one_of"
    values: list[Any]

    def check(self, actual: Any) -> tuple[bool, str]:
        """Test membership."""
        if actual is not MISSING and any(actual == v and isinstance(actual, bool) == isinstance(v, bool) for v in self.values):
            return True, f"{short(actual)} is one of {short(self.values)}"
        return False, f"expected one of {short(self.values)}, got {short(actual)}"

    def describe(self) -> str:
        """What the matcher accepts."""
        return "one of " + short(self.values, 40)


class Regex(_Base):
    """Text that ``pattern`` matches as a whole (``re.fullmatch``).

    Why whole: an unanchored search for ``pending`` accepts ``"completed / pending_approval / rejected"``,
    a hedge that lists every status. Write ``.*`` where a pattern really may match inside a text.
    """

    match: Literal["regex"] = "regex"
    pattern: str

    def check(self, actual: Any) -> tuple[bool, str]:
        """Match the pattern against the whole text."""
        if isinstance(actual, str) and re.fullmatch(self.pattern, actual):
            return True, f"matches /{self.pattern}/"
        return False, f"expected text matching /{self.pattern}/ (whole text), got {short(actual)}"

    def describe(self) -> str:
        """What the matcher accepts."""
        return f"/{self.pattern}/"


class Present(_Base):
    """The field is given (any value, including null)."""

    match: Literal["present"] = "present"

    def check(self, actual: Any) -> tuple[bool, str]:
        """Test presence."""
        return (True, "present") if actual is not MISSING else (False, "expected the field to be given; it is missing")

    def describe(self) -> str:
        """What the matcher accepts."""
        return "<present>"


class Absent(_Base):
    """The field is not given."""

    match: Literal["absent"] = "absent"

    def check(self, actual: Any) -> tuple[bool, str]:
        """Test absence."""
        return (True, "absent") if actual is MISSING else (False, f"expected no value, got {short(actual)}")

    def describe(self) -> str:
        """What the matcher accepts."""
        return "<absent>"


_KINDS = {"eq", "number", "range", "text", "facts", "one_of", "regex", "present", "absent"}


def coerce_matcher(value: Any) -> Any:
    """A plain value becomes :class:`Eq`; a matcher (model or its JSON dict with a known ``match``) stays."""
    if isinstance(value, _Base):
        return value
    if isinstance(value, dict) and value.get("match") in _KINDS:
        return value
    return Eq(value=value)


Matcher = Annotated[
    Eq | Number | Range | Text | Facts | OneOf | Regex | Present | Absent,
    Field(discriminator="match"),
]
if TYPE_CHECKING:
    # authors write plain values where matchers go (``args={"account_id": 7}``); type checkers read the
    # constructor's parameter types from the annotations, so they must accept anything here
    MatcherField = Any
else:
    MatcherField = Annotated[Matcher, BeforeValidator(coerce_matcher)]
"""A field typed ``MatcherField`` accepts a matcher or a plain value (meaning equality)."""


def _decimal_string(value: str | int, what: str) -> str:
    if isinstance(value, float | bool) or to_decimal(value) is None:
        raise ValueError(f"{what} must be a decimal string or an int (never a float), got {value!r}")
    return value if isinstance(value, str) else str(value)


def number(value: str | int, tolerance: str | int = "0", *, currency: str | None = None) -> Number:
    """A Decimal comparison matcher: ``number("1250.00")``, ``number("3.5", tolerance="0.05")``,
    ``number("12.00", currency="USD")`` (a figure labelled with another currency then fails)."""
    return Number(value=_decimal_string(value, "number()"), tolerance=_decimal_string(tolerance, "tolerance"), currency=currency)


def number_range(min: str | int | None = None, max: str | int | None = None) -> Range:
    """A Decimal interval matcher: ``number_range(min="0", max="100")``."""
    return Range(
        min=None if min is None else _decimal_string(min, "min"),
        max=None if max is None else _decimal_string(max, "max"),
    )


def text(value: str) -> Text:
    """A case- and whitespace-insensitive text matcher."""
    return Text(value=value)


def facts(all_of: list[str] | None = None, any_of: list[str] | None = None) -> Facts:
    """A matcher for text that must mention facts: all of ``all_of`` and at least one of ``any_of``."""
    if not all_of and not any_of:
        raise ValueError("facts() needs at least one fact in all_of or any_of")
    return Facts(all_of=all_of or [], any_of=any_of or [])


def one_of(*values: Any) -> OneOf:
    """A membership matcher: ``one_of("fraud", "fraud suspected")``."""
    return OneOf(values=list(values))


def regex(pattern: str) -> Regex:
    """A whole-text ``re.fullmatch`` matcher."""
    re.compile(pattern)
    return Regex(pattern=pattern)


def present() -> Present:
    """Matches any given value."""
    return Present()


def absent() -> Absent:
    """Matches a field that was not given."""
    return Absent()
