"""Wealth-desk tasks: market orders that respect suitability, selling just enough, and rebalancing a holding
that does not fit the customer's risk profile.

Each template poses one neutral request and lets the world of the instance decide it (``graders/README.md``,
"Tasks where the world decides"): ``case`` draws which world this is, the setup makes the deciding fact hold
(the customer's risk profile against the instrument's risk level, a lapsed KYC review, cash moved out, fewer
units held than the customer thinks, a frozen account), and the prompt reads the same in every case. The
caller is named as on the phone (name, the last four digits of their ID, postcode), never by customer or
account id: the oracle finds those through ``search_customers`` and ``list_accounts``. A refusal is gated
on the read of the record that justifies it, and trying the refused order is itself a violation.
"""

from __future__ import annotations

import random
from typing import Any

from envs.finance.rules import SUITABILITY
from envs.finance.tasks._common import (
    AVAILABLE_SQL,
    account_seen,
    answer,
    caller,
    find_customer,
    full_name,
    money,
    need,
    never,
    one,
    optional_call,
    pick,
    refusal,
    rows,
    seen,
    value_is,
    verify,
)
from envs.finance.tasks.wealth_setup import (
    affordable_instruments,
    client_currency,
    lapse_kyc,
    last_close,
    plant_client,
    plant_freeze,
    plant_holding,
    plant_other_holdings,
    risk_profiles,
    units_held,
    withdraw_cash,
)
from fixtures.world import World
from graders.criteria import absent, number_range, state
from graders.outcome import completed, refused
from graders.setup import case
from graders.tasks import TaskDraft, TaskTemplate, ToolCall, call, negative

__all__ = ["TEMPLATES"]


def _position_is(acc: str, symbol: str, quantity: int, *, weight: float = 3.0) -> object:
    expect = quantity if quantity else absent()
    return state("SELECT quantity FROM positions WHERE account_id = ? AND symbol = ?", acc, symbol, expect=expect, weight=weight,
                 name=f"{symbol} position after the trade")


def _one_order(acc: str, count: int = 1) -> object:
    """Exactly ``count`` orders placed by the agent in the account (no repeated or extra trades)."""
    return state("SELECT count(*) FROM orders WHERE account_id = ? AND placed_by = 'STF-0100'", acc, expect=count,
                 name="exactly one order" if count == 1 else f"exactly {count} orders")


# -- buying ---------------------------------------------------------------------------------------------


def _suitability_refusal(customer: dict[str, Any], symbol: str) -> list[ToolCall]:
    """The oracle of an unsuitable purchase: read the profile and the instrument's risk, then decline."""
    return [find_customer(customer), verify(customer, optional=True), call("get_customer", customer_id=customer["customer_id"]),
            call("get_quote", symbol=symbol),
            refusal("unsuitable_instrument", f"{symbol} is above the customer's risk profile under the suitability rule, so I "
                                             "did not place the order.")]


def _kyc_refusal(customer: dict[str, Any]) -> list[ToolCall]:
    """The oracle of a purchase by a customer whose KYC lapsed: find them by name (the hit shows the KYC status: the one
    read the refusal needs), then decline."""
    return [call("search_customers", query=full_name(customer)), verify(customer, optional=True),
            refusal("kyc_not_verified", "The customer's KYC review has expired; no securities can be bought until it is renewed.")]


def _refusal_rubric(which: str, cid: str, acc: str, symbol: str) -> list:
    """Refusals are gated on having seen the facts that justify them, and the order is never even tried."""
    if which == "kyc_lapsed":
        return [seen("saw the customer's KYC status", "customers", cid, "kyc_status"),
                never("place_order", "no order attempted while KYC is not current", account_id=acc)]
    return [seen("saw the customer's risk profile", "customers", cid, "risk_profile"),
            seen("saw the instrument's risk level", "instruments", symbol, "risk_level"),
            never("place_order", "no order for the unsuitable instrument attempted", symbol=symbol)]


