"""Wealth-desk tools: instruments and quotes, positions, market orders, FX rates and conversions."""

from __future__ import annotations

from typing import Any, Literal

from envs.finance import models as m
from envs.finance import rules
from envs.finance.ledger import audit, next_id, post
from envs.finance.types import AccountId, Amount, Currency, Quantity, Symbol
from envs.finance.views import quote_view
from servers.tools import DomainError, ToolContext, tool

__all__ = ["list_instruments", "get_quote", "get_positions", "place_order", "get_fx_rate", "convert_currency"]


def _instrument(ctx: ToolContext, symbol: str) -> dict[str, Any]:
    rows = ctx.world.query("SELECT * FROM instruments WHERE symbol = ?", (symbol,))
    if not rows:
        raise DomainError("not_found", f"no instrument {symbol}; list_instruments shows what can be traded")
    return rows[0]


def _last_close(ctx: ToolContext, symbol: str) -> int:
    rows = ctx.world.query("SELECT close_minor FROM prices WHERE symbol = ? AND price_date <= ? ORDER BY price_date DESC LIMIT 1",
                           (symbol, ctx.clock.today.isoformat()))
    if not rows:
        raise DomainError("no_price", f"{symbol} has no price on or before {ctx.clock.today}")
    return int(rows[0]["close_minor"])


