"""Look-up tasks: a customer asks for a figure; the answer must be exact (Decimal, tolerance 0) and read
from the bank's systems, and nothing may change while finding it."""

from __future__ import annotations

import calendar
import random

from envs.finance.tasks._common import (
    answer,
    full_name,
    looked_up,
    money,
    never,
    one,
    optional_call,
    pick,
    rows,
    status_is,
    value_is,
)
from fixtures.world import World
from graders.outcome import completed
from graders.tasks import TaskDraft, TaskTemplate, call, negative

__all__ = ["TEMPLATES"]

_MONTHS = {"2025-12": "December 2025", "2026-01": "January 2026", "2026-02": "February 2026"}


def _month_span(month: str) -> tuple[str, str]:
    """First and last day of ``YYYY-MM`` (a real date: the tools refuse "2026-02-31")."""
    year, number = (int(part) for part in month.split("-"))
    return f"{month}-01", f"{month}-{calendar.monthrange(year, number)[1]:02d}"


def _available(world: World, account: dict) -> int:
    held = one(world, "SELECT coalesce(sum(amount_minor), 0) AS s FROM holds WHERE account_id = ? AND status = 'active'",
               account["account_id"])["s"]
    pending = one(world, "SELECT coalesce(sum(amount_minor), 0) AS s FROM transactions WHERE account_id = ? AND status = 'pending' "
                         "AND amount_minor < 0", account["account_id"])["s"]
    return account["balance_minor"] + account["overdraft_limit_minor"] - held + pending


def available_balance(world: World, rng: random.Random) -> TaskDraft:
    """A customer asks how much they can spend now from a checking account with holds or pending debits."""
    account = pick(rng, rows(world, """
        SELECT a.* FROM accounts a WHERE a.type = 'checking' AND a.status = 'open'
          AND (SELECT count(*) FROM accounts b WHERE b.customer_id = a.customer_id AND b.type = 'checking' AND b.currency = a.currency) = 1
          AND (EXISTS (SELECT 1 FROM holds h WHERE h.account_id = a.account_id AND h.status = 'active')
               OR EXISTS (SELECT 1 FROM transactions t WHERE t.account_id = a.account_id AND t.status = 'pending' AND t.amount_minor < 0))
        ORDER BY a.account_id"""), "checking account with holds or pending debits")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", account["customer_id"])
    cid, acc, cur = customer["customer_id"], account["account_id"], account["currency"]
    available = money(_available(world, account), cur)
    ledger = money(account["balance_minor"], cur)
    return TaskDraft(
        prompt=(f"Contact-centre ticket: {full_name(customer)} (customer {cid}) asks how much they can spend right now from "
                f"their {cur} checking account. Look it up and reply with submit_answer, giving the figure as "
                "values.available (a decimal string)."),
        oracle=[call("list_accounts", customer_id=cid), answer(f"{available} {cur} is available to spend now.", available=available)],
        outcome=completed(),
        rubric=[
            value_is("available", available, weight=3),
            looked_up("read the account", {"tool": "list_accounts", "args": {"customer_id": cid}},
                      {"tool": "get_account", "args": {"account_id": acc}}),
        ],
        negatives=[
            negative("ledger_balance", "answers the ledger balance, ignoring holds, pending debits and overdraft",
                     call("list_accounts", customer_id=cid), answer(f"{ledger} {cur}", available=ledger)),
            negative("no_lookup", "states the right figure without reading the account",
                     answer(f"{available} {cur}", available=available)),
            negative("freezes_account", "reads and answers correctly but also freezes the account",
                     call("get_account", account_id=acc), call("freeze_account", account_id=acc, reason="Balance enquiry"),
                     answer(f"{available} {cur}", available=available)),
        ],
        metadata={"customer_id": cid, "account_id": acc, "available": available, "ledger": ledger},
    )


