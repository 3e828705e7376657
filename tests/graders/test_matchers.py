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
    assert number("5").check("five") == (False, 'expected the number 5, got "five" (not a plain decimal figure)')
    assert number("5").check(True)[0] is False
    assert to_decimal("1,000") == Decimal("1000") and to_decimal("1e3") is None and to_decimal("NaN") is None


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


MATCHERS = {
    "eq": lambda: Eq(value="pending_approval"),
    "number": lambda: number("12.50"),
    "number_in_usd": lambda: number("12.50", tolerance="0.01", currency="USD"),
    "range": lambda: number_range(min="0", max="100"),
    "text": lambda: text("Acme Corp"),
    "facts": lambda: facts(all_of=["TR-1"], any_of=["twice"]),
    "one_of": lambda: one_of("fraud", 12),
    "regex": lambda: regex(r"(?is)(?!.*secret).*"),
    "present": present,
    "absent": absent,
}


@pytest.mark.parametrize("kind", MATCHERS)
def test_no_agent_value_makes_a_matcher_raise(kind: str) -> None:
    """Whatever an agent sent, a matcher answers (ok, why) with evidence that encodes as UTF-8 (issue 17)."""
    from graders.fuzz import HOSTILE_VALUES

    matcher = MATCHERS[kind]()
    for label, value in [*HOSTILE_VALUES, ("missing", MISSING)]:
        ok, why = matcher.check(value)  # type: ignore[attr-defined]
        assert isinstance(ok, bool) and isinstance(why, str), label
        assert len(why.encode("utf-8")) < 1000, label


@pytest.mark.parametrize(
    "value",
    ["1e999999999", "-1E-999999999", "1.25E+3", "NaN", "sNaN", "Infinity", "-inf", "0x1F", "+-12.50", "١٢٫٥٠", "１２.５０",
     "१२.५०", "¹²", "12\ud800.50", "\u202e05.21", "12\x00.50", "", "   ", "9" * 1_000_000, ["12.50"], {"value": "12.50"},
     None, True, float("nan"), float("inf"), 10**400],
)
def test_hostile_values_are_not_figures_and_say_why(value: object) -> None:
    ok, why = number("12.50").check(value)
    assert not ok and why.startswith("expected the number 12.50, got "), why
    assert to_decimal(value) is None


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("1,234,567.89", "1234567.89"),
        ("$1,234,567.89", "1234567.89"),
        ("1234567.89 USD", "1234567.89"),
        ("USD 1,234,567.89", "1234567.89"),
        ("1 234 567.89", "1234567.89"),
        ("  -$5.00 ", "-5.00"),
        ("+12.50", "12.50"),
        ("12.5 usd", "12.50"),
        (12, "12"),
        ("3438.68\u00a0USD", "3438.68"),  # a no-break space, as formatters write it
        ("3\u202f438.68 USD", "3438.68"),  # a narrow no-break space grouping the thousands
        ("3\u2009438.68", "3438.68"),  # a thin space
        ("US$3438.68", "3438.68"),
        ("US$ 3,438.68", "3438.68"),
        ("3438.68 US dollars", "3438.68"),
        ("3,438.68 dollars", "3438.68"),
    ],
)
def test_a_careful_reader_accepts_the_usual_ways_of_writing_a_figure(given: object, expected: str) -> None:
    assert number(expected, currency="USD").check(given)[0], given


@pytest.mark.parametrize(
    ("given", "expected", "why"),
    [
        ("6,2481.02", "62481.02", "not a plain decimal figure"),
        ("62,481.0,2", "62481.02", "not a plain decimal figure"),
        ("1,2345", "12345", "not a plain decimal figure"),
        ("١٢٣", "123", "not a plain decimal figure"),
        ("１２３", "123", "not a plain decimal figure"),
        ("1e2", "100", "not a plain decimal figure"),
        ("100.00 JPY", "100.00", "it is in JPY, the task asks for USD"),
        ("¥100", "100", "its symbol ¥ is not USD"),
        ("€100.00", "100.00", "its symbol € is not USD"),
        ("$100 EUR", "100", "the symbol $ and the code EUR disagree"),
        ("USD 100 USD", "100", "two currency codes"),
        ("EUR 4.37", "4.37", "it is in EUR, the task asks for USD"),
        ("4.37 euros", "4.37", "it is in EUR, the task asks for USD"),
        ("C$100", "100", "it is in CAD, the task asks for USD"),
        ("US$100 EUR", "100", "two currencies"),
        ("100 pounds sterling", "100", "it is in GBP, the task asks for USD"),
    ],
)
def test_malformed_figures_and_other_currencies_fail(given: str, expected: str, why: str) -> None:
    ok, evidence = number(expected, currency="USD").check(given)
    assert not ok and why in evidence, evidence


def test_currencies_agree_with_what_is_asked_and_no_label_is_fine() -> None:
    assert number("100", currency="CAD").check("$100")[0]  # "$" is many dollars
    assert number("100", currency="EUR").check("€100")[0] and number("100", currency="EUR").check("100")[0]
    assert number("100").check("100 JPY")[0]  # nothing asked: a label cannot contradict it


def test_figures_compare_exactly_never_rounded_into_a_match() -> None:
    """Decimal's default 28 digits would round this difference to 0 and accept it."""
    ok, why = number("1234.56").check("1234.5600000000000000000000000001")
    assert not ok and why.endswith("(off by 1E-28)"), why
    assert number("0.1", tolerance="0.1").check("0.2")[0] and not number("0.1", tolerance="0.1").check("0.2000000000000000000000000000001")[0]


def test_rubric_figures_stay_in_a_sane_range() -> None:
    with pytest.raises(ValidationError, match="out of range"):
        adapter.validate_python({"match": "number", "value": "1E+999999999"})