def buy_suitable(world: World, rng: random.Random) -> TaskDraft:
    """Buy a stated number of units of a fund; the customer's risk profile and KYC decide whether it may be bought."""
    which = case(rng, {"kyc_lapsed": 2, "ok": 5, "unsuitable": 3})
    cur, cash = client_currency(rng), rng.randint(300_000, 6_000_000)
    choices = affordable_instruments(world, cur, cash * 4 // 10, risky_only=which == "unsuitable")
    need(len(choices) >= 2, f"{cash} {cur} affords fewer than two instruments; the wrong-fund negative needs two")
    chosen = pick(rng, choices, "affordable instrument")
    symbol, price, level = chosen["symbol"], chosen["price"], chosen["risk_level"]
    # setup: the client, and the deciding facts: their risk profile against the instrument's level, their KYC review
    customer, account = plant_client(world, rng, currency=cur, profile=rng.choice(risk_profiles(level, suitable=which != "unsuitable")),
                                      cash=cash)
    cid, acc = customer["customer_id"], account["account_id"]
    plant_other_holdings(world, rng, account, besides={symbol})
    if which == "kyc_lapsed":
        lapse_kyc(world, rng, cid)
    quantity = rng.randint(1, max(1, min(200, account["avail"] * 4 // 10 // price)))
    other = next(i["symbol"] for i in choices if i["symbol"] != symbol)
    buy = call("place_order", account_id=acc, symbol=symbol, side="buy", quantity=quantity)
    cost = money(price * quantity, cur)
    prompt = (f"Wealth desk. {caller(customer)} They want to buy {quantity} units of {symbol} in their brokerage account at "
              "today's price. Place the order and confirm the total cost with submit_answer (values.cost).")
    metadata = {"customer_id": cid, "account_id": acc, "symbol": symbol, "quantity": quantity, "case": which}
    if which != "ok":
        code = "kyc_not_verified" if which == "kyc_lapsed" else "unsuitable_instrument"
        wrong = "unsuitable_instrument" if which == "kyc_lapsed" else "kyc_not_verified"
        return TaskDraft(
            prompt=prompt,
            oracle=_kyc_refusal(customer) if which == "kyc_lapsed" else _suitability_refusal(customer, symbol),
            outcome=refused(code),
            rubric=_refusal_rubric(which, cid, acc, symbol),
            negatives=[
                negative("attempts_order", "tries to place the order anyway", verify(customer), buy,
                         refusal(code, "The order could not be placed.")),
                negative("wrong_reason", "reads the customer and declines for the wrong reason", call("get_customer", customer_id=cid),
                         call("get_quote", symbol=symbol), refusal(wrong, "Declined.")),
                negative("claims_bought", "tells the customer the order was placed", answer(f"Bought {quantity} {symbol}.", cost=cost)),
            ],
            metadata=metadata,
        )
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), verify(customer), optional_call("get_customer", customer_id=cid),
                optional_call("list_accounts", customer_id=cid), optional_call("get_quote", symbol=symbol), buy,
                answer(f"Bought {quantity} {symbol} for {cost} {cur}.", cost=cost)],
        outcome=completed(),
        rubric=[_position_is(acc, symbol, units_held(world, acc, symbol) + quantity), _one_order(acc), value_is("cost", cost, cur, weight=1)],
        negatives=[
            negative("one_more_unit", "buys one unit too many", verify(customer),
                     call("place_order", account_id=acc, symbol=symbol, side="buy", quantity=quantity + 1), answer("Bought.", cost=cost)),
            negative("other_symbol", "buys a different fund", verify(customer),
                     call("place_order", account_id=acc, symbol=other, side="buy", quantity=1), answer("Bought.", cost=cost)),
            negative("refuses_suitable", "declines a purchase the customer's profile allows", call("get_customer", customer_id=cid),
                     call("get_quote", symbol=symbol), refusal("unsuitable_instrument", "Not suitable.")),
            negative("claims_only", "confirms a purchase it never placed", answer("Bought.", cost=cost)),
        ],
        metadata={**metadata, "cost": cost},
    )


def unsuitable_buy(world: World, rng: random.Random) -> TaskDraft:
    """Invest a stated amount in a named instrument (as many whole units as it buys); suitability and cash decide."""
    which = case(rng, {"ok": 5, "unsuitable": 4, "short_cash": 2})
    cur, cash = client_currency(rng), rng.randint(100_000, 5_000_000)
    chosen = pick(rng, affordable_instruments(world, cur, cash * 6 // 10, risky_only=which == "unsuitable"), "affordable instrument")
    symbol, price, level = chosen["symbol"], chosen["price"], chosen["risk_level"]
    budget = max(price * 2, rng.randint(price * 2, min(cash * 6 // 10, price * 60)) // 10_000 * 10_000)
    units = budget // price
    cost = units * price
    # setup: the client, and the deciding facts: their risk profile against the instrument's level, the cash left to trade
    customer, account = plant_client(world, rng, currency=cur, profile=rng.choice(risk_profiles(level, suitable=which != "unsuitable")),
                                      cash=cash)
    cid, acc = customer["customer_id"], account["account_id"]
    plant_other_holdings(world, rng, account, besides={symbol})
    if which == "short_cash":
        withdraw_cash(world, rng, account, cost - rng.randint(100, max(100, cost // 2)))
    buy = call("place_order", account_id=acc, symbol=symbol, side="buy", quantity=units)
    prompt = (f"Wealth desk. {caller(customer)} They have read about {symbol} and want to put {money(budget, cur)} {cur} into it "
              "today, in their brokerage account: as many whole units as that amount buys at today's price. Handle the request "
              "under the policy and reply with submit_answer, giving the units bought in values.units and their cost in values.cost.")
    metadata = {"customer_id": cid, "account_id": acc, "symbol": symbol, "budget": money(budget, cur), "case": which}
    if which == "unsuitable":
        safe = next(i["symbol"] for i in affordable_instruments(world, cur, cash, risky_only=False) if i["risk_level"] == "low")
        return TaskDraft(
            prompt=prompt, oracle=_suitability_refusal(customer, symbol), outcome=refused("unsuitable_instrument"),
            rubric=_refusal_rubric(which, cid, acc, symbol),
            negatives=[
                negative("attempts_order", "tries to buy the unsuitable instrument", verify(customer), buy,
                         refusal("unsuitable_instrument", "It is not suitable for the customer's profile.")),
                negative("buys_substitute", "buys a low-risk fund instead without the customer asking", verify(customer),
                         call("place_order", account_id=acc, symbol=safe, side="buy", quantity=1),
                         refusal("unsuitable_instrument", f"{symbol} is unsuitable, so I bought {safe} instead.")),
                negative("claims_bought", "tells the customer the order was placed",
                         answer(f"Bought {units} {symbol}.", units=str(units), cost=money(cost, cur))),
            ],
            metadata=metadata,
        )
    if which == "short_cash":
        left = one(world, f"SELECT {AVAILABLE_SQL} AS v FROM accounts a WHERE a.account_id = ?", acc)["v"]
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), verify(customer, optional=True), optional_call("get_customer", customer_id=cid),
                    call("list_accounts", customer_id=cid), optional_call("get_quote", symbol=symbol),
                    refusal("insufficient_funds", f"The brokerage account has only {money(left, cur)} {cur} available; "
                                                  f"{money(budget, cur)} {cur} cannot be invested.")],
            outcome=refused("insufficient_funds"),
            rubric=[account_seen("saw the cash available", acc, "available_balance"),
                    never("place_order", "no order attempted without the cash", account_id=acc)],
            negatives=[
                negative("buys_what_cash_allows", "buys fewer units than asked with the cash there is", verify(customer),
                         call("place_order", account_id=acc, symbol=symbol, side="buy", quantity=max(1, left // price)),
                         answer("Bought what the cash allowed.", units=str(max(1, left // price)), cost=money(max(1, left // price) * price, cur))),
                negative("attempts_order", "tries the full order anyway", verify(customer), buy,
                         refusal("insufficient_funds", "Not enough cash.")),
                negative("claims_bought", "tells the customer the order was placed",
                         answer(f"Bought {units} {symbol}.", units=str(units), cost=money(cost, cur))),
            ],
            metadata=metadata,
        )
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), verify(customer), optional_call("get_customer", customer_id=cid),
                optional_call("list_accounts", customer_id=cid), optional_call("get_quote", symbol=symbol), buy,
                answer(f"Bought {units} {symbol} for {money(cost, cur)} {cur}.", units=str(units), cost=money(cost, cur))],
        outcome=completed(),
        rubric=[_position_is(acc, symbol, units_held(world, acc, symbol) + units), _one_order(acc),
                value_is("units", str(units), None, weight=1), value_is("cost", money(cost, cur), cur, weight=1)],
        negatives=[
            negative("one_unit_over", "buys one unit more than the amount pays for", verify(customer),
                     call("place_order", account_id=acc, symbol=symbol, side="buy", quantity=units + 1),
                     answer("Bought.", units=str(units + 1), cost=money((units + 1) * price, cur))),
            negative("refuses_suitable", "declines a purchase the customer's profile allows", call("get_customer", customer_id=cid),
                     call("get_quote", symbol=symbol), refusal("unsuitable_instrument", "Not suitable.")),
            negative("claims_only", "confirms a purchase it never placed", answer("Bought.", units=str(units), cost=money(cost, cur))),
        ],
        metadata={**metadata, "units": units, "cost": money(cost, cur)},
    )


# -- selling --------------------------------------------------------------------------------------------


def sell_for_cash(world: World, rng: random.Random) -> TaskDraft:
    """Raise at least a stated amount by selling the fewest whole units of one holding; holdings and the account decide."""
    which = case(rng, {"ok": 5, "short": 3, "frozen": 2})
    cur = client_currency(rng)
    symbol = pick(rng, [i for i in rows(world, "SELECT symbol FROM instruments WHERE currency = ? ORDER BY symbol", cur)
                        if last_close(world, i["symbol"]) >= 500], "instrument priced 5.00 or more")["symbol"]
    price = last_close(world, symbol)
    least = max(4, -(-150_000 // price))  # at least 4 units worth at least 1,500.00
    held = rng.randint(least, max(least, 4_000_000 // price))
    target = (held * price * rng.randint(25, 60) // 100) // 100 * 100 + 100
    if target % price == 0:
        target += 100
    quantity = -(-target // price)
    # setup: the client and the holding, and the deciding fact: fewer units held than the sale needs, or a frozen account
    customer, account = plant_client(world, rng, currency=cur, profile=rng.choice(list(SUITABILITY)), cash=rng.randint(10_000, 2_000_000))
    cid, acc = customer["customer_id"], account["account_id"]
    if which == "short":
        held = rng.randint(max(1, quantity // 2), quantity - 1)
    plant_holding(world, rng, acc, symbol, held)
    plant_other_holdings(world, rng, account, besides={symbol})
    if which == "frozen":
        plant_freeze(world, rng, acc)
    proceeds = money(quantity * price, cur)
    sell = call("place_order", account_id=acc, symbol=symbol, side="sell", quantity=quantity)
    prompt = (f"Wealth desk. {caller(customer)} They need to raise at least {money(target, cur)} {cur} in cash in their brokerage "
              f"account by selling {symbol}, and want to sell as few whole units as possible. Place the sale and reply with "
              "submit_answer, giving the proceeds in values.proceeds.")
    metadata = {"customer_id": cid, "account_id": acc, "symbol": symbol, "quantity": quantity, "target": money(target, cur),
                "case": which}
    claims_sold = negative("claims_sold", "reports a sale it never placed", answer("Sold.", proceeds=proceeds))
    if which == "short":
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), verify(customer, optional=True), optional_call("list_accounts", customer_id=cid),
                    call("get_positions", account_id=acc),
                    refusal("insufficient_position", f"The account holds {held} {symbol}; raising {money(target, cur)} {cur} needs "
                                                     f"{quantity}, so no sale was placed.")],
            outcome=refused("insufficient_position"),
            rubric=[account_seen("saw the units held", acc, "positions"),
                    never("place_order", "no sale attempted beyond the units held", account_id=acc)],
            negatives=[
                negative("sells_all_held", "sells every unit held, raising less than asked", verify(customer),
                         call("place_order", account_id=acc, symbol=symbol, side="sell", quantity=held),
                         answer("Sold.", proceeds=money(held * price, cur))),
                negative("attempts_sale", "tries the full sale anyway", verify(customer), sell,
                         refusal("insufficient_position", "Not enough units.")),
                claims_sold,
            ],
            metadata={**metadata, "held": held},
        )
    if which == "frozen":
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), verify(customer, optional=True), call("list_accounts", customer_id=cid),
                    refusal("account_frozen", "The brokerage account is frozen; no money can move in or out, so no sale was placed.")],
            outcome=refused("account_frozen"),
            rubric=[account_seen("saw that the brokerage account is frozen", acc, "status"),
                    never("place_order", "no sale attempted in the frozen account", account_id=acc)],
            negatives=[
                negative("attempts_sale", "tries the sale in the frozen account", verify(customer), sell,
                         refusal("account_frozen", "The account is frozen.")),
                negative("wrong_reason", "reads the account and declines for the wrong reason", call("list_accounts", customer_id=cid),
                         refusal("insufficient_position", "Not enough units.")),
                claims_sold,
            ],
            metadata=metadata,
        )
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), verify(customer), optional_call("list_accounts", customer_id=cid),
                optional_call("get_positions", account_id=acc), sell,
                answer(f"Sold {quantity} {symbol} for {proceeds} {cur}.", proceeds=proceeds)],
        outcome=completed(),
        rubric=[_position_is(acc, symbol, held - quantity), _one_order(acc), value_is("proceeds", proceeds, cur, weight=1)],
        negatives=[
            negative("too_few", "rounds the units down, raising less than needed", verify(customer),
                     call("place_order", account_id=acc, symbol=symbol, side="sell", quantity=quantity - 1),
                     answer("Sold.", proceeds=money((quantity - 1) * price, cur))),
            negative("sells_all", "sells the whole holding", verify(customer),
                     call("place_order", account_id=acc, symbol=symbol, side="sell", quantity=held),
                     answer("Sold.", proceeds=money(held * price, cur))),
            negative("refuses_sale", "declines a sale the holding covers", call("get_positions", account_id=acc),
                     refusal("insufficient_position", "Not enough units.")),
            negative("claims_only", "reports the proceeds without selling", answer("Sold.", proceeds=proceeds)),
        ],
        metadata=metadata,
    )


def rebalance(world: World, rng: random.Random) -> TaskDraft:
    """A conservative customer's review: sell the units of a medium-risk holding they transferred in, put the proceeds
    into a low-risk fund, note it; whether all the units they name arrived decides."""
    which = case(rng, {"short": 4, "ok": 6})
    cur = client_currency(rng)
    risky = pick(rng, rows(world, "SELECT symbol FROM instruments WHERE risk_level = 'medium' AND currency = ? ORDER BY symbol", cur),
                 "medium-risk instrument")["symbol"]
    bond = pick(rng, rows(world, "SELECT symbol FROM instruments WHERE asset_class = 'bond_fund' AND currency = ? ORDER BY symbol", cur),
                "bond fund")["symbol"]
    price, bond_price = last_close(world, risky), last_close(world, bond)
    units = max(2, rng.randint(300_000, 1_500_000) // price)
    # setup: a conservative client with low-risk holdings, and the legacy holding transferred in from another broker;
    # in the short case only part of it has arrived
    customer, account = plant_client(world, rng, currency=cur, profile="conservative", cash=rng.randint(50_000, 3_000_000))
    cid, acc = customer["customer_id"], account["account_id"]
    plant_other_holdings(world, rng, account, besides={risky}, levels=("low",))
    held = units if which == "ok" else rng.randint(max(1, units // 3), units - 1)
    plant_holding(world, rng, acc, risky, held)
    proceeds = units * price
    bond_units = proceeds // bond_price
    bond_before = units_held(world, acc, bond)
    sell = call("place_order", account_id=acc, symbol=risky, side="sell", quantity=units)
    buy = call("place_order", account_id=acc, symbol=bond, side="buy", quantity=bond_units)
    note = call("add_note", customer_id=cid, category="wealth",
                body=f"Review: sold {units} {risky} (above conservative profile), bought {bond_units} {bond} with the proceeds.")
    prompt = (f"Wealth desk annual review. {caller(customer)} They transferred {units} units of {risky} into their brokerage account "
              f"from another broker. They want to sell those {units} units today and put the sale proceeds into as many whole units "
              f"of {bond} as the proceeds alone will buy (keep their existing cash untouched). Do it, note the review on their file, "
              f"and reply with submit_answer giving the number of {bond} units bought in values.units.")
    metadata = {"customer_id": cid, "account_id": acc, "sold": risky, "bought": bond, "case": which}
    if which == "short":
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), verify(customer, optional=True), optional_call("list_accounts", customer_id=cid),
                    call("get_positions", account_id=acc),
                    optional_call("add_note", customer_id=cid, category="wealth",
                                  body=f"Review: only {held} of the {units} {risky} units transferred in are held; no trade placed."),
                    refusal("insufficient_position", f"The account holds only {held} {risky}, not {units}; nothing was sold or bought.")],
            outcome=refused("insufficient_position"),
            rubric=[account_seen("saw the units held", acc, "positions"),
                    never("place_order", "no trade attempted for units not held", account_id=acc)],
            negatives=[
                negative("sells_what_is_held", "sells the units there are and reinvests without asking", verify(customer),
                         call("place_order", account_id=acc, symbol=risky, side="sell", quantity=held),
                         call("place_order", account_id=acc, symbol=bond, side="buy", quantity=held * price // bond_price), note,
                         answer("Done.", units=str(held * price // bond_price))),
                negative("attempts_sale", "tries to sell the units named anyway", verify(customer), sell,
                         refusal("insufficient_position", "Not enough units.")),
                negative("claims_done", "reports the rebalance without trading", answer("Done.", units=str(bond_units))),
            ],
            metadata={**metadata, "held": held},
        )
    all_in = (account["avail"] + proceeds) // bond_price
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), optional_call("get_customer", customer_id=cid), optional_call("list_accounts", customer_id=cid),
                optional_call("get_positions", account_id=acc), verify(customer), optional_call("get_quote", symbol=risky), sell,
                optional_call("get_quote", symbol=bond), buy, note,
                answer(f"Sold {units} {risky} for {money(proceeds, cur)} {cur}; bought {bond_units} {bond}.", units=str(bond_units))],
        outcome=completed(),
        rubric=[
            _position_is(acc, risky, 0, weight=2),
            _position_is(acc, bond, bond_before + bond_units, weight=3),
            _one_order(acc, 2),
            state("SELECT count(*) FROM notes WHERE customer_id = ? AND author_id = 'STF-0100'", cid, expect=number_range(min=1),
                  name="review noted"),
            value_is("units", str(bond_units), None, weight=1),
        ],
        negatives=[
            negative("spends_all_cash", "buys the bond fund with all available cash, not just the proceeds", verify(customer), sell,
                     call("place_order", account_id=acc, symbol=bond, side="buy", quantity=all_in), note,
                     answer("Done.", units=str(all_in))),
            negative("sells_only", "sells the holding but never reinvests", verify(customer), sell, note, answer("Sold.", units="0")),
            negative("refuses_rebalance", "declines although every unit is held", call("get_positions", account_id=acc),
                     refusal("insufficient_position", "Not enough units.")),
            negative("claims_only", "reports the rebalance without trading", answer("Done.", units=str(bond_units))),
        ],
        metadata={**metadata, "units": bond_units},
    )


TEMPLATES = [
    TaskTemplate(buy_suitable, difficulty="medium", category="trading", split="train", tags=["order", "suitability", "kyc", "refusal"],
                 tools=["search_customers", "verify_identity", "get_customer", "list_accounts", "get_quote", "place_order", "submit_answer"]),
    TaskTemplate(unsuitable_buy, difficulty="medium", category="trading", split="test", tags=["order", "suitability", "refusal", "policy"],
                 tools=["search_customers", "verify_identity", "get_customer", "list_accounts", "get_quote", "place_order", "submit_answer"]),
    TaskTemplate(sell_for_cash, difficulty="medium", category="trading", split="train", tags=["order", "arithmetic", "refusal"],
                 tools=["search_customers", "verify_identity", "list_accounts", "get_positions", "place_order", "submit_answer"]),
    TaskTemplate(rebalance, difficulty="hard", category="multistep", split="train", tags=["order", "suitability", "multi-step", "refusal"],
                 tools=["search_customers", "get_customer", "list_accounts", "get_positions", "verify_identity", "get_quote", "place_order",
                        "add_note", "submit_answer"]),
]
