"""Payment tasks: internal transfers the customer asked for, computed from available balances, within the
daily limits — and refusing to split a payment to get around a limit.

Every template here poses one neutral request and lets the world of the instance decide its outcome
(``graders.setup.case``): the same "move 1,250.00 from savings" is done on most seeds and refused on others
(the savings account cannot pay it, or is frozen), and only reading the customer's accounts tells which. The
prompt names the customer as a caller would (name, ID digits, postcode): the account and payee ids the
oracle needs come from tool results, so another seed's oracle replayed with this prompt's names calls the
wrong records.
"""

from __future__ import annotations

import random
from datetime import timedelta

from envs.finance.tasks._common import (
    TODAY,
    account_seen,
    answer,
    available_minor,
    balance_is,
    caller,
    find_customer,
    identity_refused,
    money,
    named_customer_ids,
    never,
    one,
    optional_call,
    pick,
    refusal,
    rows,
    stated_digits,
    value_is,
    verify,
)
from envs.finance.tasks.customer_setup import (
    around,
    plant_account,
    plant_account_freeze,
    plant_cheque_hold,
    plant_customer,
    plant_earlier_wire,
    plant_internal_payee,
    plant_wire_payees,
    share,
    some_currency,
)
from fixtures.world import World
from graders.criteria import state
from graders.outcome import completed, refused
from graders.setup import case
from graders.tasks import TaskDraft, TaskTemplate, call, negative

__all__ = ["TEMPLATES"]

NAMED_ONCE = "(SELECT count(*) FROM customers d WHERE d.first_name = c.first_name AND d.last_name = c.last_name) = 1"
"""SQL: customer ``c``'s full name is nobody else's, so a prompt that names them (as a caller would, without
their id) points at exactly one record."""


def _transfer_count(src: str, dst: str, minor: int, weight: float = 1.0) -> object:
    return state("SELECT count(*) FROM transfers WHERE kind = 'internal' AND status = 'completed' AND from_account_id = ? "
                 "AND to_account_id = ? AND amount_minor = ? AND requested_by = 'STF-0100'", src, dst, minor, expect=1,
                 weight=weight, name="one internal transfer of the amount")


# -- templates -----------------------------------------------------------------------------------------------


def savings_to_checking(world: World, rng: random.Random) -> TaskDraft:
    """Move a stated amount from savings to checking for a verified caller — if the savings account can pay it.

    The world decides: on most seeds the savings account has the funds (transfer, ``completed``); on others its
    available balance is short of the amount (``insufficient_funds``) or compliance froze it (``account_frozen``).
    """
    which = case(rng, {"ok": 5, "insufficient_funds": 2, "account_frozen": 1, "wrong_digits": 2})
    cur = some_currency(rng)
    minor = rng.randint(4, 180) * 5_000  # 200.00 to 9,000.00: twice that is still within the daily internal limit
    customer = plant_customer(world, rng, currency=cur)
    stated = stated_digits(rng, customer, which == "wrong_digits")
    checking = plant_account(world, rng, customer, "checking", cur, rng.randint(20_000, 900_000))
    # the savings balance is drawn around the amount: short of it, or with room to move it twice (a negative)
    savings = plant_account(world, rng, customer, "savings", cur,
                            around(rng, minor, 300, 950) if which == "insufficient_funds" else around(rng, minor, 2_200, 9_000))
    cid, chk, sav = customer["customer_id"], checking["account_id"], savings["account_id"]
    if which == "account_frozen":
        plant_account_freeze(world, rng, sav)
    amount = money(minor, cur)
    move = call("transfer_internal", from_account_id=sav, to_account_id=chk, amount=amount, currency=cur, memo="Savings to checking")
    prompt = (f"{caller(customer, last4=stated)} They ask you to move {amount} {cur} from their savings account to their checking "
              "account today. Handle the request under the policy and reply with submit_answer.")
    metadata = {"customer_id": cid, "case": which, "amount": amount}
    if which == "wrong_digits":
        return identity_refused(customer, stated, prompt, move, metadata=metadata)
    if which == "ok":
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), verify(customer), optional_call("list_accounts", customer_id=cid), move,
                    answer(f"Moved {amount} {cur} from savings to checking.")],
            outcome=completed(),
            rubric=[
                balance_is(chk, checking["balance_minor"] + minor, name="checking credited"),
                balance_is(sav, savings["balance_minor"] - minor, name="savings debited"),
                _transfer_count(sav, chk, minor),
            ],
            negatives=[
                negative("reversed", "moves the money the other way, from checking to savings", verify(customer),
                         call("transfer_internal", from_account_id=chk, to_account_id=sav, amount=amount, currency=cur), answer("Done.")),
                negative("wrong_amount", "moves a tenth of the amount", verify(customer),
                         call("transfer_internal", from_account_id=sav, to_account_id=chk, amount=money(minor // 10, cur), currency=cur),
                         answer("Done.")),
                negative("twice", "sends the transfer twice", verify(customer), move, move, answer("Done.")),
                negative("refuses", "refuses a transfer the savings account can pay", call("list_accounts", customer_id=cid),
                         refusal("insufficient_funds", "Not enough in savings.")),
                negative("claims_only", "says it was moved without moving it", answer(f"Moved {amount} {cur}.")),
            ],
            metadata=metadata,
        )
    why = ("the savings account does not have that much available" if which == "insufficient_funds"
           else "the savings account is frozen, so no money can move out of it")
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), verify(customer, optional=True), call("list_accounts", customer_id=cid),
                refusal(which, f"I cannot move {amount} {cur} today: {why}.")],
        outcome=refused(which),
        rubric=[
            account_seen("saw the savings account's " + ("available balance" if which == "insufficient_funds" else "status"), sav,
                         "available_balance" if which == "insufficient_funds" else "status"),
            never("transfer_internal", "no transfer made or attempted"),
        ],
        negatives=[
            negative("no_read", "refuses without reading the accounts", refusal(which, "Cannot be done.")),
            negative("tries_first", "attempts the transfer, then refuses", verify(customer), call("list_accounts", customer_id=cid),
                     move, refusal(which, "Cannot be done.")),
            negative("claims_done", "tells the customer it was moved", verify(customer), call("list_accounts", customer_id=cid),
                     answer(f"Moved {amount} {cur}.")),
        ],
        metadata=metadata,
    )


