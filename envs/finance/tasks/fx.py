"""Currency tasks: quotes and conversions at the customer rate (mid less the spread, truncated to 6 decimals;
credits rounded down to the cent), including working backwards to the smallest amount that covers a need.

Conversions are decided by the world of each instance (``graders.setup.case``): the source account may not have
the amount available (``insufficient_funds``) or the target may be frozen (``account_frozen``), and the amount is
drawn relative to the account's available balance in every case, so the prompt alone does not tell. Prompts name
the customer as a caller would; the account ids come from tool results.
"""

from __future__ import annotations

import random

from envs.finance.tasks._common import (
    account_seen,
    answer,
    available_minor,
    balance_is,
    caller,
    find_customer,
    full_name,
    identity_refused,
    money,
    need,
    never,
    one,
    optional_call,
    pick,
    refusal,
    rows,
    seen,
    stated_digits,
    value_is,
    verify,
)
from envs.finance.tasks.customer_setup import around, plant_account, plant_account_freeze, plant_customer
from fixtures.world import World
from graders.outcome import completed, refused
from graders.setup import case
from graders.tasks import TaskDraft, TaskTemplate, call, negative

__all__ = ["TEMPLATES", "customer_rate"]


def customer_rate(world: World, source: str, target: str) -> tuple[int, int]:
    """(customer rate, mid rate) in micro-units for ``source`` → ``target``."""
    row = one(world, "SELECT mid_rate_micros, spread_bps FROM fx_rates WHERE base = ? AND quote = ?", source, target)
    return row["mid_rate_micros"] * (10_000 - row["spread_bps"]) // 10_000, row["mid_rate_micros"]


