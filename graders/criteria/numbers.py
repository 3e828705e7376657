"""Reading a figure an agent reported, the way a careful accountant would — and never crashing on it.

An answer value is whatever the agent typed: ``"1,250.00"``, ``"$1250"``, ``"1250.00 USD"`` are the same
figure; ``"6,2481.02"`` (grouping in the wrong place), ``"١٢٣"`` (digits of another script, which
``Decimal`` would happily read), ``"1e999999999"``, ``"NaN"``, ``"0x10"`` or a megabyte of text are not
figures at all. The grammar, all ASCII but the currency symbols:

    [sign] [CODE ][symbol] [sign] digits [.digits] [symbol][ CODE]

where *digits* are plain ``0-9``, either ungrouped or grouped by threes with ``,`` (or a single space),
every group in its place (``1,234,567.89``); at most one sign; a currency given as a three-letter code
(``USD``, any case), a symbol (``$ € £ ¥``), a prefixed dollar (``US$``, ``C$``, ``A$``...) and/or a trailing
name (``US dollars``, ``euros``, ``pounds sterling``), which must agree with each other. Spaces are read as
people type them: a no-break, narrow or thin space is a space (``3 438.68 USD`` with U+202F), and a space may
separate a figure from its currency. No exponents: a reported amount is written out, and ``1e999999999`` is
how a policy overflows a grader.

Comparisons are exact: :func:`exact` runs Decimal arithmetic in a context wide enough for every figure
this grammar admits (at most :data:`MAX_CHARS` characters), so a difference is never rounded into a match
and no agent value can raise ``Overflow``.
"""

from __future__ import annotations

import decimal
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

__all__ = ["ReadNumber", "read_number", "exact", "MAX_CHARS", "SYMBOL_CURRENCIES", "currency_conflict"]

MAX_CHARS = 64
"""Longest text read as a figure; anything longer is not a number (no amount needs more)."""

_MAX_INT_BITS = 213
"""Largest JSON integer read as a figure (about 64 decimal digits)."""

SYMBOL_CURRENCIES: dict[str, frozenset[str]] = {
    "$": frozenset({"USD", "CAD", "AUD", "NZD", "SGD", "HKD", "MXN"}),
    "€": frozenset({"EUR"}),
    "£": frozenset({"GBP"}),
    "¥": frozenset({"JPY", "CNY"}),
}
"""The currencies a symbol can stand for (``$`` is many dollars: it contradicts EUR, not CAD)."""

PREFIXED_DOLLARS: dict[str, str] = {"US$": "USD", "U.S.$": "USD", "C$": "CAD", "CA$": "CAD", "A$": "AUD", "AU$": "AUD",
                                    "NZ$": "NZD", "HK$": "HKD", "S$": "SGD", "SG$": "SGD", "MX$": "MXN"}
"""A dollar sign with its country's letters: one currency, unambiguous."""

CURRENCY_NAMES: dict[str, str | None] = {
    "us dollar": "USD", "us dollars": "USD", "u.s. dollars": "USD", "american dollars": "USD",
    "canadian dollars": "CAD", "australian dollars": "AUD", "euro": "EUR", "euros": "EUR", "pound": "GBP", "pounds": "GBP",
    "pounds sterling": "GBP", "sterling": "GBP", "british pounds": "GBP", "yen": "JPY", "japanese yen": "JPY",
    "swiss francs": "CHF", "francs": "CHF", "dollar": None, "dollars": None,
}
"""A currency's name written after a figure; plain "dollars" names no one currency (any dollar, like ``$``)."""

_SPACES = re.compile("[\u00a0\u2007\u2009\u202f\u2002\u2003\u2004\u2005\u2006\u2008\u200a]")
"""Spaces people's keyboards and formatters put in figures (no-break, figure, thin, narrow no-break...)."""

_SYMBOLS = "".join(SYMBOL_CURRENCIES)
_PREFIXED = "|".join(re.escape(p) for p in sorted(PREFIXED_DOLLARS, key=len, reverse=True))
_NAMES = "|".join(re.escape(n) for n in sorted(CURRENCY_NAMES, key=len, reverse=True))
_FIGURE = re.compile(
    rf"""
    (?P<sign1>[-+])?
    (?:(?P<code1>[A-Za-z]{{3}})[ ]?)?
    (?:(?P<pre1>{_PREFIXED})[ ]?|(?P<sym1>[{_SYMBOLS}])[ ]?)?
    (?P<sign2>[-+])?
    (?P<int>[0-9]+|[0-9]{{1,3}}(?:,[0-9]{{3}})+|[0-9]{{1,3}}(?:[ ][0-9]{{3}})+)
    (?:\.(?P<frac>[0-9]+))?
    (?:[ ]?(?P<sym2>[{_SYMBOLS}]))?
    (?:[ ]?(?P<code2>[A-Za-z]{{3}}))?
    (?:[ ](?P<name>{_NAMES}))?
    """,
    re.VERBOSE | re.IGNORECASE,
)