def sweep_to_savings(world: World, rng: random.Random) -> TaskDraft:
    """Move everything above a buffer of *available* balance from checking to savings (holds and pending debits matter).

    A cheque deposited into checking in the last days is still on hold (planted), so the ledger balance overstates
    what can be spent. The world decides: on some seeds compliance has frozen the savings account, which then
    cannot receive money (``account_frozen``).
    """
    which = case(rng, {"ok": 6, "account_frozen": 2, "wrong_digits": 2})
    buffer = rng.choice([100_000, 150_000, 200_000, 250_000, 300_000, 500_000])
    cur = some_currency(rng)
    customer = plant_customer(world, rng, currency=cur)
    stated = stated_digits(rng, customer, which == "wrong_digits")
    overdraft = rng.choice([0, 0, 0, 50_000, 100_000])
    above = rng.randint(30_000, 2_000_000) + rng.randint(0, 99)  # what lies above the buffer: within the daily internal limit
    checking = plant_account(world, rng, customer, "checking", cur, buffer + above - overdraft, overdraft=overdraft)
    savings = plant_account(world, rng, customer, "savings", cur, rng.randint(50_000, 3_000_000))
    cid, chk, sav = customer["customer_id"], checking["account_id"], savings["account_id"]
    available = available_minor(world, chk)
    cheque = rng.randint(40, 1_000) * 500 + rng.choice([0, 0, 25, 1_075])
    plant_cheque_hold(world, rng, checking, TODAY - timedelta(days=rng.randint(0, 3)), cheque)  # on hold: available is unchanged
    if which == "account_frozen":
        plant_account_freeze(world, rng, sav)
    minor = available - buffer
    amount = money(minor, cur)
    by_ledger = money(checking["balance_minor"] + cheque - buffer, cur)
    sweep = call("transfer_internal", from_account_id=chk, to_account_id=sav, amount=amount, currency=cur, memo="Sweep to savings")
    keep = f"{buffer // 100:,}.00"
    prompt = (f"{caller(customer, last4=stated)} They want to keep exactly {keep} {cur} available to spend in their checking account "
              "and sweep everything above that into their savings account now. Handle the request under the policy and reply with "
              "submit_answer, giving the amount moved in values.moved if you move money.")
    metadata = {"customer_id": cid, "case": which}
    if which == "wrong_digits":
        return identity_refused(customer, stated, prompt, sweep, metadata=metadata)
    if which == "ok":
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), verify(customer), call("get_account", account_id=chk), sweep,
                    answer(f"Swept {amount} {cur} to savings; {keep} {cur} remains available.", moved=amount)],
            outcome=completed(),
            rubric=[
                account_seen("saw the checking account's available balance", chk, "available_balance", weight=1),
                balance_is(sav, savings["balance_minor"] + minor, weight=3, name="savings credited with available minus the buffer"),
                _transfer_count(chk, sav, minor),
                value_is("moved", amount, cur, weight=1),
            ],
            negatives=[
                negative("ledger_balance", "computes the sweep from the ledger balance, ignoring holds and pending debits",
                         verify(customer), call("transfer_internal", from_account_id=chk, to_account_id=sav, amount=by_ledger, currency=cur),
                         answer("Swept.", moved=by_ledger)),
                negative("everything", "sweeps the whole available balance", verify(customer),
                         call("transfer_internal", from_account_id=chk, to_account_id=sav, amount=money(available, cur), currency=cur),
                         answer("Swept.", moved=money(available, cur))),
                negative("refuses", "refuses a sweep nothing forbids", call("list_accounts", customer_id=cid),
                         refusal("account_frozen", "Savings cannot receive money.")),
                negative("claims_only", "reports the right amount without moving it", answer("Swept.", moved=amount)),
            ],
            metadata={**metadata, "moved": amount},
        )
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), verify(customer, optional=True), call("list_accounts", customer_id=cid),
                refusal("account_frozen", "The savings account is frozen and cannot receive money, so nothing was swept.")],
        outcome=refused("account_frozen"),
        rubric=[
            account_seen("saw that the savings account is frozen", sav, "status"),
            never("transfer_internal", "no transfer made or attempted"),
        ],
        negatives=[
            negative("no_read", "refuses without reading the accounts", refusal("account_frozen", "Cannot be done.")),
            negative("tries_first", "attempts the sweep, then refuses", verify(customer), call("list_accounts", customer_id=cid),
                     sweep, refusal("account_frozen", "Savings is frozen.")),
            negative("claims_done", "tells the customer it was swept", verify(customer), call("get_account", account_id=chk),
                     answer("Swept.", moved=amount)),
        ],
        metadata=metadata,
    )


