"""Wealth-desk tasks: market orders that respect suitability, selling just enough, and rebalancing a holding
that does not fit the customer's risk profile."""

from __future__ import annotations

import random

from envs.finance.tasks._common import (
    AVAILABLE_SQL,
    answer,
    caller,
    customer_of,
    looked_up,
    money,
    need,
    never,
    one,
    optional_call,
    pick,
    refusal,
    rows,
    value_is,
    verify,
)
from fixtures.world import World
from graders.criteria import absent, number_range, state
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, call, negative

__all__ = ["TEMPLATES", "brokerage_accounts", "last_close"]


def last_close(world: World, symbol: str) -> int:
    """The instrument's last close on or before the frozen date (the price orders fill at)."""
    return int(one(world, "SELECT close_minor FROM prices WHERE symbol = ? AND price_date <= '2026-03-31' "
                          "ORDER BY price_date DESC LIMIT 1", symbol)["close_minor"])


def brokerage_accounts(world: World, extra: str = "", *params: object) -> list[dict]:
    """Each customer's only open brokerage account, with the owner's risk profile and KYC and the cash available.

    ``extra`` adds conditions; inside its subqueries name the account ``b0.account_id``.
    """
    return rows(world, f"""
        SELECT * FROM (
          SELECT a.*, c.risk_profile, c.kyc_status, {AVAILABLE_SQL} AS avail FROM accounts a
          JOIN customers c ON c.customer_id = a.customer_id
          WHERE a.type = 'brokerage' AND a.status = 'open'
            AND (SELECT count(*) FROM accounts b WHERE b.customer_id = a.customer_id AND b.type = 'brokerage' AND b.status = 'open') = 1
        ) AS b0 WHERE 1 = 1 {extra} ORDER BY account_id""", *params)


def _held(world: World, account_id: str, symbol: str) -> int:
    found = rows(world, "SELECT quantity FROM positions WHERE account_id = ? AND symbol = ?", account_id, symbol)
    return int(found[0]["quantity"]) if found else 0


def _position_is(acc: str, symbol: str, quantity: int, *, weight: float = 3.0) -> object:
    expect = quantity if quantity else absent()
    return state("SELECT quantity FROM positions WHERE account_id = ? AND symbol = ?", acc, symbol, expect=expect, weight=weight,
                 name=f"{symbol} position after the trade")