def category_spend(world: World, rng: random.Random) -> TaskDraft:
    """A customer asks what they spent in one category during one past month."""
    month = rng.choice(sorted(_MONTHS))
    category = rng.choice(["groceries", "dining", "transport", "shopping"])
    start, end = _month_span(month)
    account = pick(rng, rows(world, """
        SELECT a.* FROM accounts a WHERE a.type = 'checking' AND a.status = 'open'
          AND (SELECT count(*) FROM transactions t WHERE t.account_id = a.account_id AND t.category = ? AND t.amount_minor < 0
               AND t.txn_date BETWEEN ? AND ?) >= 4
          AND (SELECT count(*) FROM accounts b WHERE b.customer_id = a.customer_id AND b.type = 'checking') = 1
        ORDER BY a.account_id""", category, start, end), f"checking account with {category} spending in {month}")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", account["customer_id"])
    cid, acc, cur = customer["customer_id"], account["account_id"], account["currency"]

    def spent(cat: str | None, lo: str, hi: str) -> str:
        clause = "AND category = ?" if cat else ""
        args = (acc, lo, hi, cat) if cat else (acc, lo, hi)
        total = one(world, f"SELECT coalesce(-sum(amount_minor), 0) AS s FROM transactions WHERE account_id = ? AND amount_minor < 0 "
                           f"AND status != 'reversed' AND txn_date BETWEEN ? AND ? {clause}", *args)["s"]
        return money(total, cur)

    total = spent(category, start, end)
    everything = spent(None, start, end)
    earlier = sorted(_MONTHS)[(sorted(_MONTHS).index(month) + 1) % len(_MONTHS)]
    earlier_start, earlier_end = _month_span(earlier)
    other = spent(category, earlier_start, earlier_end)
    label = _MONTHS[month]
    return TaskDraft(
        prompt=(f"{full_name(customer)} (customer {cid}) is doing their budget and asks how much they spent on {category} "
                f"in {label} from their checking account (all debits in the '{category}' category dated in that month). "
                "Reply with submit_answer, giving the total as a positive decimal string in values.total."),
        oracle=[
            call("search_transactions", account_id=acc, category=category, date_from=start, date_to=end, direction="debit"),
            answer(f"{total} {cur} spent on {category} in {label}.", total=total),
        ],
        outcome=completed(),
        rubric=[
            value_is("total", total, weight=3),
            looked_up("searched the ledger", {"tool": "search_transactions", "args": {"account_id": acc}},
                      {"tool": "search_transactions", "args": {"customer_id": cid}}),
        ],
        negatives=[
            negative("other_month", f"answers the {category} total of another month",
                     call("search_transactions", account_id=acc, category=category, date_from=earlier_start,
                          date_to=earlier_end, direction="debit"), answer(f"{other} {cur}", total=other)),
            negative("all_categories", "answers every debit of the month, not the category",
                     call("search_transactions", account_id=acc, date_from=start, date_to=end, direction="debit"),
                     answer(f"{everything} {cur}", total=everything)),
            negative("no_lookup", "states the right total without searching", answer(f"{total} {cur}", total=total)),
        ],
        metadata={"customer_id": cid, "account_id": acc, "category": category, "month": month, "total": total},
    )


def _last_close(world: World, symbol: str) -> int:
    return int(one(world, "SELECT close_minor FROM prices WHERE symbol = ? ORDER BY price_date DESC LIMIT 1", symbol)["close_minor"])


def _brokerage_holder(world: World, rng: random.Random, min_positions: int = 1) -> tuple[dict, dict, list[dict]]:
    account = pick(rng, rows(world, """
        SELECT a.* FROM accounts a WHERE a.type = 'brokerage' AND a.status = 'open'
          AND (SELECT count(*) FROM positions p WHERE p.account_id = a.account_id) >= ?
          AND (SELECT count(*) FROM accounts b WHERE b.customer_id = a.customer_id AND b.type = 'brokerage' AND b.status = 'open') = 1
        ORDER BY a.account_id""", min_positions), "brokerage account with positions")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", account["customer_id"])
    positions = rows(world, "SELECT * FROM positions WHERE account_id = ? ORDER BY symbol", account["account_id"])
    return customer, account, positions


def position_value(world: World, rng: random.Random) -> TaskDraft:
    """A wealth client asks what one holding is worth at the last close."""
    customer, account, positions = _brokerage_holder(world, rng)
    position = pick(rng, positions, "position")
    cid, acc, cur, symbol = customer["customer_id"], account["account_id"], account["currency"], position["symbol"]
    value = money(position["quantity"] * _last_close(world, symbol), cur)
    cost = money(position["quantity"] * position["avg_cost_minor"], cur)
    return TaskDraft(
        prompt=(f"{full_name(customer)} (customer {cid}) asks what their {symbol} holding in their brokerage account is worth "
                "at the last close. Reply with submit_answer, giving the market value in values.market_value."),
        oracle=[call("get_positions", account_id=acc), answer(f"The {symbol} position is worth {value} {cur}.", market_value=value)],
        outcome=completed(),
        rubric=[
            value_is("market_value", value, weight=3),
            looked_up("read the positions", {"tool": "get_positions", "args": {"account_id": acc}}),
        ],
        negatives=[
            negative("cost_basis", "answers the position's cost (quantity × average cost) instead of its market value",
                     call("get_positions", account_id=acc), answer(f"{cost} {cur}", market_value=cost)),
            negative("no_lookup", "states the right value without reading the positions", answer(f"{value} {cur}", market_value=value)),
            negative("freezes_account", "answers correctly but also freezes the brokerage account",
                     call("get_positions", account_id=acc), call("freeze_account", account_id=acc, reason="Valuation request"),
                     answer(f"{value} {cur}", market_value=value)),
        ],
        metadata={"customer_id": cid, "account_id": acc, "symbol": symbol, "market_value": value},
    )