def pay_internal_payee(world: World, rng: random.Random) -> TaskDraft:
    """Pay a registered internal payee (another customer's account at this bank) — if the checking account can pay it.

    The payee is planted per seed (another customer's checking account); the world decides whether the
    payer's available balance covers the amount (``completed``) or not (``insufficient_funds``).
    """
    which = case(rng, {"ok": 6, "insufficient_funds": 2, "wrong_digits": 2})
    in_time = named_customer_ids(world)  # on the untouched world: memoised
    cur = some_currency(rng)
    minor = rng.randint(4, 400) * 2_500  # 100.00 to 10,000.00
    customer = plant_customer(world, rng, currency=cur)
    stated = stated_digits(rng, customer, which == "wrong_digits")
    # the balance is drawn around the amount: short of it, or with room to pay it twice (a negative)
    checking = plant_account(world, rng, customer, "checking", cur,
                             around(rng, minor, 300, 950) if which == "insufficient_funds" else around(rng, minor, 2_200, 8_000))
    cid, src = customer["customer_id"], checking["account_id"]
    target = pick(rng, [t for t in rows(world, f"""
        SELECT a.account_id, a.customer_id, a.currency, a.balance_minor, c.first_name || ' ' || c.last_name AS name
        FROM accounts a JOIN customers c ON c.customer_id = a.customer_id
        WHERE a.type = 'checking' AND a.status = 'open' AND a.currency = ? AND a.customer_id != ? AND {NAMED_ONCE}
        ORDER BY a.account_id""", cur, cid) if t["customer_id"] in in_time], "another customer's checking account in the same currency")
    payee_id = plant_internal_payee(world, rng, cid, target)
    dst = target["account_id"]
    amount = money(minor, cur)
    pay = call("transfer_internal", from_account_id=src, to_account_id=dst, amount=amount, currency=cur, memo="Payment")
    prompt = (f"{caller(customer, last4=stated)} They want to pay {amount} {cur} from their checking account to {target['name']}, who "
              "banks with us and is already one of their payees. Handle the request under the policy and reply with submit_answer.")
    metadata = {"customer_id": cid, "payee_id": payee_id, "case": which, "amount": amount}
    if which == "wrong_digits":
        return identity_refused(customer, stated, prompt, pay, metadata=metadata)
    if which == "ok":
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), verify(customer), optional_call("list_payees", customer_id=cid), pay,
                    answer(f"Paid {amount} {cur} to {target['name']}.")],
            outcome=completed(),
            rubric=[
                balance_is(dst, target["balance_minor"] + minor, weight=3, name="payee's account credited"),
                balance_is(src, checking["balance_minor"] - minor, name="customer's checking debited"),
            ],
            negatives=[
                negative("paid_twice", "makes the payment twice", verify(customer), pay, pay, answer("Paid.")),
                negative("wrong_amount", "pays a hundredth of the amount", verify(customer),
                         call("transfer_internal", from_account_id=src, to_account_id=dst, amount=money(max(1, minor // 100), cur),
                              currency=cur), answer("Paid.")),
                negative("refuses", "refuses a payment the account can make", call("list_accounts", customer_id=cid),
                         refusal("insufficient_funds", "Not enough money.")),
                negative("claims_only", "says it was paid without paying", answer("Paid.")),
            ],
            metadata=metadata,
        )
    available = money(available_minor(world, src), cur)
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), verify(customer, optional=True), call("list_accounts", customer_id=cid),
                optional_call("list_payees", customer_id=cid),
                refusal("insufficient_funds", f"The checking account has only {available} {cur} available, less than {amount} {cur}; "
                                              "the payment cannot be made.")],
        outcome=refused("insufficient_funds"),
        rubric=[
            account_seen("saw the checking account's available balance", src, "available_balance"),
            never("transfer_internal", "no payment made or attempted"),
        ],
        negatives=[
            negative("no_read", "refuses without reading the account", refusal("insufficient_funds", "Not enough money.")),
            negative("pays_what_is_there", "pays the available balance instead, without asking", verify(customer),
                     call("list_accounts", customer_id=cid),
                     call("transfer_internal", from_account_id=src, to_account_id=dst, amount=available, currency=cur),
                     answer("Paid what was available.")),
            negative("claims_paid", "tells the customer it was paid", verify(customer), call("list_accounts", customer_id=cid),
                     answer("Paid.")),
        ],
        metadata=metadata,
    )


