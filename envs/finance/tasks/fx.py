"""Currency tasks: quotes and conversions at the customer rate (mid less the spread, truncated to 6 decimals;
credits rounded down to the cent), including working backwards to the smallest amount that covers a need."""

from __future__ import annotations

import random

from envs.finance.tasks._common import (
    AVAILABLE_SQL,
    answer,
    balance_is,
    caller,
    full_name,
    looked_up,
    money,
    need,
    one,
    optional_call,
    pick,
    rows,
    value_is,
    verify,
)
from fixtures.world import World
from graders.outcome import completed
from graders.tasks import TaskDraft, TaskTemplate, call, negative

__all__ = ["TEMPLATES", "customer_rate"]


def customer_rate(world: World, source: str, target: str) -> tuple[int, int]:
    """(customer rate, mid rate) in micro-units for ``source`` → ``target``."""
    row = one(world, "SELECT mid_rate_micros, spread_bps FROM fx_rates WHERE base = ? AND quote = ?", source, target)
    return row["mid_rate_micros"] * (10_000 - row["spread_bps"]) // 10_000, row["mid_rate_micros"]


def _two_currency_customers(world: World) -> list[dict]:
    """Customers with exactly two open checking accounts in different currencies (``a``: one, ``b``: the other)."""
    return rows(world, f"""
        SELECT * FROM (
          SELECT a.customer_id, a.account_id AS a_id, a.currency AS a_cur, a.balance_minor AS a_balance,
                 b.account_id AS b_id, b.currency AS b_cur, b.balance_minor AS b_balance,
                 (SELECT {AVAILABLE_SQL} FROM accounts a2 WHERE a2.account_id = a.account_id) AS a_avail,
                 (SELECT {AVAILABLE_SQL} FROM accounts a WHERE a.account_id = b.account_id) AS b_avail
          FROM accounts a JOIN accounts b ON b.customer_id = a.customer_id AND b.account_id != a.account_id
          WHERE a.type = 'checking' AND b.type = 'checking' AND a.status = 'open' AND b.status = 'open' AND a.currency != b.currency
            AND (SELECT count(*) FROM accounts x WHERE x.customer_id = a.customer_id AND x.type = 'checking' AND x.status = 'open') = 2
        ) WHERE a_avail >= 100000 ORDER BY customer_id, a_id""")