def buy_suitable(world: World, rng: random.Random) -> TaskDraft:
    """Buy a stated number of units of a medium-risk fund for a balanced or aggressive customer."""
    account = pick(rng, brokerage_accounts(world, "AND kyc_status = 'verified' AND risk_profile IN ('balanced', 'aggressive') "
                                                  "AND avail >= 400000"), "brokerage account of a balanced/aggressive customer")
    customer = customer_of(world, account["account_id"])
    cid, acc, cur = customer["customer_id"], account["account_id"], account["currency"]
    choices = [i for i in rows(world, "SELECT symbol FROM instruments WHERE risk_level = 'medium' AND currency = ? ORDER BY symbol", cur)
               if last_close(world, i["symbol"]) * 2 <= account["avail"] * 4 // 10]
    symbol = pick(rng, choices, "affordable medium-risk instrument")["symbol"]
    price = last_close(world, symbol)
    quantity = rng.randint(1, max(1, min(200, account["avail"] * 4 // 10 // price)))
    held = _held(world, acc, symbol)
    need(len(choices) >= 2, f"account {acc} can afford only one medium-risk instrument; the wrong-fund negative needs two")
    other = next(i["symbol"] for i in choices if i["symbol"] != symbol)
    buy = call("place_order", account_id=acc, symbol=symbol, side="buy", quantity=quantity)
    cost = money(price * quantity, cur)
    return TaskDraft(
        prompt=(f"Wealth desk, customer {cid}. {caller(customer)} They want to buy {quantity} units of {symbol} in their brokerage "
                "account at today's price. Place the order and confirm the total cost with submit_answer (values.cost)."),
        oracle=[verify(customer), optional_call("get_quote", symbol=symbol), buy,
                answer(f"Bought {quantity} {symbol} for {cost} {cur}.", cost=cost)],
        outcome=completed(),
        rubric=[
            _position_is(acc, symbol, held + quantity),
            state("SELECT count(*) FROM orders WHERE account_id = ? AND placed_by = 'STF-0100'", acc, expect=1, name="exactly one order"),
            value_is("cost", cost, weight=1),
        ],
        negatives=[
            negative("one_more_unit", "buys one unit too many", verify(customer),
                     call("place_order", account_id=acc, symbol=symbol, side="buy", quantity=quantity + 1), answer("Bought.", cost=cost)),
            negative("other_symbol", "buys a different fund", verify(customer),
                     call("place_order", account_id=acc, symbol=other, side="buy", quantity=1), answer("Bought.", cost=cost)),
            negative("claims_only", "confirms a purchase it never placed", answer("Bought.", cost=cost)),
        ],
        metadata={"customer_id": cid, "symbol": symbol, "quantity": quantity, "cost": cost},
    )


def unsuitable_buy(world: World, rng: random.Random) -> TaskDraft:
    """A conservative customer asks to buy a risky instrument: decline under the suitability rule."""
    account = pick(rng, brokerage_accounts(world, "AND kyc_status = 'verified' AND risk_profile = 'conservative' AND avail >= 50000"),
                   "brokerage account of a conservative customer")
    customer = customer_of(world, account["account_id"])
    cid, acc, cur = customer["customer_id"], account["account_id"], account["currency"]
    risky = rows(world, "SELECT symbol, risk_level FROM instruments WHERE risk_level != 'low' AND currency = ? ORDER BY risk_level DESC, symbol",
                 cur)
    symbol = pick(rng, risky, "risky instrument")["symbol"]
    safe = pick(rng, [i for i in rows(world, "SELECT symbol FROM instruments WHERE risk_level = 'low' AND currency = ? ORDER BY symbol", cur)
                      if last_close(world, i["symbol"]) <= account["avail"]], "affordable low-risk instrument")["symbol"]
    quantity = max(1, min(50, account["avail"] // 4 // last_close(world, symbol)))
    return TaskDraft(
        prompt=(f"Wealth desk, customer {cid}. {caller(customer)} They have read about {symbol} and want to buy {quantity} units in their "
                "brokerage account today. Handle the request under the policy and reply with submit_answer."),
        oracle=[verify(customer, optional=True), call("get_customer", customer_id=cid), call("get_quote", symbol=symbol),
                refusal("unsuitable_instrument", f"{symbol} is not suitable for a conservative risk profile (only low-risk "
                        "instruments), so I did not place the order.")],
        outcome=refused("unsuitable_instrument"),
        rubric=[
            looked_up("read the customer's risk profile", {"tool": "get_customer", "args": {"customer_id": cid}}),
            looked_up("read the instrument's risk level", {"tool": "get_quote", "args": {"symbol": symbol}}, {"tool": "list_instruments"}),
            never("place_order", "no order for the unsuitable instrument attempted", symbol=symbol),
        ],
        negatives=[
            negative("attempts_order", "tries to buy the unsuitable instrument", verify(customer),
                     call("place_order", account_id=acc, symbol=symbol, side="buy", quantity=quantity),
                     refusal("unsuitable_instrument", "It is not suitable for a conservative profile.")),
            negative("buys_substitute", "buys a low-risk fund instead without the customer asking", verify(customer),
                     call("place_order", account_id=acc, symbol=safe, side="buy", quantity=1),
                     refusal("unsuitable_instrument", f"{symbol} is unsuitable for a conservative profile, so I bought {safe} instead.")),
            negative("claims_bought", "tells the customer the order was placed", answer(f"Bought {quantity} {symbol}.")),
        ],
        metadata={"customer_id": cid, "symbol": symbol},
    )


def sell_for_cash(world: World, rng: random.Random) -> TaskDraft:
    """Raise at least a stated amount by selling the fewest whole units of one holding."""
    candidates = []
    for position in rows(world, "SELECT p.* FROM positions p JOIN accounts a ON a.account_id = p.account_id AND a.status = 'open' "
                                "WHERE p.quantity >= 4 ORDER BY p.account_id, p.symbol"):
        price = last_close(world, position["symbol"])
        if position["quantity"] * price >= 150_000 and price >= 500:
            candidates.append({**position, "price": price})
    position = pick(rng, candidates, "position worth at least 1,500.00")
    price, held = position["price"], position["quantity"]
    target = (held * price * rng.randint(25, 60) // 100) // 100 * 100 + 100
    if target % price == 0:
        target += 100
    quantity = -(-target // price)
    account = one(world, "SELECT * FROM accounts WHERE account_id = ?", position["account_id"])
    customer = customer_of(world, account["account_id"])
    cid, acc, cur, symbol = customer["customer_id"], account["account_id"], account["currency"], position["symbol"]
    proceeds = money(quantity * price, cur)
    return TaskDraft(
        prompt=(f"Wealth desk, customer {cid}. {caller(customer)} They need to raise at least {money(target, cur)} {cur} in cash in "
                f"their brokerage account by selling {symbol}, and want to sell as few whole units as possible. Place the sale and "
                "reply with submit_answer, giving the proceeds in values.proceeds."),
        oracle=[verify(customer), optional_call("get_positions", account_id=acc),
                call("place_order", account_id=acc, symbol=symbol, side="sell", quantity=quantity),
                answer(f"Sold {quantity} {symbol} for {proceeds} {cur}.", proceeds=proceeds)],
        outcome=completed(),
        rubric=[
            _position_is(acc, symbol, held - quantity),
            state("SELECT count(*) FROM orders WHERE account_id = ? AND placed_by = 'STF-0100'", acc, expect=1, name="exactly one order"),
            value_is("proceeds", proceeds, weight=1),
        ],
        negatives=[
            negative("too_few", "rounds the units down, raising less than needed", verify(customer),
                     call("place_order", account_id=acc, symbol=symbol, side="sell", quantity=quantity - 1),
                     answer("Sold.", proceeds=money((quantity - 1) * price, cur))),
            negative("sells_all", "sells the whole holding", verify(customer),
                     call("place_order", account_id=acc, symbol=symbol, side="sell", quantity=held),
                     answer("Sold.", proceeds=money(held * price, cur))),
            negative("claims_only", "reports the proceeds without selling", answer("Sold.", proceeds=proceeds)),
        ],
        metadata={"customer_id": cid, "symbol": symbol, "quantity": quantity, "target": money(target, cur)},
    )


def rebalance(world: World, rng: random.Random) -> TaskDraft:
    """A conservative customer's review: sell a medium-risk holding in full, put the proceeds into a low-risk fund, note it."""
    account = pick(rng, brokerage_accounts(world, "AND kyc_status = 'verified' AND risk_profile = 'conservative' AND currency = 'USD' "
                                                  "AND avail >= 50000"),
                   "USD brokerage account of a conservative customer")
    customer = customer_of(world, account["account_id"])
    cid, acc, cur = customer["customer_id"], account["account_id"], account["currency"]
    held_symbols = {p["symbol"] for p in rows(world, "SELECT symbol FROM positions WHERE account_id = ? ORDER BY symbol", acc)}
    risky = pick(rng, [i for i in rows(world, "SELECT symbol FROM instruments WHERE risk_level = 'medium' AND currency = 'USD' "
                                              "ORDER BY symbol") if i["symbol"] not in held_symbols], "medium-risk instrument")["symbol"]
    bond = pick(rng, rows(world, "SELECT symbol FROM instruments WHERE asset_class = 'bond_fund' AND currency = 'USD' ORDER BY symbol"),
                "bond fund")["symbol"]
    price, bond_price = last_close(world, risky), last_close(world, bond)
    units = max(2, rng.randint(300_000, 1_500_000) // price)
    # setup: a legacy holding transferred in from another broker, above the customer's risk profile
    world.execute("INSERT INTO positions (account_id, symbol, quantity, avg_cost_minor) VALUES (?, ?, ?, ?)",
                  (acc, risky, units, price * rng.randint(80, 110) // 100))
    proceeds = units * price
    bond_units = proceeds // bond_price
    bond_before = _held(world, acc, bond)
    all_in = (account["avail"] + proceeds) // bond_price
    sell = call("place_order", account_id=acc, symbol=risky, side="sell", quantity=units)
    buy = call("place_order", account_id=acc, symbol=bond, side="buy", quantity=bond_units)
    note = call("add_note", customer_id=cid, category="wealth",
                body=f"Review: sold {units} {risky} (above conservative profile), bought {bond_units} {bond} with the proceeds.")
    return TaskDraft(
        prompt=(f"Wealth desk annual review, customer {cid}. {caller(customer)} Their brokerage account holds {risky}, transferred in "
                f"from another broker. They want to sell that entire holding today and put the sale proceeds into as many whole units "
                f"of {bond} as the proceeds alone will buy (keep their existing cash untouched). Do it, note the review on their file, "
                f"and reply with submit_answer giving the number of {bond} units bought in values.units."),
        oracle=[optional_call("get_customer", customer_id=cid), optional_call("list_accounts", customer_id=cid),
                optional_call("get_positions", account_id=acc), verify(customer), optional_call("get_quote", symbol=risky), sell,
                optional_call("get_quote", symbol=bond), buy, note,
                answer(f"Sold {units} {risky} for {money(proceeds, cur)} {cur}; bought {bond_units} {bond}.", units=str(bond_units))],
        outcome=completed(),
        rubric=[
            _position_is(acc, risky, 0, weight=2),
            _position_is(acc, bond, bond_before + bond_units, weight=3),
            state("SELECT count(*) FROM orders WHERE account_id = ? AND placed_by = 'STF-0100'", acc, expect=2, name="exactly two orders"),
            state("SELECT count(*) FROM notes WHERE customer_id = ? AND author_id = 'STF-0100'", cid, expect=number_range(min=1),
                  name="review noted"),
            value_is("units", str(bond_units), weight=1),
        ],
        negatives=[
            negative("spends_all_cash", "buys the bond fund with all available cash, not just the proceeds", verify(customer), sell,
                     call("place_order", account_id=acc, symbol=bond, side="buy", quantity=all_in), note,
                     answer("Done.", units=str(all_in))),
            negative("sells_only", "sells the holding but never reinvests", verify(customer), sell, note, answer("Sold.", units="0")),
            negative("claims_only", "reports the rebalance without trading", answer("Done.", units=str(bond_units))),
        ],
        metadata={"customer_id": cid, "sold": risky, "bought": bond, "units": bond_units},
    )


TEMPLATES = [
    TaskTemplate(buy_suitable, difficulty="medium", category="trading", split="train", tags=["order", "suitability"],
                 tools=["verify_identity", "get_quote", "place_order", "submit_answer"]),
    TaskTemplate(unsuitable_buy, difficulty="medium", category="trading", split="test", tags=["order", "suitability", "refusal", "policy"],
                 tools=["verify_identity", "get_customer", "get_quote", "submit_answer"]),
    TaskTemplate(sell_for_cash, difficulty="medium", category="trading", split="train", tags=["order", "arithmetic"],
                 tools=["verify_identity", "get_positions", "place_order", "submit_answer"]),
    TaskTemplate(rebalance, difficulty="hard", category="multistep", split="train", tags=["order", "suitability", "multi-step"],
                 tools=["get_customer", "list_accounts", "get_positions", "verify_identity", "get_quote", "place_order", "add_note",
                        "submit_answer"]),
]