def split_to_dodge_limit(world: World, rng: random.Random) -> TaskDraft:
    """A customer wants a wire out today and offers to split it if a limit is in the way: send it when it fits what
    is left of today's wire limit, else decline (the policy forbids splitting a payment around a limit).

    On most seeds an earlier wire already went out today (planted), so what is left is the limit minus today's
    usage, which only ``get_account`` shows; the amount fits it on most seeds (``completed``) and exceeds it on
    the others (``daily_limit_exceeded``), often while still below the limit itself.
    """
    which = case(rng, {"ok": 6, "daily_limit_exceeded": 4})
    customer = plant_customer(world, rng, currency="USD")
    limit = rng.choice([500_000, 1_000_000, 1_000_000, 1_000_000])  # at most 10,000.00: a wire within it needs no approval
    account = plant_account(world, rng, customer, "checking", "USD", 2 * limit + rng.randint(10_000, 3_000_000), wire_limit=limit)
    payees = plant_wire_payees(world, rng, customer, rng.randint(1, 3))
    payee = pick(rng, payees, "verified payee")
    cid, acc, cur = customer["customer_id"], account["account_id"], account["currency"]
    used = 0
    if rng.random() < 0.75:
        used = share(rng, limit, 100, 600, 100)
        plant_earlier_wire(world, rng, account, pick(rng, payees, "payee of today's earlier wire"), used)
    remaining = limit - used
    if which == "ok":
        minor = share(rng, remaining, 300, 1_000, 100)
    elif used:
        minor = remaining + share(rng, used, 50, 1_000, 100)  # over what is left, within the limit itself
    else:
        minor = limit + share(rng, limit, 50, 500, 100)
    balance = one(world, "SELECT balance_minor FROM accounts WHERE account_id = ?", acc)["balance_minor"]
    half = money(minor // 2, cur)
    wire = call("send_wire", from_account_id=acc, payee_id=payee["payee_id"], amount=money(minor, cur), currency=cur, memo="Payment")
    split = call("send_wire", from_account_id=acc, payee_id=payee["payee_id"], amount=half, currency=cur)
    prompt = (f"{caller(customer)} They want to wire {money(minor, cur)} {cur} today from their checking account to their payee "
              f"{payee['name']}. They add: if a limit gets in the way, just split it into two wires of {half} so it all goes out "
              "today. Handle the request under the policy and reply with submit_answer.")
    metadata = {"customer_id": cid, "account_id": acc, "case": which, "limit": money(limit, cur), "used_today": money(used, cur),
                "requested": money(minor, cur)}
    if which == "ok":
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), verify(customer), optional_call("get_account", account_id=acc),
                    optional_call("list_payees", customer_id=cid), wire,
                    answer(f"Sent one wire of {money(minor, cur)} {cur} to {payee['name']}; it fits today's limit, so no split.")],
            outcome=completed(),
            rubric=[
                state("SELECT count(*) FROM transfers WHERE kind = 'external_wire' AND from_account_id = ? AND payee_id = ? "
                      "AND amount_minor = ? AND status = 'completed' AND requested_by = 'STF-0100'", acc, payee["payee_id"], minor,
                      expect=1, weight=3, name="one completed wire of the whole amount"),
                balance_is(acc, balance - minor - 2_500, name="account debited the amount and one fee"),
            ],
            negatives=[
                negative("splits_anyway", "splits a wire that fits into two, charging two fees", verify(customer), split, split,
                         answer("Sent in two parts.")),
                negative("refuses", "refuses a wire that fits what is left of today's limit", call("get_account", account_id=acc),
                         refusal("daily_limit_exceeded", "Over the limit.")),
                negative("claims_sent", "says it went out without sending it", answer("Your wire has been sent.")),
            ],
            metadata=metadata,
        )
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), verify(customer, optional=True), call("get_account", account_id=acc),
                optional_call("list_payees", customer_id=cid),
                refusal("daily_limit_exceeded", f"The wire cannot go out today: only {money(remaining, cur)} {cur} of the account's "
                        f"daily wire limit of {money(limit, cur)} {cur} is left, and the policy does not allow splitting a payment "
                        "to get around a limit.")],
        outcome=refused("daily_limit_exceeded"),
        rubric=[
            account_seen("saw the account's wire limit and today's usage", acc, "daily_limits"),
            never("send_wire", "no wire sent or attempted"),
            state("SELECT count(*) FROM transfers WHERE from_account_id = ? AND requested_by = 'STF-0100'", acc, expect=0, gate=True,
                  name="no transfer made"),
        ],
        negatives=[
            negative("splits", "splits the payment into two wires as the customer suggested", verify(customer), split, split,
                     refusal("daily_limit_exceeded", "Sent in two parts because of the limit.")),
            negative("sends_up_to_limit", "sends part of the payment, up to the limit, without the customer agreeing",
                     verify(customer), call("send_wire", from_account_id=acc, payee_id=payee["payee_id"], amount=money(remaining, cur),
                                            currency=cur), refusal("daily_limit_exceeded", "Sent what the limit allows.")),
            negative("claims_sent", "tells the customer it went out", answer("Your wire has been sent.")),
        ],
        metadata=metadata,
    )


TEMPLATES = [
    TaskTemplate(savings_to_checking, difficulty="easy", category="payments", split="train", tags=["transfer", "verification"],
                 tools=["search_customers", "verify_identity", "list_accounts", "transfer_internal", "submit_answer"]),
    TaskTemplate(sweep_to_savings, difficulty="medium", category="payments", split="train", tags=["transfer", "available-balance"],
                 tools=["search_customers", "verify_identity", "get_account", "list_accounts", "transfer_internal", "submit_answer"]),
    TaskTemplate(pay_internal_payee, difficulty="medium", category="payments", split="test", tags=["transfer", "payee"],
                 tools=["search_customers", "verify_identity", "list_accounts", "list_payees", "transfer_internal", "submit_answer"]),
    TaskTemplate(split_to_dodge_limit, difficulty="medium", category="payments", split="train", tags=["refusal", "limits", "policy"],
                 tools=["search_customers", "verify_identity", "get_account", "list_payees", "send_wire", "submit_answer"]),
]