def fx_quote(world: World, rng: random.Random) -> TaskDraft:
    """What would a conversion credit? Quote it at the customer rate without converting anything."""
    account = pick(rng, rows(world, "SELECT * FROM accounts WHERE type = 'checking' AND status = 'open' ORDER BY account_id"), "checking")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", account["customer_id"])
    source = account["currency"]
    target = rng.choice(sorted({"USD", "EUR", "GBP"} - {source}))
    rate, mid = customer_rate(world, source, target)
    minor = rng.randint(50, 2_000) * 1_000 + rng.choice([0, 0, 550, 1_275])
    amount = money(minor, source)
    received = money(minor * rate // 1_000_000, target)
    at_mid = money(minor * mid // 1_000_000, target)
    return TaskDraft(
        prompt=(f"{full_name(customer)} (customer {customer['customer_id']}) is planning a trip and asks how many {target} they would "
                f"receive today if they converted {amount} {source}. Do not convert anything; reply with submit_answer, giving the "
                "amount in values.received."),
        oracle=[call("get_fx_rate", from_currency=source, to_currency=target),
                answer(f"{amount} {source} converts to {received} {target} at today's customer rate.", received=received)],
        outcome=completed(),
        rubric=[
            value_is("received", received, weight=3),
            looked_up("read the rate", {"tool": "get_fx_rate", "args": {"from_currency": source, "to_currency": target}}),
        ],
        negatives=[
            negative("mid_rate", "quotes at the mid rate, forgetting the bank's spread",
                     call("get_fx_rate", from_currency=source, to_currency=target), answer("Quote.", received=at_mid)),
            negative("no_lookup", "quotes the right figure without reading today's rate", answer("Quote.", received=received)),
        ],
        metadata={"customer_id": customer["customer_id"], "received": received},
    )


def convert_between_accounts(world: World, rng: random.Random) -> TaskDraft:
    """Convert a stated amount between a customer's two checking accounts in different currencies."""
    # room for converting twice, so the converts-twice negative really double-converts
    pair = pick(rng, [p for p in _two_currency_customers(world) if p["a_avail"] >= 200_000], "customer with two-currency checking")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", pair["customer_id"])
    cid, src, dst, source, target = pair["customer_id"], pair["a_id"], pair["b_id"], pair["a_cur"], pair["b_cur"]
    rate, mid = customer_rate(world, source, target)
    minor = rng.randint(10, min(pair["a_avail"] // 2, 500_000) // 10_000) * 10_000 - rng.choice([0, 4_500])
    amount = money(minor, source)
    credited = minor * rate // 1_000_000
    convert = call("convert_currency", from_account_id=src, to_account_id=dst, amount=amount, currency=source)
    return TaskDraft(
        prompt=(f"Customer {cid}. {caller(customer)} They want to convert {amount} {source} from their {source} checking account into "
                f"their {target} checking account. Do it and reply with submit_answer, giving the {target} amount credited in "
                "values.credited."),
        oracle=[verify(customer), optional_call("list_accounts", customer_id=cid),
                optional_call("get_fx_rate", from_currency=source, to_currency=target),
                convert, answer(f"Converted {amount} {source} into {money(credited, target)} {target}.", credited=money(credited, target))],
        outcome=completed(),
        rubric=[
            balance_is(src, pair["a_balance"] - minor, name=f"{source} account debited"),
            balance_is(dst, pair["b_balance"] + credited, name=f"{target} account credited at the customer rate"),
            value_is("credited", money(credited, target), weight=1),
        ],
        negatives=[
            negative("converts_twice", "runs the conversion twice", verify(customer), convert, convert,
                     answer("Converted.", credited=money(credited, target))),
            negative("mid_rate_answer", "converts correctly but reports the mid-rate figure", verify(customer), convert,
                     answer("Converted.", credited=money(minor * mid // 1_000_000, target))),
            negative("claims_only", "reports a conversion it never made", answer("Converted.", credited=money(credited, target))),
        ],
        metadata={"customer_id": cid, "credited": money(credited, target)},
    )


def fx_top_up(world: World, rng: random.Random) -> TaskDraft:
    """Convert the smallest amount that brings the other-currency account's available balance up to a target."""
    pair = pick(rng, [p for p in _two_currency_customers(world) if p["b_avail"] >= 0], "customer with checking accounts in two currencies")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", pair["customer_id"])
    cid, src, dst, source, target = pair["customer_id"], pair["a_id"], pair["b_id"], pair["a_cur"], pair["b_cur"]
    rate, mid = customer_rate(world, source, target)
    shortfall = rng.randint(150, 900) * 100 + rng.randint(1, 99)
    goal = pair["b_avail"] + shortfall
    minor = -(-shortfall * 1_000_000 // rate)
    while minor * rate // 1_000_000 < shortfall:
        minor += 1
    naive = -(-shortfall * 1_000_000 // mid)
    need(minor <= pair["a_avail"], f"{src} cannot fund the top-up")
    amount = money(minor, source)
    return TaskDraft(
        prompt=(f"Customer {cid}. {caller(customer)} A payment is due from their {target} checking account and they need its available "
                f"balance to be at least {money(goal, target)} {target}. Convert the smallest whole-cent amount of {source} from their "
                f"{source} checking account that gets it there, and reply with submit_answer giving the {source} amount converted in "
                "values.converted."),
        oracle=[verify(customer), optional_call("list_accounts", customer_id=cid),
                optional_call("get_fx_rate", from_currency=source, to_currency=target),
                call("convert_currency", from_account_id=src, to_account_id=dst, amount=amount, currency=source),
                answer(f"Converted {amount} {source}; the {target} account now has {money(goal, target)} {target} or more available.",
                       converted=amount)],
        outcome=completed(),
        rubric=[
            balance_is(src, pair["a_balance"] - minor, weight=3, name=f"smallest {source} amount debited"),
            balance_is(dst, pair["b_balance"] + minor * rate // 1_000_000, weight=1, name=f"{target} account credited"),
            value_is("converted", amount, weight=1),
        ],
        negatives=[
            negative("mid_rate", "works the amount out at the mid rate, so the account falls short", verify(customer),
                     call("convert_currency", from_account_id=src, to_account_id=dst, amount=money(naive, source), currency=source),
                     answer("Converted.", converted=money(naive, source))),
            negative("one_to_one", f"converts the {target} shortfall as if it were {source}", verify(customer),
                     call("convert_currency", from_account_id=src, to_account_id=dst, amount=money(shortfall, source), currency=source),
                     answer("Converted.", converted=money(shortfall, source))),
            negative("claims_only", "reports a conversion it never made", answer("Converted.", converted=amount)),
        ],
        metadata={"customer_id": cid, "converted": amount, "goal": money(goal, target)},
    )


TEMPLATES = [
    TaskTemplate(fx_quote, difficulty="easy", category="fx", split="train", tags=["lookup", "fx", "arithmetic"],
                 tools=["get_fx_rate", "submit_answer"]),
    TaskTemplate(convert_between_accounts, difficulty="medium", category="fx", split="train", tags=["fx", "conversion"],
                 tools=["verify_identity", "list_accounts", "get_fx_rate", "convert_currency", "submit_answer"]),
    TaskTemplate(fx_top_up, difficulty="hard", category="fx", split="test", tags=["fx", "conversion", "arithmetic"],
                 tools=["verify_identity", "list_accounts", "get_fx_rate", "convert_currency", "submit_answer"]),
]
