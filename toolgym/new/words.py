"""Column names as people say them: ``teamIDretro`` → "team ID (Retrosheet)", ``lon`` → "longitude".

Prompts and tool descriptions name fields in words, never as mangled snake_case. The default label of a field is
made here from its column's name (split at case changes and separators, common abbreviations written out, short
unpronounceable tokens spelled in capitals); a spec's ``label`` overrides it.
"""

from __future__ import annotations

import re

__all__ = ["label", "split"]

# abbreviations that are words in a prompt; an entry maps one token (lower case) to its words
_WORDS = {
    "id": "ID", "ids": "IDs", "lon": "longitude", "lng": "longitude", "lat": "latitude", "alt": "altitude", "tz": "time zone",
    "tzone": "time zone", "dst": "daylight saving time", "dob": "date of birth", "qty": "quantity", "amt": "amount",
    "num": "number", "no": "number", "nbr": "number", "desc": "description", "addr": "address", "tel": "telephone",
    "dept": "department", "mgr": "manager", "emp": "employee", "cust": "customer", "acct": "account", "org": "organisation",
    "pct": "percent", "avg": "average", "min": "minimum", "max": "maximum", "dep": "departure", "arr": "arrival",
    "sched": "scheduled", "dest": "destination", "tailnum": "tail number", "faa": "FAA code", "dewp": "dew point",
    "humid": "humidity", "precip": "precipitation", "visib": "visibility", "temp": "temperature", "lg": "league",
    "franch": "franchise", "retro": "(Retrosheet)", "br": "(Baseball-Reference)", "ppf": "pitchers' park factor",
    "bpf": "batters' park factor", "hra": "home runs allowed", "bba": "walks allowed", "soa": "strikeouts allowed",
    "ha": "hits allowed", "era": "ERA", "ipouts": "outs pitched", "yr": "year", "mo": "month", "dt": "date", "ts": "timestamp",
    "url": "URL", "sku": "SKU", "vat": "VAT", "iban": "IBAN", "iso": "ISO", "utc": "UTC", "gp": "games played",
    "plyr": "player", "div": "division", "ws": "World Series", "wc": "wild card", "cnt": "count", "ref": "reference",
    "postcode": "postcode", "zip": "zip code", "info": "information", "fk": "reference", "ghome": "home games",
    "lgid": "league", "divid": "division", "sho": "shutouts", "sv": "saves", "cg": "complete games", "dp": "double plays",
    "fp": "fielding percentage", "er": "earned runs", "ra": "runs allowed", "ab": "at bats", "bb": "walks", "so": "strikeouts",
    "sb": "stolen bases", "cs": "caught stealing", "hbp": "hit by pitch", "sf": "sacrifice flies", "hr": "home runs",
}
_VOWELS = set("aeiouy")


def split(name: str, *, digits: bool = True) -> list[str]:
    """The tokens of a column name: ``teamIDretro`` → team, ID, retro; ``park.key`` → park, key; ``HRA`` → HRA;
    ``address1`` → address, 1 (with ``digits``; field names keep ``address1`` whole)."""
    text = re.sub(r"([a-z0-9])(ID|Id)(?=[a-z]|[A-Z]{2}|$|[^A-Za-z])", r"\1 \2 ", name)
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    text = re.sub(r"([0-9])([A-Z][a-z])", r"\1 \2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", text)
    if digits:
        text = re.sub(r"([A-Za-z])([0-9])", r"\1 \2", text)
    return [t for t in re.split(r"[^0-9A-Za-zÀ-ÖØ-öø-ÿ]+", text) if t]


def label(name: str) -> str:
    """Words for the column ``name``: each token written out when it is a known abbreviation, a short token with no
    vowel (``hr``, ``rbi``) in capitals, the rest in lower case; a parenthesised qualifier goes last."""
    whole = re.sub(r"[^0-9a-z]", "", name.lower())
    if whole in _WORDS and not _WORDS[whole].startswith("("):
        return _WORDS[whole]
    out: list[str] = []
    tail: list[str] = []
    tokens = split(name)
    for i, token in enumerate(tokens):
        low = token.lower()
        word = _WORDS.get(low)
        if word is None:
            acronym = (len(token) >= 2 and token.isupper()) or (len(token) <= 4 and not set(low) & _VOWELS and low.isalpha())
            word = token.upper() if acronym else low
        (tail if word.startswith("(") else out).append(word)
    for i in range(len(out) - 1):  # nameFirst, name_last: "first name", "last name"
        if out[i] == "name" and out[i + 1] in ("first", "last", "given", "family", "middle", "full"):
            out[i], out[i + 1] = out[i + 1], out[i]
    if len(out) > 1 and out[-1] in ("minor", "cents", "pence"):  # price_minor is the price (in minor units)
        out.pop()
    return " ".join(out + tail) or name