@tool(title="List instruments")
async def list_instruments(
    ctx: ToolContext,
    asset_class: Literal["equity", "etf", "bond_fund", "money_market"] | None = None,
    risk_level: Literal["low", "medium", "high"] | None = None,
    currency: Currency | None = None,
) -> m.InstrumentList:
    """Instruments the wealth desk trades, with last prices and risk levels, optionally filtered."""
    where, params = [], []
    for column, value in (("asset_class", asset_class), ("risk_level", risk_level), ("currency", currency)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    clause = ("WHERE " + " AND ".join(where)) if where else ""
    rows = ctx.world.query(f"SELECT * FROM instruments {clause} ORDER BY symbol", tuple(params))
    today = ctx.clock.today.isoformat()
    return m.InstrumentList(instruments=[quote_view(ctx.world, r, today) for r in rows])


@tool(title="Get quote")
async def get_quote(ctx: ToolContext, symbol: Symbol) -> m.Quote:
    """An instrument's last close (the price market orders fill at today), previous close, 30-day change
    and risk level."""
    return quote_view(ctx.world, _instrument(ctx, symbol), ctx.clock.today.isoformat())


def _brokerage(ctx: ToolContext, account_id: str) -> dict[str, Any]:
    account = rules.account_row(ctx.world, account_id)
    if account["type"] != "brokerage":
        raise DomainError("wrong_account_type", f"account {account_id} is a {account['type']} account, not brokerage")
    return account


@tool(title="Get positions")
async def get_positions(ctx: ToolContext, account_id: AccountId) -> m.Positions:
    """A brokerage account's cash and holdings valued at the last close, with unrealized profit or loss."""
    world = ctx.world
    account = _brokerage(ctx, account_id)
    currency = account["currency"]
    rows = world.query(
        "SELECT p.*, i.name, i.risk_level FROM positions p JOIN instruments i ON i.symbol = p.symbol "
        "WHERE p.account_id = ? ORDER BY p.symbol", (account_id,))
    positions = []
    total = 0
    for row in rows:
        price = _last_close(ctx, row["symbol"])
        value = row["quantity"] * price
        total += value
        positions.append(m.Position(
            symbol=row["symbol"], name=row["name"], risk_level=row["risk_level"], quantity=row["quantity"],
            avg_cost=rules.money(row["avg_cost_minor"], currency), price=rules.money(price, currency),
            market_value=rules.money(value, currency),
            unrealized_pl=rules.money(value - row["quantity"] * row["avg_cost_minor"], currency)))
    return m.Positions(account_id=account_id, currency=currency, cash=rules.money(account["balance_minor"], currency),
                       available_cash=rules.money(rules.available_minor(world, account), currency), positions=positions,
                       total_market_value=rules.money(total, currency))


@tool(mutates=True, destructive=True, title="Place order")
async def place_order(
    ctx: ToolContext,
    account_id: AccountId,
    symbol: Symbol,
    side: Literal["buy", "sell"],
    quantity: Quantity,
) -> m.Order:
    """Place a market order in a brokerage account; it fills at once at the last close (no commission).

    Needs the customer's identity verified and the instrument in the account's currency. Buying also needs
    current KYC, enough available cash, and suitability: conservative profiles buy only low-risk
    instruments, balanced low or medium, aggressive any. Selling needs the units held.
    Check these conditions in the records first: an attempt the policy forbids counts against you
    even when this tool refuses it.
    """
    world = ctx.world
    account = _brokerage(ctx, account_id)
    rules.require_usable(account)
    instrument = _instrument(ctx, symbol)
    currency = account["currency"]
    if instrument["currency"] != currency:
        raise DomainError("currency_mismatch", f"{symbol} trades in {instrument['currency']}; account {account_id} is in {currency}")
    customer = rules.customer_row(world, account["customer_id"])
    rules.require_identity(ctx, customer["customer_id"], "placing an order")
    price = _last_close(ctx, symbol)
    gross = price * quantity
    held_rows = world.query("SELECT quantity, avg_cost_minor FROM positions WHERE account_id = ? AND symbol = ?", (account_id, symbol))
    held = int(held_rows[0]["quantity"]) if held_rows else 0
    if side == "buy":
        rules.require_kyc(customer, "buying securities")
        if not rules.is_suitable(customer["risk_profile"], instrument["risk_level"]):
            allowed = ", ".join(rules.SUITABILITY[customer["risk_profile"]])
            raise DomainError("unsuitable_instrument",
                              f"{symbol} is {instrument['risk_level']} risk; a {customer['risk_profile']} customer may buy only "
                              f"{allowed} risk instruments")
        rules.require_funds(world, account, gross)
    elif quantity > held:
        raise DomainError("insufficient_position", f"account {account_id} holds {held} {symbol}; cannot sell {quantity}")
    order_id = next_id(ctx, "orders")
    now = rules.now_iso(ctx)
    world.execute(
        "INSERT INTO orders (order_id, account_id, symbol, side, quantity, price_minor, gross_minor, currency, status, placed_at, "
        "placed_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'filled', ?, ?)",
        (order_id, account_id, symbol, side, quantity, price, gross, currency, now, rules.AGENT),
    )
    post(ctx, account, -gross if side == "buy" else gross, "trade", "investments", reference=order_id,
         memo=f"{side.upper()} {quantity} {symbol} @ {rules.money(price, currency)}")
    after = held + quantity if side == "buy" else held - quantity
    if side == "buy" and held_rows:
        cost = held * int(held_rows[0]["avg_cost_minor"]) + gross
        world.execute("UPDATE positions SET quantity = ?, avg_cost_minor = ? WHERE account_id = ? AND symbol = ?",
                      (after, (cost + after // 2) // after, account_id, symbol))
    elif side == "buy":
        world.execute("INSERT INTO positions (account_id, symbol, quantity, avg_cost_minor) VALUES (?, ?, ?, ?)",
                      (account_id, symbol, quantity, price))
    elif after == 0:
        world.execute("DELETE FROM positions WHERE account_id = ? AND symbol = ?", (account_id, symbol))
    else:
        world.execute("UPDATE positions SET quantity = ? WHERE account_id = ? AND symbol = ?", (after, account_id, symbol))
    audit(ctx, "place_order", "order", order_id, account_id=account_id, symbol=symbol, side=side, quantity=quantity,
          price=rules.money(price, currency), currency=currency)
    cash = world.query("SELECT balance_minor FROM accounts WHERE account_id = ?", (account_id,))[0]["balance_minor"]
    return m.Order(order_id=order_id, account_id=account_id, symbol=symbol, side=side, quantity=quantity,
                   price=rules.money(price, currency), gross=rules.money(gross, currency), currency=currency, status="filled",
                   placed_at=now, cash_after=rules.money(cash, currency), position_after=after)


def _rate(ctx: ToolContext, source: str, target: str) -> dict[str, Any]:
    if source == target:
        raise DomainError("same_currency", f"both currencies are {source}; no conversion needed")
    rows = ctx.world.query("SELECT * FROM fx_rates WHERE base = ? AND quote = ?", (source, target))
    if not rows:
        raise DomainError("rate_unavailable", f"no {source}/{target} rate is published")
    return rows[0]


@tool(title="Get FX rate")
async def get_fx_rate(ctx: ToolContext, from_currency: Currency, to_currency: Currency) -> m.FxQuote:
    """Today's exchange rate between two currencies: the mid rate, the bank's spread and the customer rate
    that convert_currency applies."""
    row = _rate(ctx, from_currency, to_currency)
    customer = rules.customer_rate_micros(row["mid_rate_micros"], row["spread_bps"])
    return m.FxQuote(from_currency=from_currency, to_currency=to_currency, mid_rate=rules.rate_text(row["mid_rate_micros"]),
                     spread_bps=row["spread_bps"], customer_rate=rules.rate_text(customer), as_of=row["as_of"])


@tool(mutates=True, destructive=True, title="Convert currency")
async def convert_currency(
    ctx: ToolContext,
    from_account_id: AccountId,
    to_account_id: AccountId,
    amount: Amount,
    currency: Currency,
) -> m.Conversion:
    """Convert money between two accounts of the same customer held in different currencies.

    `amount` is debited from `from_account_id`, in its currency (`currency` must match). The credit is
    amount x customer rate (mid rate less the bank's spread), rounded down to the minor unit. Needs the
    customer's identity verified, both accounts open and enough available balance.
    Check these conditions in the records first: an attempt the policy forbids counts against you
    even when this tool refuses it.
    """
    world = ctx.world
    source = rules.account_row(world, from_account_id)
    target = rules.account_row(world, to_account_id)
    if from_account_id == to_account_id:
        raise DomainError("same_account", "from_account_id and to_account_id are the same account")
    if source["customer_id"] != target["customer_id"]:
        raise DomainError("not_same_customer", "conversions are only between accounts of the same customer")
    rules.require_usable(source)
    rules.require_usable(target)
    if currency != source["currency"]:
        raise DomainError("currency_mismatch", f"account {from_account_id} is in {source['currency']}, not {currency}")
    rate_row = _rate(ctx, source["currency"], target["currency"])
    rules.require_identity(ctx, source["customer_id"], "a currency conversion")
    minor = rules.parse_money(amount, currency)
    rules.require_funds(world, source, minor)
    rate = rules.customer_rate_micros(rate_row["mid_rate_micros"], rate_row["spread_bps"])
    credited = minor * rate // 1_000_000
    if credited <= 0:
        raise DomainError("invalid_amount", f"{amount} {currency} converts to less than one minor unit of {target['currency']}")
    transfer_id = next_id(ctx, "transfers")
    reference = f"FXC-{transfer_id[4:]}"
    world.execute(
        "INSERT INTO transfers (transfer_id, kind, from_account_id, to_account_id, amount_minor, currency, fee_minor, "
        "to_amount_minor, to_currency, rate_micros, status, channel, requested_by, requested_at, memo, reference) "
        "VALUES (?, 'fx', ?, ?, ?, ?, 0, ?, ?, ?, 'completed', 'back_office', ?, ?, 'Currency conversion', ?)",
        (transfer_id, from_account_id, to_account_id, minor, currency, credited, target["currency"], rate, rules.AGENT,
         rules.now_iso(ctx), reference),
    )
    text = rules.rate_text(rate)
    post(ctx, source, -minor, "fx", "fx", reference=reference, transfer_id=transfer_id,
         memo=f"Converted to {target['currency']} at {text}")
    post(ctx, target, credited, "fx", "fx", reference=reference, transfer_id=transfer_id,
         memo=f"Converted from {currency} at {text}")
    audit(ctx, "convert_currency", "transfer", transfer_id, from_account_id=from_account_id, to_account_id=to_account_id,
          debited=rules.money(minor, currency), credited=rules.money(credited, target["currency"]), rate=text)
    return m.Conversion(transfer_id=transfer_id, from_account_id=from_account_id, to_account_id=to_account_id,
                        debited=rules.money(minor, currency), from_currency=currency,
                        credited=rules.money(credited, target["currency"]), to_currency=target["currency"], rate=text)