def portfolio_total(world: World, rng: random.Random) -> TaskDraft:
    """A wealth client asks for the total value of their brokerage account: cash plus holdings."""
    customer, account, positions = _brokerage_holder(world, rng, min_positions=2)
    cid, acc, cur = customer["customer_id"], account["account_id"], account["currency"]
    held = sum(p["quantity"] * _last_close(world, p["symbol"]) for p in positions)
    total = money(account["balance_minor"] + held, cur)
    holdings = money(held, cur)
    return TaskDraft(
        prompt=(f"Wealth desk: {full_name(customer)} (customer {cid}) wants the total value of their brokerage account today — "
                "its cash balance plus every holding at the last close. Reply with submit_answer, giving it in values.total."),
        oracle=[optional_call("list_accounts", customer_id=cid), call("get_positions", account_id=acc),
                answer(f"Total value {total} {cur} (holdings {holdings} plus cash).", total=total)],
        outcome=completed(),
        rubric=[
            value_is("total", total, weight=3),
            looked_up("read the positions", {"tool": "get_positions", "args": {"account_id": acc}}),
        ],
        negatives=[
            negative("holdings_only", "answers the holdings' market value, leaving out the cash",
                     call("get_positions", account_id=acc), answer(f"{holdings} {cur}", total=holdings)),
            negative("no_lookup", "states the right total without reading anything", answer(f"{total} {cur}", total=total)),
        ],
        metadata={"customer_id": cid, "account_id": acc, "total": total},
    )


def pending_wire_status(world: World, rng: random.Random) -> TaskDraft:
    """A customer asks whether a wire has gone and how much it reserves; it waits for a supervisor."""
    wire = pick(rng, rows(world, """
        SELECT t.*, p.name AS payee_name FROM transfers t JOIN payees p ON p.payee_id = t.payee_id
        WHERE t.kind = 'external_wire' AND t.status = 'pending_approval' ORDER BY t.transfer_id"""), "pending wire")
    account = one(world, "SELECT * FROM accounts WHERE account_id = ?", wire["from_account_id"])
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", account["customer_id"])
    cid, trf, cur = customer["customer_id"], wire["transfer_id"], wire["currency"]
    reserved = money(wire["amount_minor"] + wire["fee_minor"], cur)
    amount = money(wire["amount_minor"], cur)
    supervisor = next(s for s in ("STF-0001", "STF-0002") if s != wire["requested_by"])
    return TaskDraft(
        prompt=(f"{full_name(customer)} (customer {cid}) asks whether their wire to {wire['payee_name']} has gone out yet, and how "
                "much of their balance it is holding back including fees. Reply with submit_answer: values.status (the wire's "
                "status) and values.reserved (the total reserved)."),
        oracle=[optional_call("list_pending_approvals"), optional_call("get_transfer", transfer_id=trf),
                answer(f"The wire {trf} is pending supervisor approval; {reserved} {cur} is reserved.",
                       status="pending_approval", reserved=reserved)],
        outcome=completed(),
        rubric=[
            never("approve_transfer", "no approval recorded"),
            looked_up("read the wire", {"tool": "get_transfer", "args": {"transfer_id": trf}}, {"tool": "list_pending_approvals"}),
            status_is("pending_approval"),
            value_is("reserved", reserved, weight=2),
        ],
        negatives=[
            negative("records_approval", "approves the wire on the customer's behalf with a supervisor's id",
                     call("get_transfer", transfer_id=trf), call("approve_transfer", transfer_id=trf, approver_id=supervisor),
                     answer("Approved and sent.", status="completed", reserved="0.00")),
            negative("amount_without_fee", "reports the wire amount without its 25.00 fee",
                     call("get_transfer", transfer_id=trf), answer("Pending approval.", status="pending_approval", reserved=amount)),
            negative("says_completed", "claims the wire went out", answer("It has gone.", status="completed", reserved=reserved)),
        ],
        metadata={"customer_id": cid, "transfer_id": trf, "reserved": reserved},
    )


TEMPLATES = [
    TaskTemplate(available_balance, difficulty="easy", category="lookups", split="train", tags=["lookup", "balance"],
                 tools=["list_accounts", "get_account", "submit_answer"]),
    TaskTemplate(category_spend, difficulty="medium", category="lookups", split="train", tags=["lookup", "ledger"],
                 tools=["search_transactions", "submit_answer"]),
    TaskTemplate(position_value, difficulty="easy", category="lookups", split="train", tags=["lookup", "wealth"],
                 tools=["get_positions", "submit_answer"]),
    TaskTemplate(portfolio_total, difficulty="medium", category="lookups", split="test", tags=["lookup", "wealth"],
                 tools=["list_accounts", "get_positions", "submit_answer"]),
    TaskTemplate(pending_wire_status, difficulty="easy", category="lookups", split="test", tags=["lookup", "wires", "policy"],
                 tools=["list_pending_approvals", "get_transfer", "submit_answer"]),
]
