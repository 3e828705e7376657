"""Look-up tasks: a customer asks for a figure; the answer must be exact (Decimal, tolerance 0) and read
from the bank's systems, and nothing may change while finding it.

The counterfactual standard (``graders/README.md``) shapes every template here:

* the prompt names the customer as a person would (name and e-mail), never by the customer or account id
  that the deciding reads need: those come from ``search_customers`` and ``list_accounts`` results;
* the world of each seed decides the figure: holds, pending debits, cash movements and wires are planted
  with seeded amounts, dates and names, so the answer differs by seed and only reading finds it;
* the look-up gates name the record whose data the answer reports (this account, these positions, this
  customer's ledger), and the asked figure itself is a gate: a look-up whose figure is wrong did nothing.

A question about one's own money is always answered under the policy (nothing in it refuses a read), so these
templates declare ``completed`` on every seed and say why (``one_sided``); what varies is the answer.
"""

from __future__ import annotations

import calendar
import random
from datetime import datetime, time, timedelta
from typing import Any

from envs.finance.tasks._common import (
    ANALYSTS,
    AVAILABLE_SQL,
    NOW,
    TODAY,
    account_seen,
    answer,
    fact,
    find_customer,
    full_name,
    money,
    named_customer_ids,
    never,
    one,
    optional_call,
    pick,
    plant_payee,
    plant_pending_wire,
    plant_txn,
    reference,
    rows,
    seen,
    stamp,
)
from envs.finance.tasks.lookup_setup import (
    decide_wire,
    plant_card_authorisation,
    plant_card_charge,
    plant_cheque_deposit,
)
from envs.finance.tasks.wire_setup import wire_debit
from fixtures.world import World
from graders.criteria import AnswerCheck, number
from graders.outcome import completed
from graders.setup import case
from graders.tasks import TaskDraft, TaskTemplate, call, negative

__all__ = ["TEMPLATES"]

_MONTHS = {"2025-12": "December 2025", "2026-01": "January 2026", "2026-02": "February 2026"}

ONE_SIDED = ("a customer's question about their own figures is always answered: the policy refuses no read, so the "
             "declaration is 'completed' on every seed; the world decides the figure (planted per seed), which only "
             "reading the customer's records finds")

_WIRE_PAYEES = ("Harbor Title & Escrow", "Lakeside Builders LLC", "Northgate Property Management", "Cedar Ridge Academy",
                "Bluewater Yacht Sales", "Summit Legal Partners", "Greenfield Auto Group", "Meridian Tax Advisors",
                "Pinecrest Home Renovation", "Atlas Freight Forwarding", "Riverside Medical Group", "Oakmont Jewelers")
"""Names of planted wire payees (one per instance, so 'their wire to X' names one wire)."""
_WIRE_MEMOS = ("Property purchase deposit", "Tuition payment", "Invoice 2026-031", "Family support", "Boat purchase",
               "Consulting fees Q1", "Down payment", "Legal retainer")


def _figure(field: str, expected: str, currency: str, *, weight: float = 3.0) -> AnswerCheck:
    """A gate: the answer's ``values.<field>`` equals ``expected`` as a Decimal (money is exact), in ``currency`` (the
    same figure labelled with another currency is another amount).

    Why a gate: a look-up's figure is the whole task; reading the right record and reporting another number
    is no partial success.
    """
    return AnswerCheck(name=f"answer gives {field}", field=f"values.{field}", expect=number(expected, currency=currency), weight=weight,
                       gate=True)


def _status(expected: str) -> AnswerCheck:
    """A gate: the answer's ``values.status`` is exactly ``expected`` (one status, not a list of candidates)."""
    return AnswerCheck(name="answer gives the status", field="values.status", expect=expected, weight=1.0, gate=True)


def _month_span(month: str) -> tuple[str, str]:
    """First and last day of ``YYYY-MM`` (a real date: the tools refuse "2026-02-31")."""
    year, number_ = (int(part) for part in month.split("-"))
    return f"{month}-01", f"{month}-{calendar.monthrange(year, number_)[1]:02d}"


def _available(world: World, account: dict[str, Any]) -> int:
    """The account's available balance now (balance + overdraft − active holds − pending debits)."""
    return int(one(world, f"SELECT {AVAILABLE_SQL} AS v FROM accounts a WHERE a.account_id = ?", account["account_id"])["v"])


def _reread(world: World, account_id: str) -> dict[str, Any]:
    """The account's row as it is now (after planting)."""
    return one(world, "SELECT * FROM accounts WHERE account_id = ?", account_id)


