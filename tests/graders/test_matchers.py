"""Matchers: exact values, Decimal numbers (never floats), normalised text, facts, and their explanations."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic import TypeAdapter, ValidationError

from graders.criteria.matchers import (
    MISSING,
    Eq,
    MatcherField,
    absent,
    facts,
    lookup,
    number,
    number_range,
    one_of,
    present,
    regex,
    text,
    to_decimal,
)

adapter: TypeAdapter[object] = TypeAdapter(MatcherField)


def test_plain_values_mean_equality_and_true_is_not_one() -> None:
    assert adapter.validate_python(7) == Eq(value=7)
    assert adapter.validate_python({"account": 1}) == Eq(value={"account": 1})
    assert Eq(value=1).check(1) == (True, "= 1")
    assert Eq(value=1).check(True) == (False, "expected 1, got true")
    assert Eq(value="7").check(7) == (False, 'expected "7", got 7')
    assert Eq(value=None).check(MISSING) == (False, "expected null, got <missing>")


def test_number_compares_decimals_exactly_and_reads_formatted_amounts() -> None:
    assert number("1250.00").check("$1,250") == (True, "1250 = 1250.00")
    assert number("1250.00").check("1250.00 USD")[0]
    assert number("0.30").check(0.3)[0]  # a JSON float is read through its repr, never its binary value
    assert number("12.50").check("12.49") == (False, "expected 12.50, got 12.49 (off by 0.01)")
    assert number("12.50", tolerance="0.01").check("12.49") == (True, "12.49 = 12.50 ± 0.01")
    assert number("5").check("five") == (False, 'expected the number 5, got "five" (not a number)')
    assert number("5").check(True)[0] is False
    assert to_decimal("1e3") == Decimal("1E+3") and to_decimal("NaN") is None


def test_number_refuses_floats_and_bad_decimals_at_definition() -> None:
    with pytest.raises(ValueError, match="never a float"):
        number(12.5)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="'12,5' is not a decimal string"):
        adapter.validate_python({"match": "number", "value": "12,5"})


def test_range_text_facts_and_friends() -> None:
    assert number_range(min="0", max="10").check("10.00")[0]
    assert number_range(min="0", max="10").check("10.01") == (False, "expected a number in [0, 10], got 10.01")
    assert text("Acme  Corp").check(" acme\ncorp ") == (True, '~ "Acme  Corp"')
    assert text("Acme").check("Acme Inc") == (False, 'expected text "Acme" (case/space-insensitive), got "Acme Inc"')
    ok, why = facts(all_of=["TR-1", "tr-2"], any_of=["duplicate", "twice"]).check("tr-1 and TR-2 charged twice")
    assert ok and why == "mentions 'TR-1', 'tr-2', 'twice'"
    ok, why = facts(all_of=["tr-1", "tr-9"], any_of=["refund"]).check("tr-1 only")
    assert not ok and why == "missing 'tr-9'; none of 'refund' in \"tr-1 only\""
    assert one_of("fraud", "fraud suspected").check("fraud")[0]
    assert not one_of(1, 2).check(True)[0]
    assert regex(r"^tr-\d+$").check("tr-12")[0] and not regex(r"^tr-\d+$").check("x tr-12")[0]
    assert present().check(None)[0] and not present().check(MISSING)[0]
    assert absent().check(MISSING)[0] and absent().check("x") == (False, 'expected no value, got "x"')
    with pytest.raises(ValueError, match="at least one fact"):
        facts()


def test_lookup_follows_dotted_paths() -> None:
    data = {"lines": [{"amount": "1.00"}, {"amount": "2.00"}], "memo": None}
    assert lookup(data, "lines.1.amount") == "2.00"
    assert lookup(data, "memo") is None
    assert lookup(data, "lines.5.amount") is MISSING
    assert lookup(data, "nope") is MISSING