def _plant_rate_move(world: World, rng: random.Random, source: str, target: str) -> None:
    """Today's mid rate of ``source``/``target`` moved by up to ±1.5% (its inverse quote moved with it).

    Why: the quoted figure then depends on this instance's world, not on a rate learnt from other seeds.
    """
    mid = one(world, "SELECT mid_rate_micros FROM fx_rates WHERE base = ? AND quote = ?", source, target)["mid_rate_micros"]
    moved = mid * (10_000 + rng.randint(-150, 150)) // 10_000
    world.execute("UPDATE fx_rates SET mid_rate_micros = ? WHERE base = ? AND quote = ?", (moved, source, target))
    world.execute("UPDATE fx_rates SET mid_rate_micros = ? WHERE base = ? AND quote = ?", ((10**12 + moved // 2) // moved, target, source))


def _plant_two_currencies(world: World, rng: random.Random, source_balance: int,
                          currencies: tuple[str, str] | None = None) -> dict:
    """A customer with two checking accounts in different currencies: ``a`` (the source, holding ``source_balance``)
    and ``b``; either may be the home one. Returns their ids, currencies, balances and available balances."""
    source, target = currencies or tuple(rng.sample(["USD", "EUR", "GBP"], 2))
    home_is_source = rng.random() < 0.5
    customer = plant_customer(world, rng, currency=source if home_is_source else target)
    other_balance = rng.randint(10_000, 1_200_000)
    if home_is_source:  # the home account was opened first, as the bank did
        a = plant_account(world, rng, customer, "checking", source, source_balance)
        b = plant_account(world, rng, customer, "checking", target, other_balance)
    else:
        b = plant_account(world, rng, customer, "checking", target, other_balance)
        a = plant_account(world, rng, customer, "checking", source, source_balance)
    return {"customer": customer, "a_id": a["account_id"], "a_cur": source, "a_balance": a["balance_minor"],
            "a_avail": available_minor(world, a["account_id"]), "b_id": b["account_id"], "b_cur": target,
            "b_balance": b["balance_minor"], "b_avail": available_minor(world, b["account_id"])}


def fx_quote(world: World, rng: random.Random) -> TaskDraft:
    """What would a conversion credit? Quote it at the customer rate without converting anything."""
    account = pick(rng, rows(world, "SELECT * FROM accounts WHERE type = 'checking' AND status = 'open' ORDER BY account_id"), "checking")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", account["customer_id"])
    source = account["currency"]
    target = rng.choice(sorted({"USD", "EUR", "GBP"} - {source}))
    _plant_rate_move(world, rng, source, target)
    rate, mid = customer_rate(world, source, target)
    minor = rng.randint(50, 2_000) * 1_000 + rng.choice([0, 0, 550, 1_275])
    amount = money(minor, source)
    received = money(minor * rate // 1_000_000, target)
    at_mid = money(minor * mid // 1_000_000, target)
    return TaskDraft(
        prompt=(f"{full_name(customer)} is planning a trip and asks how many {target} they would receive today if they converted "
                f"{amount} {source}. Do not convert anything; reply with submit_answer, giving the amount in values.received."),
        oracle=[call("get_fx_rate", from_currency=source, to_currency=target),
                answer(f"{amount} {source} converts to {received} {target} at today's customer rate.", received=received)],
        outcome=completed(),
        rubric=[
            value_is("received", received, target, weight=3),
            seen("saw today's rate", "fx_rates", (source, target), "customer_rate", weight=1),
        ],
        negatives=[
            negative("mid_rate", "quotes at the mid rate, forgetting the bank's spread",
                     call("get_fx_rate", from_currency=source, to_currency=target), answer("Quote.", received=at_mid)),
            negative("no_lookup", "quotes the right figure without reading today's rate", answer("Quote.", received=received)),
        ],
        metadata={"customer_id": customer["customer_id"], "received": received},
    )


def convert_between_accounts(world: World, rng: random.Random) -> TaskDraft:
    """Convert a stated amount between a customer's two checking accounts in different currencies — when it can be.

    The world decides: on most seeds the source account has the amount available (convert, ``completed``); on
    others it has less (``insufficient_funds``) or compliance froze the target account (``account_frozen``).
    """
    which = case(rng, {"ok": 6, "insufficient_funds": 2, "account_frozen": 2})
    minor = rng.randint(1, 150) * 10_000 - rng.choice([0, 4_500])  # 55.00 to 15,000.00
    # the source balance is drawn around the amount: short of it, or with room to convert it twice (a negative)
    pair = _plant_two_currencies(world, rng, around(rng, minor, 300, 950) if which == "insufficient_funds"
                                 else around(rng, minor, 2_200, 8_000))
    customer = pair["customer"]
    cid, src, dst, source, target = customer["customer_id"], pair["a_id"], pair["b_id"], pair["a_cur"], pair["b_cur"]
    rate, mid = customer_rate(world, source, target)
    if which == "account_frozen":
        plant_account_freeze(world, rng, dst)
    amount = money(minor, source)
    credited = money(minor * rate // 1_000_000, target)
    convert = call("convert_currency", from_account_id=src, to_account_id=dst, amount=amount, currency=source)
    prompt = (f"{caller(customer)} They want to convert {amount} {source} from their {source} checking account into their {target} "
              "checking account. Handle the request under the policy and reply with submit_answer, giving the "
              f"{target} amount credited in values.credited if you convert.")
    metadata = {"customer_id": cid, "case": which}
    if which == "ok":
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), verify(customer), optional_call("list_accounts", customer_id=cid),
                    optional_call("get_fx_rate", from_currency=source, to_currency=target),
                    convert, answer(f"Converted {amount} {source} into {credited} {target}.", credited=credited)],
            outcome=completed(),
            rubric=[
                balance_is(src, pair["a_balance"] - minor, name=f"{source} account debited"),
                balance_is(dst, pair["b_balance"] + minor * rate // 1_000_000, name=f"{target} account credited at the customer rate"),
                value_is("credited", credited, target, weight=1),
            ],
            negatives=[
                negative("converts_twice", "runs the conversion twice", verify(customer), convert, convert,
                         answer("Converted.", credited=credited)),
                negative("mid_rate_answer", "converts correctly but reports the mid-rate figure", verify(customer), convert,
                         answer("Converted.", credited=money(minor * mid // 1_000_000, target))),
                negative("refuses", "refuses a conversion the account can pay", call("list_accounts", customer_id=cid),
                         refusal("insufficient_funds", "Not enough money.")),
                negative("claims_only", "reports a conversion it never made", answer("Converted.", credited=credited)),
            ],
            metadata={**metadata, "credited": credited},
        )
    watched, why = ((src, f"the {source} account has less than {amount} {source} available") if which == "insufficient_funds"
                    else (dst, f"the {target} account is frozen and cannot receive money"))
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), verify(customer, optional=True), call("list_accounts", customer_id=cid),
                refusal(which, f"I cannot convert {amount} {source}: {why}.")],
        outcome=refused(which),
        rubric=[
            account_seen(f"saw the {source} account's available balance" if which == "insufficient_funds"
                         else f"saw that the {target} account is frozen", watched,
                         "available_balance" if which == "insufficient_funds" else "status"),
            never("convert_currency", "no conversion made or attempted"),
        ],
        negatives=[
            negative("no_read", "refuses without reading the accounts", refusal(which, "Cannot convert.")),
            negative("tries_first", "attempts the conversion, then refuses", verify(customer), call("list_accounts", customer_id=cid),
                     convert, refusal(which, "Cannot convert.")),
            negative("claims_converted", "reports a conversion it never made", verify(customer), call("list_accounts", customer_id=cid),
                     answer("Converted.", credited=credited)),
        ],
        metadata=metadata,
    )


def _smallest_source(shortfall: int, rate: int) -> int:
    """The fewest minor units of the source currency whose credit (rounded down) covers ``shortfall``."""
    minor = -(-shortfall * 1_000_000 // rate)
    while minor * rate // 1_000_000 < shortfall:
        minor += 1
    return minor


def fx_top_up(world: World, rng: random.Random) -> TaskDraft:
    """Convert the smallest amount that brings the other-currency account's available balance up to a target — if
    the source account can fund it (else ``insufficient_funds``; the world decides which)."""
    which = case(rng, {"insufficient_funds": 2, "ok": 6, "wrong_digits": 2})
    shortfall = rng.randint(50, 1_200) * 100 + rng.randint(1, 99)  # in the target currency
    source_cur, target_cur = rng.sample(["USD", "EUR", "GBP"], 2)
    rate, mid = customer_rate(world, source_cur, target_cur)
    needed = _smallest_source(shortfall, rate)
    # the source balance is drawn around what the top-up needs: short of it, or enough for it
    pair = _plant_two_currencies(world, rng, around(rng, needed, 300, 950) if which == "insufficient_funds"
                                 else around(rng, needed, 1_100, 6_000), currencies=(source_cur, target_cur))
    customer = pair["customer"]
    cid, src, dst, source, target = customer["customer_id"], pair["a_id"], pair["b_id"], pair["a_cur"], pair["b_cur"]
    stated = stated_digits(rng, customer, which == "wrong_digits")
    goal = pair["b_avail"] + shortfall
    minor = needed
    need((minor <= pair["a_avail"]) == (which != "insufficient_funds"), f"{src} funds the top-up unless the case says it cannot")
    naive = -(-shortfall * 1_000_000 // mid)
    amount = money(minor, source)
    prompt = (f"{caller(customer, last4=stated)} A payment is due from their {target} checking account and they need its available "
              f"balance to be at least {money(goal, target)} {target}. Convert the smallest whole-cent amount of {source} from their "
              f"{source} checking account that gets it there, under the policy, and reply with submit_answer giving the "
              f"{source} amount converted in values.converted if you convert.")
    metadata = {"customer_id": cid, "case": which, "goal": money(goal, target)}
    convert = call("convert_currency", from_account_id=src, to_account_id=dst, amount=amount, currency=source)
    if which == "wrong_digits":
        return identity_refused(customer, stated, prompt, convert, metadata=metadata)
    if which == "ok":
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), verify(customer), optional_call("list_accounts", customer_id=cid),
                    optional_call("get_fx_rate", from_currency=source, to_currency=target), convert,
                    answer(f"Converted {amount} {source}; the {target} account now has {money(goal, target)} {target} or more available.",
                           converted=amount)],
            outcome=completed(),
            rubric=[
                balance_is(src, pair["a_balance"] - minor, weight=3, name=f"smallest {source} amount debited"),
                balance_is(dst, pair["b_balance"] + minor * rate // 1_000_000, weight=1, name=f"{target} account credited"),
                value_is("converted", amount, source, weight=1),
            ],
            negatives=[
                negative("mid_rate", "works the amount out at the mid rate, so the account falls short", verify(customer),
                         call("convert_currency", from_account_id=src, to_account_id=dst, amount=money(naive, source), currency=source),
                         answer("Converted.", converted=money(naive, source))),
                negative("one_to_one", f"converts the {target} shortfall as if it were {source}", verify(customer),
                         call("convert_currency", from_account_id=src, to_account_id=dst, amount=money(shortfall, source), currency=source),
                         answer("Converted.", converted=money(shortfall, source))),
                negative("refuses", "refuses a top-up the account can fund", call("list_accounts", customer_id=cid),
                         refusal("insufficient_funds", "Not enough money.")),
                negative("claims_only", "reports a conversion it never made", answer("Converted.", converted=amount)),
            ],
            metadata={**metadata, "converted": amount},
        )
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), verify(customer, optional=True), call("list_accounts", customer_id=cid),
                optional_call("get_fx_rate", from_currency=source, to_currency=target),
                refusal("insufficient_funds", f"Reaching {money(goal, target)} {target} needs {amount} {source}, more than the "
                                              f"{source} account has available.")],
        outcome=refused("insufficient_funds"),
        rubric=[
            seen("saw both accounts' available balances", "accounts", [src, dst], "available_balance", weight=2),
            never("convert_currency", "no conversion made or attempted"),
        ],
        negatives=[
            negative("no_read", "refuses without reading the accounts", refusal("insufficient_funds", "Not enough money.")),
            negative("converts_all", "converts everything available, short of the goal, without asking", verify(customer),
                     call("list_accounts", customer_id=cid),
                     call("convert_currency", from_account_id=src, to_account_id=dst, amount=money(pair["a_avail"], source),
                          currency=source), answer("Converted what there was.", converted=money(pair["a_avail"], source))),
            negative("claims_converted", "reports a conversion it never made", verify(customer), call("list_accounts", customer_id=cid),
                     answer("Converted.", converted=amount)),
        ],
        metadata=metadata,
    )


TEMPLATES = [
    TaskTemplate(fx_quote, difficulty="easy", category="fx", split="train", tags=["lookup", "fx", "arithmetic"],
                 tools=["get_fx_rate", "submit_answer"],
                 one_sided=("a quote is a read the policy always allows, so the answer is always a quote; what makes it work is the "
                            "figure, which depends on the seed's amount and on the day's rate planted in the instance's world")),
    TaskTemplate(convert_between_accounts, difficulty="medium", category="fx", split="train", tags=["fx", "conversion"],
                 tools=["search_customers", "verify_identity", "list_accounts", "get_fx_rate", "convert_currency", "submit_answer"]),
    TaskTemplate(fx_top_up, difficulty="hard", category="fx", split="test", tags=["fx", "conversion", "arithmetic"],
                 tools=["search_customers", "verify_identity", "list_accounts", "get_fx_rate", "convert_currency", "submit_answer"]),
]