def _named(world: World, candidates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The candidates whose customer a prompt can name unambiguously (see ``named_customer_ids``)."""
    named = named_customer_ids(world)
    return [c for c in candidates if c["customer_id"] in named]


def _asks(customer: dict[str, Any]) -> str:
    """How a prompt names the customer: their name and the e-mail address they wrote from."""
    return f"{full_name(customer)} (writing from {customer['email']})"


# -- available balance ------------------------------------------------------------------------------------


def available_balance(world: World, rng: random.Random) -> TaskDraft:
    """A customer asks how much they can spend now from their checking account, which has holds or pending debits."""
    account = pick(rng, _named(world, rows(world, f"""
        SELECT a.* FROM accounts a WHERE a.type = 'checking' AND a.status = 'open' AND {AVAILABLE_SQL} >= 30000
          AND (SELECT count(*) FROM accounts b WHERE b.customer_id = a.customer_id AND b.type = 'checking') = 1
        ORDER BY a.account_id""")), "open checking account of a customer with one checking account")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", account["customer_id"])
    cid, acc, cur = customer["customer_id"], account["account_id"], account["currency"]
    # setup: what stands between the ledger balance and what can be spent, drawn per seed
    room = _available(world, account)
    planted = rng.choice([("hold",), ("pending",), ("hold", "pending")])
    if "hold" in planted:
        plant_cheque_deposit(world, rng, account, rng.randint(5_000, min(400_000, room // 2)) // 100 * 100)
    if "pending" in planted:
        plant_card_authorisation(world, rng, account, rng.randint(1_500, min(60_000, room // 3)))
    account = _reread(world, acc)
    available = money(_available(world, account), cur)
    ledger = money(account["balance_minor"], cur)
    return TaskDraft(
        prompt=(f"Contact-centre ticket: {_asks(customer)} asks how much they can spend right now from their {cur} checking "
                "account. Look it up and reply with submit_answer, giving the figure as values.available (a decimal string)."),
        oracle=[find_customer(customer), call("list_accounts", customer_id=cid),
                answer(f"{available} {cur} is available to spend now.", available=available)],
        outcome=completed(),
        rubric=[
            _figure("available", available, cur),
            account_seen("saw the account's available balance", acc, "available_balance", weight=1),
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
        metadata={"customer_id": cid, "account_id": acc, "available": available, "ledger": ledger, "planted": list(planted)},
    )


# -- spending in a category -------------------------------------------------------------------------------


def category_spend(world: World, rng: random.Random) -> TaskDraft:
    """A customer asks what they spent in one category during one past month."""
    month = rng.choice(sorted(_MONTHS))
    category = rng.choice(["groceries", "dining", "transport", "shopping"])
    start, end = _month_span(month)
    account = pick(rng, _named(world, rows(world, """
        SELECT a.* FROM accounts a WHERE a.type = 'checking' AND a.status = 'open'
          AND (SELECT count(*) FROM transactions t WHERE t.account_id = a.account_id AND t.category = ? AND t.amount_minor < 0
               AND t.txn_date BETWEEN ? AND ?) >= 4
          AND (SELECT count(*) FROM accounts b WHERE b.customer_id = a.customer_id AND b.type = 'checking') = 1
        ORDER BY a.account_id""", category, start, end)), f"checking account with {category} spending in {month}")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", account["customer_id"])
    cid, acc, cur = customer["customer_id"], account["account_id"], account["currency"]
    planted = plant_card_charge(world, rng, account, category, start, end)

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
    search = call("search_transactions", account_id=acc, category=category, date_from=start, date_to=end, direction="debit")
    return TaskDraft(
        prompt=(f"{_asks(customer)} is doing their budget and asks how much they spent on {category} in {label} from their "
                f"checking account (all debits in the '{category}' category dated in that month). Reply with submit_answer, "
                "giving the total as a positive decimal string in values.total."),
        oracle=[find_customer(customer), optional_call("list_accounts", customer_id=cid), search,
                answer(f"{total} {cur} spent on {category} in {label}.", total=total)],
        outcome=completed(),
        rubric=[
            _figure("total", total, cur),
            # the month's charges were listed: this world's own charge among them (a total from memory never saw it)
            seen("saw the month's charges in the category", "transactions", planted, "amount", weight=1),
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


# -- wealth: one holding, the whole account ---------------------------------------------------------------


def _last_close(world: World, symbol: str) -> int:
    return int(one(world, "SELECT close_minor FROM prices WHERE symbol = ? ORDER BY price_date DESC LIMIT 1", symbol)["close_minor"])


def _brokerage_holder(world: World, rng: random.Random, min_positions: int = 1) -> tuple[dict, dict, list[dict]]:
    """A customer named alone by their name, with one open brokerage account holding ``min_positions`` or more."""
    account = pick(rng, _named(world, rows(world, """
        SELECT a.* FROM accounts a WHERE a.type = 'brokerage' AND a.status = 'open'
          AND (SELECT count(*) FROM positions p WHERE p.account_id = a.account_id) >= ?
          AND (SELECT count(*) FROM accounts b WHERE b.customer_id = a.customer_id AND b.type = 'brokerage') = 1
        ORDER BY a.account_id""", min_positions)), "brokerage account with positions")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", account["customer_id"])
    positions = rows(world, "SELECT * FROM positions WHERE account_id = ? ORDER BY symbol", account["account_id"])
    return customer, account, positions


def position_value(world: World, rng: random.Random) -> TaskDraft:
    """A wealth client asks what one holding is worth at the last close."""
    customer, account, positions = _brokerage_holder(world, rng)
    position = pick(rng, positions, "position")
    cid, acc, cur, symbol = customer["customer_id"], account["account_id"], account["currency"], position["symbol"]
    # setup: a seeded number of units (bought or sold down earlier), so the value differs by seed even for the same holding
    quantity = rng.randint(max(1, position["quantity"] // 2), position["quantity"] * 2 + 5)
    world.execute("UPDATE positions SET quantity = ? WHERE account_id = ? AND symbol = ?", (quantity, acc, symbol))
    position = {**position, "quantity": quantity}
    value = money(position["quantity"] * _last_close(world, symbol), cur)
    cost = money(position["quantity"] * position["avg_cost_minor"], cur)
    return TaskDraft(
        prompt=(f"{_asks(customer)} asks what their {symbol} holding in their brokerage account is worth at the last close. "
                "Reply with submit_answer, giving the market value in values.market_value."),
        oracle=[find_customer(customer), optional_call("list_accounts", customer_id=cid), call("get_positions", account_id=acc),
                answer(f"The {symbol} position is worth {value} {cur}.", market_value=value)],
        outcome=completed(),
        rubric=[
            _figure("market_value", value, cur),
            account_seen("saw the account's holdings", acc, "positions", weight=1),
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
    # setup: cash paid in from the customer's bank elsewhere a few days ago, a seeded amount, so the total differs by seed
    day = TODAY - timedelta(days=rng.randint(1, 20))
    plant_txn(world, account, day, rng.randint(20_000, 1_500_000), "deposit", "income", memo="Incoming ACH transfer",
              reference=reference(rng, "ACH"))
    account = _reread(world, acc)
    held = sum(p["quantity"] * _last_close(world, p["symbol"]) for p in positions)
    total = money(account["balance_minor"] + held, cur)
    holdings = money(held, cur)
    return TaskDraft(
        prompt=(f"Wealth desk: {_asks(customer)} wants the total value of their brokerage account today — its cash balance "
                "plus every holding at the last close. Reply with submit_answer, giving it in values.total."),
        oracle=[find_customer(customer), optional_call("list_accounts", customer_id=cid), call("get_positions", account_id=acc),
                answer(f"Total value {total} {cur} (holdings {holdings} plus cash).", total=total)],
        outcome=completed(),
        rubric=[
            _figure("total", total, cur),
            account_seen("saw the account's cash and holdings", acc, "positions", "balance", weight=1),
        ],
        negatives=[
            negative("holdings_only", "answers the holdings' market value, leaving out the cash",
                     call("get_positions", account_id=acc), answer(f"{holdings} {cur}", total=holdings)),
            negative("no_lookup", "states the right total without reading anything", answer(f"{total} {cur}", total=total)),
        ],
        metadata={"customer_id": cid, "account_id": acc, "total": total},
    )


# -- a wire's fate ----------------------------------------------------------------------------------------


def pending_wire_status(world: World, rng: random.Random) -> TaskDraft:
    """A customer asks whether a large wire has gone out and how much it still holds back; the world decides its fate."""
    status = case(rng, {"pending_approval": 5, "completed": 3, "rejected": 2})
    account = pick(rng, _named(world, rows(world, f"""
        SELECT a.* FROM accounts a JOIN customers c ON c.customer_id = a.customer_id
        WHERE a.type = 'checking' AND a.status = 'open' AND c.kyc_status = 'verified' AND {AVAILABLE_SQL} >= 1400000
        ORDER BY a.account_id""")), "checking account with room for a large wire")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", account["customer_id"])
    cid, acc, cur = customer["customer_id"], account["account_id"], account["currency"]
    # setup: a wire above the dual-approval threshold (so every status is possible), to a payee of a seeded name
    amount = rng.randint(1_100_000, min(_available(world, account) - 200_000, 4_500_000)) // 100 * 100
    name = rng.choice(_WIRE_PAYEES)
    payee_id = plant_payee(world, cid, name, currency=cur, verified=True, added_on=TODAY - timedelta(days=rng.randint(20, 400)),
                           number_=str(rng.randint(10**9, 10**10 - 1)))
    payee = {"payee_id": payee_id, "name": name}
    day = TODAY - timedelta(days=rng.randint(0, 4))
    at = stamp(datetime.combine(day, time(rng.randint(9, 12), rng.randint(0, 59)), tzinfo=NOW.tzinfo))
    trf = plant_pending_wire(world, account, payee, amount, requested_by=rng.choice(ANALYSTS), at=at, memo=rng.choice(_WIRE_MEMOS))
    if status != "pending_approval":
        decide_wire(world, rng, trf, account, status, at)
    held_back = amount + 2_500 if status == "pending_approval" else 0
    reserved = money(held_back, cur)

    return TaskDraft(
        prompt=(f"{_asks(customer)} asks whether their wire to {name} has gone out yet, and how much of their balance it is "
                "still holding back, fees included. Reply with submit_answer: values.status (the wire's status) and "
                "values.reserved (the total it still holds back)."),
        # the ledger rows of the wire carry its transfer id (and show its fate too): the oracle reads the transfer itself,
        # whose status is the answer's vocabulary
        oracle=[find_customer(customer), call("get_transfer", transfer_id=trf),
                answer(f"The wire {trf} to {name} is {status}; {reserved} {cur} is held back.", status=status, reserved=reserved)],
        outcome=completed(),
        rubric=[
            never("approve_transfer", "no approval recorded"),
            never("reject_transfer", "no rejection recorded"),
            # the wire itself, or its debit on the ledger (pending, posted or reversed as the wire's fate), shows its status
            seen("saw the wire's status", "transfers", trf, "status", also=[fact("transactions", wire_debit(world, trf), "status")]),
            _status(status),
            _figure("reserved", reserved, cur, weight=2),
        ],
        negatives=_wire_negatives(status, cid, trf, name, amount, reserved, cur),
        metadata={"customer_id": cid, "account_id": acc, "transfer_id": trf, "status": status, "reserved": reserved},
    )


def _wire_negatives(status: str, cid: str, trf: str, name: str, amount: int, reserved: str, cur: str) -> list:
    """Wrong answers to the wire question: guessing without reading, the usual status, a stale reservation, acting."""
    full = money(amount + 2_500, cur)
    read = call("search_transactions", customer_id=cid, merchant=name)
    usual = "completed" if status == "pending_approval" else "pending_approval"
    found = [
        negative("no_lookup", "states the right status and figure without reading the wire",
                 answer(f"The wire is {status}.", status=status, reserved=reserved)),
        negative("wrong_status", f"reads the wire but reports it {usual}", read, call("get_transfer", transfer_id=trf),
                 answer(f"The wire is {usual}.", status=usual, reserved=reserved)),
    ]
    if status == "pending_approval":
        found += [
            negative("records_approval", "approves the wire on the customer's behalf with a supervisor's id", read,
                     call("get_transfer", transfer_id=trf), call("approve_transfer", transfer_id=trf, approver_id="STF-0001"),
                     answer("Approved and sent.", status="completed", reserved="0.00")),
            negative("amount_without_fee", "reports the wire amount without its 25.00 fee", read, call("get_transfer", transfer_id=trf),
                     answer("Pending approval.", status=status, reserved=money(amount, cur))),
        ]
    else:
        found.append(negative("still_reserved", "reports the amount and fee as still held back after the decision", read,
                              call("get_transfer", transfer_id=trf), answer(f"The wire is {status}.", status=status, reserved=full)))
    return found


TEMPLATES = [
    TaskTemplate(available_balance, difficulty="easy", category="lookups", split="train", tags=["lookup", "balance"],
                 tools=["search_customers", "list_accounts", "get_account", "submit_answer"], one_sided=ONE_SIDED),
    TaskTemplate(category_spend, difficulty="medium", category="lookups", split="train", tags=["lookup", "ledger"],
                 tools=["search_customers", "list_accounts", "search_transactions", "submit_answer"], one_sided=ONE_SIDED),
    TaskTemplate(position_value, difficulty="easy", category="lookups", split="train", tags=["lookup", "wealth"],
                 tools=["search_customers", "list_accounts", "get_positions", "submit_answer"], one_sided=ONE_SIDED),
    TaskTemplate(portfolio_total, difficulty="medium", category="lookups", split="test", tags=["lookup", "wealth"],
                 tools=["search_customers", "list_accounts", "get_positions", "submit_answer"], one_sided=ONE_SIDED),
    TaskTemplate(pending_wire_status, difficulty="easy", category="lookups", split="test", tags=["lookup", "wires", "policy"],
                 tools=["search_customers", "search_transactions", "get_transfer", "submit_answer"], one_sided=ONE_SIDED),
]
