"""Reworded prompts for generated templates (``toolgym new --llm-base-url URL``): the words change, nothing else.

Every generated template builds its prompt with :func:`compose` from a *prompt template* that is the same for all
its seeds — ``what is the {field} on record for the customer {record}?`` — and the seed's facts for its named
placeholders; an opener drawn per seed goes before it and a fixed contract (``Reply with submit_answer, giving it
as values.city.``) after it. The contract is never reworded.

With ``--llm-base-url``, ``toolgym new`` asks an OpenAI-compatible chat-completions endpoint once per distinct prompt
template (never per seed, temperature 0, bounded retries and timeout) to reword it the way a colleague writes. The
model sees only the template and what each placeholder stands for, never a row of the data. The answer is kept only
when :func:`check_wording` accepts it (every placeholder exactly once and glued where it was, no placeholder
invented, no digit, amount, id, quotation or name the original lacks, no instruction to the agent, no word that
flips the question, no added quantity, currency, unit or qualifier — "twice", "in euros", "per unit", "above" — and no
added word at all beyond greetings and the words of asking, every content word of the original kept, one paragraph,
bounded length) and :func:`prove`
shows, on every seed the check plays, that the instance with the new wording has the same world hash, oracle,
rubric, outcome, negatives and metadata as without it — only the prompt differs. Anything else (an endpoint error,
a timeout, a body that is not JSON, a rejected or unproved wording) keeps the original wording, and the reason is
recorded.

Accepted wordings are written to the package's ``wordings.json`` (keyed by the original template, so a template
whose original text later changes silently falls back to its original wording); runs and checks read that file and
never need the model. Re-running ``toolgym new`` without the flag keeps the file, re-validating and re-proving every
wording in it; delete it to go back to the original wording. The API key is read from the environment variable named
by ``--llm-api-key-env`` at request time and is never written anywhere.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = ["RewordConfig", "compose", "fill", "placeholders", "check_wording", "load_wordings", "capture", "prove",
           "reword_package", "wording_summary", "WORDINGS_FILE"]

WORDINGS_FILE = "wordings.json"
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")

HINTS = {
    "record": "the name of a record, e.g. a person's name or a title in quotation marks",
    "field": "the name of a detail of a record, e.g. postal code",
    "filter": "empty, or a restriction glued to the word before it, e.g. ' whose status is paid' or ' with an invoice date in 2023'",
    "subject": "a description of the record the request is about, e.g. the order of customer “Ada Berg” dated 2025-03-02",
    "changes": "the new values, e.g. the phone to +1 555 0100 and the city to Porto",
    "details": "empty, or a colon and the values glued to the word before it, e.g. ': quantity 2'",
    "identity": "empty, or a sentence giving the caller's details, glued after the end of the previous sentence",
}

_SYSTEM = (
    "You reword request templates for a help desk so they read like a short message a colleague would send. "
    "You get one template. Words in braces, like {record}, are placeholders filled in later: keep each one exactly once, "
    "spelled exactly as given, and keep a placeholder that is glued to the word before it glued to that same word. "
    "Keep the meaning exactly: the same question or request about the same thing, every noun and field name word for "
    "word. You may add a short greeting or a thank-you, reorder, and make it casual. Do not add numbers, dates, amounts, "
    "names, ids, quotation marks, or instructions about tools, policies or how to answer. One paragraph, at most "
    "{limit} characters. Reply with the reworded template only."
)

# words whose appearance would add an instruction to the agent, or change what is asked
_INSTRUCTION = {"submit", "submit_answer", "tool", "tools", "policy", "policies", "ignore", "instruction", "instructions",
                "must", "always", "never", "refuse", "refusal", "verify", "assistant", "agent", "system", "prompt", "json",
                "id", "ids", "reply", "respond", "answer", "format", "values", "call", "function", "should", "rule", "rules",
                "override", "skip", "pretend"}
_FLIP = {"not", "no", "nor", "don't", "dont", "except", "excluding", "without", "earliest", "oldest", "first", "smallest",
         "lowest", "least", "minimum", "min", "average", "mean", "median", "all", "every", "each", "both", "instead",
         "unless", "only", "other", "another", "previous", "next", "second", "undo", "revert", "reverse", "remove", "delete"}
_STOP = {"what", "which", "the", "for", "and", "does", "have", "has", "how", "please", "with", "its", "this", "that",
         "there", "are", "was", "is", "on", "of", "to", "in", "a", "an", "record", "among", "be", "it", "do"}
_SYNONYMS = {"many": ("number", "count"), "total": ("sum", "add up", "altogether", "combined", "in total"),
             "latest": ("most recent", "newest", "last"), "largest": ("biggest", "highest", "maximum", "max"),
             "set": ("change", "update"), "add": ("create", "log", "enter")}
_STARTERS = {"hi", "hello", "hey", "could", "can", "would", "will", "please", "what", "which", "how", "when", "we", "quick",
             "just", "thanks", "thank", "do", "does", "is", "are", "the", "a", "an", "for", "on", "our", "my", "need", "question",
             "morning", "afternoon", "sorry", "so", "also", "any", "it", "this", "that", "there", "let", "hoping", "wondering",
             "checking", "got", "mind", "if", "while", "whenever", "once", "looking", "trying", "fyi", "cheers", "ok",
             "okay", "right", "and", "but", "you", "your", "i'm", "i'd", "i've", "we're", "we'd", "there's", "who",
             "where", "why", "have", "has"}
_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ][\w'’-]*")
# what a rewording may never add, by why: each would change the question while every figure and name stays the same
_QUANTITIES = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
               "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty", "forty",
               "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "hundreds", "thousand", "thousands", "million",
               "millions", "billion", "dozen", "dozens", "twice", "thrice", "double", "triple", "half", "quarter", "single",
               "couple", "few", "several", "once", "again", "pair"}
_CURRENCIES = {"dollar", "dollars", "euro", "euros", "pound", "pounds", "sterling", "yen", "cent", "cents", "pence", "penny",
               "usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "buck", "bucks", "franc", "francs", "rupee", "rupees", "yuan",
               "renminbi", "won", "peso", "pesos", "krona", "kronor", "krone", "crypto", "bitcoin"}
_UNITS = {"percent", "percentage", "per", "unit", "units", "kg", "kilo", "kilos", "kilogram", "kilograms", "gram", "grams", "lb",
          "lbs", "km", "kilometer", "kilometers", "kilometre", "kilometres", "mile", "miles", "meter", "meters", "metre", "metres",
          "feet", "foot", "inch", "inches", "hour", "hours", "minute", "minutes", "second", "seconds", "week", "weeks", "month",
          "months", "year", "years", "daily", "weekly", "monthly", "yearly", "annual", "annually", "hourly", "piece", "pieces",
          "liter", "liters", "litre", "litres", "gallon", "gallons", "each", "apiece"}
_QUALIFIERS = {"above", "below", "over", "under", "more", "less", "fewer", "greater", "higher", "lower", "than", "least", "most",
               "exactly", "approximately", "roughly", "around", "about", "nearly", "almost", "between", "within", "after",
               "before", "since", "until", "till", "gross", "net", "including", "included", "excluding", "plus", "minus", "tax",
               "taxes", "vat", "shipping", "discount", "discounted", "refunded", "cancelled", "pending", "active", "open",
               "closed", "paid", "unpaid", "current", "recent", "new", "old", "original", "expected", "estimated", "rounded",
               "converted", "today", "yesterday", "tomorrow", "this", "that", "these", "those", "same", "overall", "combined",
               "altogether", "whole", "entire", "full", "partial", "partly", "mostly", "additional", "extra", "also", "too",
               "either", "neither", "any", "some", "top", "bottom", "cheapest", "priciest", "biggest", "highest", "newest",
               "last", "sum", "count", "number", "max", "maximum"}
_DISCOURSE = {"hi", "hello", "hey", "morning", "afternoon", "evening", "thanks", "thank", "you", "please", "cheers", "quick",
              "question", "could", "can", "would", "will", "tell", "me", "let", "know", "find", "look", "up", "check", "see",
              "help", "need", "want", "wondering", "hoping", "wonder", "i", "i'm", "i'd", "i've", "we", "we're", "we'd", "we've",
              "us", "our", "my", "your", "it", "it's", "is", "are", "was", "be", "do", "does", "did", "the", "a", "an", "and",
              "so", "just", "when", "moment", "get", "chance", "kindly", "appreciate", "appreciated", "much", "lot", "what's", "how's", "there's", "here's", "that's", "what", "which", "how", "who", "whose", "there", "here", "got",
              "have", "has", "had", "mind", "if", "ok", "okay", "sure", "great", "thx", "pls", "team", "folks", "all", "quickly",
              "asap", "possible", "sorry", "bother", "while", "whenever", "able", "pull", "confirm", "share", "give", "out",
              "on", "of", "for", "to", "in", "at", "by", "with", "from", "as", "or", "its", "their", "his", "her", "they",
              "them", "he", "she", "request", "looking", "trying", "checking", "go", "ahead", "kind", "enough", "fine",
              "possibly", "maybe", "perhaps", "handle", "take", "care", "sort", "hand"}

_CAPTURE: ContextVar[list[tuple[str, dict[str, str]]] | None] = ContextVar("toolgym_reword_capture", default=None)


# -- composing prompts (used by every generated template) ---------------------------------------------------------
def placeholders(template: str) -> list[str]:
    """The placeholder names of ``template``, in order, with repeats."""
    return _PLACEHOLDER.findall(template)


def fill(template: str, facts: Mapping[str, str]) -> str:
    """``template`` with each placeholder replaced by its fact, in one pass (a fact holding braces stays as it is)."""
    return _PLACEHOLDER.sub(lambda m: str(facts[m.group(1)]), template)


def compose(wordings: Mapping[str, str], opener: str, body: str, facts: Mapping[str, str], contract: str) -> str:
    """A generated prompt: ``opener body contract`` with the seed's ``facts`` filled into ``body``; when ``wordings``
    holds an accepted rewording of ``body``, the rewording (filled the same way) replaces ``opener body``.

    ``body`` must be the same for every seed of a template (the facts carry what varies)."""
    seen = _CAPTURE.get()
    if seen is not None:
        seen.append((body, dict(facts)))
    worded = wordings.get(body)
    if worded is not None and sorted(placeholders(worded)) == sorted(placeholders(body)):
        return f"{fill(worded, facts)} {contract}"
    return f"{opener} {fill(body, facts)} {contract}"


@contextmanager
def capture() -> Iterator[list[tuple[str, dict[str, str]]]]:
    """Record every (prompt template, facts) that :func:`compose` builds inside the block."""
    seen: list[tuple[str, dict[str, str]]] = []
    token = _CAPTURE.set(seen)
    try:
        yield seen
    finally:
        _CAPTURE.reset(token)


# -- validating a rewording ---------------------------------------------------------------------------------------
def _limit(original: str) -> int:
    return min(400, int(len(original) * 2.5) + 60)


def _stem(word: str) -> str:
    w = word.casefold().replace("’", "'")
    for suffix in ("'s", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


def _glue(text: str, name: str) -> str | None:
    """The token a glued placeholder sticks to (a word, another placeholder, or sentence punctuation), or None when a
    space or the start of the text comes before it."""
    before = text[: text.index("{" + name + "}")]
    if not before or before[-1].isspace():
        return None
    m = re.search(r"(\{[a-z_]+\}|[\w'’-]+|[.!?])$", before)
    return m.group(1) if m else before[-1]


def check_wording(original: str, candidate: str) -> str | None:
    """Why ``candidate`` may not replace the prompt template ``original`` (None: it may)."""
    if not candidate.strip():
        return "empty"
    if "\n" in candidate or "\r" in candidate:
        return "more than one paragraph"
    want, got = Counter(placeholders(original)), Counter(placeholders(candidate))
    for name in want:
        if got[name] == 0:
            return f"drops the placeholder {{{name}}}"
        if got[name] > 1:
            return f"repeats the placeholder {{{name}}}"
    for name in got:
        if name not in want:
            return f"invents the placeholder {{{name}}}"
    bare, obare = _PLACEHOLDER.sub(" ", candidate), _PLACEHOLDER.sub(" ", original)
    if "{" in bare or "}" in bare:
        return "a stray brace (a placeholder misspelt)"
    if len(candidate) > _limit(original):
        return f"too long ({len(candidate)} characters, at most {_limit(original)})"
    if len(bare.strip()) < max(8, len(obare.strip()) // 2):
        return f"too short ({len(bare.strip())} characters)"
    for name in want:
        glued = _glue(original, name)
        if glued is None:
            continue
        mine = _glue(candidate, name)
        same = mine is not None and (mine.casefold() == glued.casefold() or (glued in ".!?" and mine in ".!?"))
        if not same:
            return f"moves {{{name}}} away from {glued!r}"
    for digits in re.findall(r"\d+", bare):
        if digits not in obare:
            return f"adds a number ({digits})"
    for mark in ("$", "€", "£", "¥", "%", "#", "@", "://", "www.", "`", "*", "_", "<", ">", "[", "]", '"', "“", "”", "«", "»"):
        if mark in bare and mark not in obare:
            return f"adds {mark!r} (an amount, id, address, quotation or markup)"
    owords = {w.casefold() for w in _WORD.findall(obare)}
    ostems = {_stem(w) for w in owords}
    added = [m for m in _WORD.finditer(bare) if m.group(0).casefold().replace("’", "'") not in owords and _stem(m.group(0)) not in ostems]
    for m in added:
        low = m.group(0).casefold().replace("’", "'")
        if low in _INSTRUCTION or low.removesuffix("s") in _INSTRUCTION:
            return f"adds an instruction ({m.group(0)!r})"
    for m in added:
        if m.group(0).casefold().replace("’", "'") in _FLIP:
            return f"adds a word that could change what is asked ({m.group(0)!r})"
    for m in added:
        word = m.group(0)
        low = word.casefold().replace("’", "'")
        if word[0].isupper() and low != "i" and not low.startswith("i'"):
            start = re.search(r"(^|[.!?:;—–-]\s*|,\s*)$", bare[: m.start()].rstrip(" ")) is not None or not bare[: m.start()].strip()
            if not (start and low in _STARTERS) or (len(word) > 1 and word.isupper()):
                return f"adds a name ({word!r})"
    said = {w for word in owords for phrase in _SYNONYMS.get(word, ()) for w in phrase.split()}  # "latest": "most recent"
    for m in added:
        low = m.group(0).casefold().replace("’", "'")
        if low in said:
            continue
        for words, what in ((_QUANTITIES, "a quantity"), (_CURRENCIES, "a currency"), (_UNITS, "a unit"), (_QUALIFIERS, "a qualifier")):
            if low in words:
                return f"adds {what} ({m.group(0)!r})"
    if re.search(r"\b(do not|don't|make sure|be sure|remember to|you should)\b", bare, re.I) and not re.search(
            r"\b(do not|don't|make sure|be sure|remember to|you should)\b", obare, re.I):
        return "adds an instruction"
    cwords = {_stem(w) for w in _WORD.findall(bare)}
    low_bare = bare.casefold()
    for word in sorted(owords):
        if word in _STOP or len(word) < 3:
            continue
        if _stem(word) in cwords or any(s in low_bare for s in _SYNONYMS.get(word, ())):
            continue
        return f"drops the word {word!r}"
    for m in added:  # any other word added may narrow or widen what is asked ("discontinued", "European")
        low = m.group(0).casefold().replace("’", "'")
        if low not in _DISCOURSE and low not in said and low not in _STARTERS:
            return f"adds a word that could change what is asked ({m.group(0)!r})"
    return None


def _clean(content: str) -> str:
    text = content.strip()
    for a, b in (('"', '"'), ("“", "”"), ("'", "'"), ("`", "`")):
        if len(text) >= 2 and text.startswith(a) and text.endswith(b):
            text = text[1:-1].strip()
    return text


# -- asking the model ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RewordConfig:
    """Where to ask for rewordings: an OpenAI-compatible ``base_url`` (``.../v1``), the model, and the *name* of the
    environment variable holding the API key (read at request time, never stored)."""

    base_url: str
    model: str = "gpt-4o-mini"
    api_key_env: str | None = "OPENAI_API_KEY"
    timeout: float = 30.0
    retries: int = 2
    """Attempts after the first, on a timeout, a network error, a 429/5xx status or a malformed body."""
    backoff: float = 0.5

    def where(self) -> str:
        """The endpoint as recorded (no user, password or query)."""
        u = urlsplit(self.base_url)
        return f"{u.scheme}://{u.hostname or ''}{f':{u.port}' if u.port else ''}{u.path}"

    def ask(self, template: str) -> tuple[str | None, str]:
        """(the model's rewording or None, why not)."""
        import httpx

        names = list(dict.fromkeys(placeholders(template)))
        hints = "\n".join(f"{{{n}}}: {HINTS.get(n, 'a value filled in later')}" for n in names)
        body = {"model": self.model, "temperature": 0, "max_tokens": 300, "messages": [
            {"role": "system", "content": _SYSTEM.replace("{limit}", str(_limit(template)))},
            {"role": "user", "content": f"Template: {template}\nPlaceholders:\n{hints}"}]}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        why = "no attempt"
        for attempt in range(1 + max(0, self.retries)):
            if attempt:
                time.sleep(self.backoff * attempt)
            try:
                with httpx.Client(timeout=self.timeout) as http:
                    response = http.post(f"{self.base_url.rstrip('/')}/chat/completions", json=body, headers=headers)
            except httpx.TimeoutException:
                why = f"endpoint timed out after {self.timeout:g}s"
                continue
            except httpx.HTTPError as exc:
                why = f"endpoint unreachable: {type(exc).__name__}"
                continue
            except Exception as exc:  # noqa: BLE001  (a bad URL or anything else: the original wording, never a crash)
                return None, f"endpoint unusable: {type(exc).__name__}: {exc}"[:200]
            if response.status_code != 200:
                why = f"endpoint answered HTTP {response.status_code}"
                if response.status_code in (408, 409, 429) or response.status_code >= 500:
                    continue
                return None, why
            try:
                content = response.json()["choices"][0]["message"]["content"]
            except (ValueError, KeyError, IndexError, TypeError):
                why = "endpoint answered a malformed body"
                continue
            if not isinstance(content, str) or not content.strip():
                why = "endpoint answered no text"
                continue
            return _clean(content), ""
        return None, why + f" ({1 + max(0, self.retries)} attempts)"


# -- the package's wordings ---------------------------------------------------------------------------------------
def load_wordings(folder: str | Path) -> dict[str, str]:
    """original prompt template → accepted rewording, from ``folder/wordings.json`` (re-validated: an entry that does
    not pass :func:`check_wording`, e.g. after a hand edit, is ignored)."""
    path = Path(folder) / WORDINGS_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
        entries = data.get("templates", {})
    except (ValueError, AttributeError):
        return {}
    out: dict[str, str] = {}
    for entry in entries.values() if isinstance(entries, dict) else ():
        if not isinstance(entry, dict) or entry.get("status") != "reworded":
            continue
        original, worded = entry.get("original"), entry.get("reworded")
        if isinstance(original, str) and isinstance(worded, str) and check_wording(original, worded) is None:
            out.setdefault(original, worded)
    return out


def wording_summary(folder: str | Path) -> dict[str, str]:
    """template id → ``reworded`` or ``original: <why>`` (for templates.json); empty without wordings.json."""
    path = Path(folder) / WORDINGS_FILE
    try:
        entries = json.loads(path.read_text()).get("templates", {}) if path.exists() else {}
    except (ValueError, AttributeError):
        return {}
    return {tid: "reworded" if e.get("status") == "reworded" else f"original: {e.get('reason', '')}"
            for tid, e in sorted(entries.items()) if isinstance(e, dict)}


# -- proving a wording changes nothing but the prompt -------------------------------------------------------------
def _instance(environment: Any, template: Any, seed: int) -> tuple[Any, str, list[tuple[str, dict[str, str]]]]:
    world = environment.fixture.world(environment.task_fixture_seed)
    try:
        with capture() as seen:
            inst = template.instantiate(world, seed)
        return inst, world.hash(), seen
    finally:
        world.close()


def prove(environment: Any, wordings: Mapping[str, str], template_ids: list[str], seeds: int) -> dict[str, str]:
    """Instantiate each template on every seed without and with ``wordings``: the world hash after the setup, the
    oracle, rubric, outcome, negatives and metadata must be identical and only the prompt differ. Returns template
    id → what differed, for the templates that fail."""
    from toolgym.new.templates import derive_templates

    gen = environment.generated
    plain = {t.id: t for t in derive_templates(gen, {})}
    worded = {t.id: t for t in derive_templates(gen, dict(wordings))}
    failing: dict[str, str] = {}
    for tid in template_ids:
        for seed in range(seeds):
            try:
                a, ha, seen_a = _instance(environment, plain[tid], seed)
                b, hb, _ = _instance(environment, worded[tid], seed)
            except Exception as exc:  # noqa: BLE001  (a template that cannot build proves nothing)
                failing[tid] = f"seed {seed}: cannot build: {exc}"[:300]
                break
            da, db = a.model_dump(exclude={"prompt"}), b.model_dump(exclude={"prompt"})
            if ha != hb:
                failing[tid] = f"seed {seed}: the world differs"
            elif da != db:
                which = sorted(k for k in da if da[k] != db.get(k))
                failing[tid] = f"seed {seed}: the instance differs in {', '.join(which)}"
            elif len(seen_a) != 1:
                failing[tid] = f"seed {seed}: {len(seen_a)} prompt templates in one instance"
            elif seen_a[0][0] in wordings and a.prompt == b.prompt:
                failing[tid] = f"seed {seed}: the rewording was not applied"
            else:
                continue
            break
    return failing


# -- toolgym new --------------------------------------------------------------------------------------------------
def reword_package(environment: Any, folder: Path, template_ids: list[str], seeds: int, config: RewordConfig | None,
                   say: Callable[[str], None] = lambda _msg: None) -> dict[str, str]:
    """Write ``folder/wordings.json`` for the templates ``template_ids``: with ``config``, ask the model once per distinct
    prompt template; without it, keep the file's accepted wordings. Every wording is validated and proved on
    ``seeds`` seeds; a wording that fails keeps the original prompt and its reason is recorded. Returns the summary
    (template id → ``reworded`` or ``original: why``). Never raises for an endpoint's sake."""
    path = folder / WORDINGS_FILE
    if config is None and not path.exists():
        return {}
    from toolgym.new.templates import derive_templates

    previous = load_wordings(folder)
    templates = {t.id: t for t in derive_templates(environment.generated, {})}
    bodies: dict[str, str] = {}
    entries: dict[str, dict[str, Any]] = {}
    for tid in template_ids:
        if tid not in templates:
            continue
        try:
            _, _, seen = _instance(environment, templates[tid], 0)
        except Exception as exc:  # noqa: BLE001
            entries[tid] = {"status": "original", "reason": f"cannot build seed 0: {exc}"[:300]}
            continue
        if len(seen) != 1:
            entries[tid] = {"status": "original", "reason": "its prompt is not built from one prompt template"}
            continue
        bodies[tid] = seen[0][0]
    answers: dict[str, tuple[str | None, str]] = {}
    for original in dict.fromkeys(bodies.values()):
        if config is not None:
            say(f"rewording: {original}")
            worded, why = config.ask(original)
        else:
            worded = previous.get(original)
            why = "" if worded is not None else "no rewording in wordings.json for this prompt template"
        if worded is not None:
            problem = check_wording(original, worded)
            if problem is not None:
                worded, why = None, f"rejected: {problem}: {worded!r}"[:400]
        answers[original] = (worded, why)
    accepted = {o: w for o, (w, _) in answers.items() if w is not None}
    failing = prove(environment, accepted, [t for t in bodies if bodies[t] in accepted], seeds) if accepted else {}
    unproved = {bodies[t] for t in failing}  # wordings are keyed by the original: one failure withdraws it everywhere
    for tid, original in bodies.items():
        worded, why = answers[original]
        if worded is not None and original in unproved:
            why = f"not proved: {failing.get(tid) or next(failing[t] for t in failing if bodies[t] == original)}"
        if worded is not None and original not in unproved:
            entries[tid] = {"status": "reworded", "original": original, "reworded": worded}
        else:
            entries[tid] = {"status": "original", "original": original, "reason": why}
    record: dict[str, Any] = {
        "note": "generated by toolgym new: prompt templates reworded by a model, each validated and proved to change only "
                "the prompt; delete this file to use the original wording",
        "seeds_proved": seeds, "templates": dict(sorted(entries.items()))}
    if config is not None:
        record["model"] = {"endpoint": config.where(), "model": config.model, "temperature": 0}
    else:
        try:
            record["model"] = json.loads(path.read_text()).get("model")
        except (ValueError, AttributeError, OSError):
            pass
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return wording_summary(folder)