_EXACT = decimal.Context(prec=1000, Emax=10_000, Emin=-10_000, traps=[])
"""Wide enough that sums and differences of admitted figures (and rubric values) are exact; no traps, so
even an out-of-range rubric value gives an infinite difference rather than an exception."""


@dataclass(frozen=True)
class ReadNumber:
    """What a value says as a figure: its Decimal and currency, or why it is not a figure."""

    value: Decimal | None
    currency: str | None = None
    """The currency code written with it (upper case), if any."""
    symbol: str | None = None
    """The currency symbol written with it, if any."""
    problem: str | None = None
    """Why the value is not a figure (None when it is one)."""

    def contradicts(self, currency: str | None) -> str | None:
        """Why this figure is not in ``currency`` (None when it agrees, or says no currency, or none is asked)."""
        if currency is None or self.value is None:
            return None
        return currency_conflict(currency, self.currency, self.symbol)


def currency_conflict(asked: str, code: str | None, symbol: str | None) -> str | None:
    """Why a figure labelled ``code`` / ``symbol`` is not in the ``asked`` currency, or None when it may be."""
    asked = asked.upper()
    if code is not None and code != asked:
        return f"it is in {code}, the task asks for {asked}"
    if symbol is not None and asked not in SYMBOL_CURRENCIES[symbol]:
        return f"its symbol {symbol} is not {asked}"
    return None


def _not(problem: str) -> ReadNumber:
    return ReadNumber(value=None, problem=problem)


def read_number(value: Any) -> ReadNumber:
    """Read ``value`` as a figure (see the module docstring for the grammar); never raises."""
    if isinstance(value, bool) or value is None:
        return _not("not a number")
    if isinstance(value, int):
        if value.bit_length() > _MAX_INT_BITS:
            return _not("too large to be a figure")
        return ReadNumber(value=Decimal(value))
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return _not("not a finite number")
        # a JSON float is read through its shortest repr, never its binary value; its exponent is bounded
        return ReadNumber(value=Decimal(repr(value)))
    if not isinstance(value, str):
        return _not(f"a {type(value).__name__}, not a number")
    if len(value) > MAX_CHARS:
        return _not(f"{len(value)} characters: too long to be a figure")
    found = _FIGURE.fullmatch(_SPACES.sub(" ", value).strip())
    if found is None:
        return _not("not a plain decimal figure")
    parts = found.groupdict()
    if parts["sign1"] and parts["sign2"]:
        return _not("two signs")
    if parts["code1"] and parts["code2"]:
        return _not("two currency codes")
    if parts["sym1"] and parts["sym2"]:
        return _not("two currency symbols")
    codes = {c.upper() for c in (parts["code1"], parts["code2"]) if c}
    if parts["pre1"]:
        codes.add(PREFIXED_DOLLARS[parts["pre1"].upper()])
    named = parts["name"].lower() if parts["name"] else None
    if named is not None and CURRENCY_NAMES[named] is not None:
        codes.add(str(CURRENCY_NAMES[named]))
    if len(codes) > 1:
        return _not(f"two currencies ({', '.join(sorted(codes))})")
    code = next(iter(codes), None)
    symbol = parts["sym1"] or parts["sym2"] or ("$" if parts["pre1"] or named in ("dollar", "dollars") else None)
    if code is not None and symbol is not None and code not in SYMBOL_CURRENCIES[symbol]:
        return _not(f"the symbol {symbol} and the code {code} disagree")
    sign = "-" if "-" in (parts["sign1"] or "", parts["sign2"] or "") else ""
    digits = parts["int"].replace(",", "").replace(" ", "")
    frac = f".{parts['frac']}" if parts["frac"] else ""
    return ReadNumber(value=Decimal(f"{sign}{digits}{frac}"), currency=code, symbol=symbol)


def exact() -> decimal.Context:
    """A context for arithmetic on figures: exact for everything :func:`read_number` admits, never trapping
    (a copy each time: a context collects flags, and graders may run in several threads)."""
    return _EXACT.copy()
