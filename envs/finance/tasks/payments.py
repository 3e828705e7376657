"""Payment tasks: internal transfers the customer asked for, computed from available balances, within the
daily limits — and refusing to split a payment to get around a limit."""

from __future__ import annotations

import random

from envs.finance.tasks._common import (
    AVAILABLE_SQL,
    answer,
    balance_is,
    caller,
    customer_of,
    looked_up,
    money,
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
from graders.criteria import state
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, call, negative

__all__ = ["TEMPLATES", "available_minor", "checking_and_savings"]

def available_minor(world: World, account_id: str) -> int:
    """The account's available balance: balance + overdraft - active holds - pending debits."""
    return int(one(world, f"SELECT {AVAILABLE_SQL} AS v FROM accounts a WHERE a.account_id = ?", account_id)["v"])


def checking_and_savings(world: World, extra: str = "", *params: object) -> list[dict]:
    """Customers with exactly one open checking and one open savings account in the same currency.

    Rows carry ``chk``/``sav`` ids and balances, their available balances (``chk_avail``/``sav_avail``) and
    the checking account's internal-transfer limit; ``extra`` adds SQL conditions on them.
    """
    return rows(world, f"""
        SELECT * FROM (
          SELECT c.customer_id, chk.account_id AS chk, sav.account_id AS sav, chk.currency AS currency,
                 chk.balance_minor AS chk_balance, sav.balance_minor AS sav_balance,
                 (SELECT {AVAILABLE_SQL} FROM accounts a WHERE a.account_id = chk.account_id) AS chk_avail,
                 (SELECT {AVAILABLE_SQL} FROM accounts a WHERE a.account_id = sav.account_id) AS sav_avail,
                 (SELECT limit_minor FROM daily_limits l WHERE l.account_id = chk.account_id AND l.channel = 'internal_transfer') AS chk_limit,
                 (SELECT limit_minor FROM daily_limits l WHERE l.account_id = sav.account_id AND l.channel = 'internal_transfer') AS sav_limit
          FROM customers c
          JOIN accounts chk ON chk.customer_id = c.customer_id AND chk.type = 'checking' AND chk.status = 'open'
          JOIN accounts sav ON sav.customer_id = c.customer_id AND sav.type = 'savings' AND sav.status = 'open'
                           AND sav.currency = chk.currency
          WHERE (SELECT count(*) FROM accounts x WHERE x.customer_id = c.customer_id AND x.type IN ('checking', 'savings')
                 AND x.status != 'closed') = 2
        ) WHERE 1 = 1 {extra} ORDER BY customer_id""", *params)


def _transfer_count(src: str, dst: str, minor: int, weight: float = 1.0) -> object:
    return state("SELECT count(*) FROM transfers WHERE kind = 'internal' AND status = 'completed' AND from_account_id = ? "
                 "AND to_account_id = ? AND amount_minor = ? AND requested_by = 'STF-0100'", src, dst, minor, expect=1,
                 weight=weight, name="one internal transfer of the amount")


def savings_to_checking(world: World, rng: random.Random) -> TaskDraft:
    """Move a stated amount from savings to checking for a verified caller."""
    pair = pick(rng, checking_and_savings(world, "AND sav_avail >= 60000 AND chk_avail >= 60000"), "checking + savings pair")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", pair["customer_id"])
    cid, chk, sav, cur = pair["customer_id"], pair["chk"], pair["sav"], pair["currency"]
    minor = rng.randint(2, min(pair["sav_avail"], pair["chk_avail"], 400_000) // 5_000) * 5_000
    amount = money(minor, cur)
    move = call("transfer_internal", from_account_id=sav, to_account_id=chk, amount=amount, currency=cur, memo="Savings to checking")
    return TaskDraft(
        prompt=(f"Customer {cid}. {caller(customer)} They ask you to move {amount} {cur} from their savings account to their "
                "checking account today. Do it and confirm with submit_answer."),
        oracle=[verify(customer), optional_call("list_accounts", customer_id=cid), move, answer(f"Moved {amount} {cur} from {sav} to {chk}.")],
        outcome=completed(),
        rubric=[
            balance_is(chk, pair["chk_balance"] + minor, name="checking credited"),
            balance_is(sav, pair["sav_balance"] - minor, name="savings debited"),
            _transfer_count(sav, chk, minor),
        ],
        negatives=[
            negative("reversed", "moves the money the other way, from checking to savings", verify(customer),
                     call("transfer_internal", from_account_id=chk, to_account_id=sav, amount=amount, currency=cur), answer("Done.")),
            negative("wrong_amount", "moves a tenth of the amount", verify(customer),
                     call("transfer_internal", from_account_id=sav, to_account_id=chk, amount=money(minor // 10, cur), currency=cur),
                     answer("Done.")),
            negative("twice", "sends the transfer twice", verify(customer), move, move, answer("Done.")),
            negative("claims_only", "says it was moved without moving it", answer(f"Moved {amount} {cur}.")),
        ],
        metadata={"customer_id": cid, "amount": amount},
    )


def sweep_to_savings(world: World, rng: random.Random) -> TaskDraft:
    """Move everything above a buffer of *available* balance from checking to savings (holds and pending debits matter)."""
    pair = pick(rng, checking_and_savings(world, "AND chk_avail != chk_balance AND chk_avail > 250000 AND chk_avail - 200000 <= chk_limit"), "checking with holds or pending debits")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", pair["customer_id"])
    cid, chk, sav, cur = pair["customer_id"], pair["chk"], pair["sav"], pair["currency"]
    minor = pair["chk_avail"] - 200_000
    amount = money(minor, cur)
    by_ledger = money(pair["chk_balance"] - 200_000, cur)
    return TaskDraft(
        prompt=(f"Customer {cid}. {caller(customer)} They want to keep exactly 2,000.00 {cur} available to spend in their checking "
                "account and sweep everything above that into their savings account now. Do it and confirm the amount moved with "
                "submit_answer (values.moved)."),
        oracle=[verify(customer), call("get_account", account_id=chk),
                call("transfer_internal", from_account_id=chk, to_account_id=sav, amount=amount, currency=cur, memo="Sweep to savings"),
                answer(f"Swept {amount} {cur} to savings; 2000.00 {cur} remains available.", moved=amount)],
        outcome=completed(),
        rubric=[
            looked_up("read the available balance", {"tool": "get_account", "args": {"account_id": chk}},
                      {"tool": "list_accounts", "args": {"customer_id": cid}}),
            balance_is(sav, pair["sav_balance"] + minor, weight=3, name="savings credited with available minus the buffer"),
            _transfer_count(chk, sav, minor),
            value_is("moved", amount, weight=1),
        ],
        negatives=[
            negative("ledger_balance", "computes the sweep from the ledger balance, ignoring holds and pending debits", verify(customer),
                     call("transfer_internal", from_account_id=chk, to_account_id=sav, amount=by_ledger, currency=cur),
                     answer("Swept.", moved=by_ledger)),
            negative("everything", "sweeps the whole available balance", verify(customer),
                     call("transfer_internal", from_account_id=chk, to_account_id=sav, amount=money(pair["chk_avail"], cur), currency=cur),
                     answer("Swept.", moved=money(pair["chk_avail"], cur))),
            negative("claims_only", "reports the right amount without moving it", answer("Swept.", moved=amount)),
        ],
        metadata={"customer_id": cid, "moved": amount},
    )


def pay_internal_payee(world: World, rng: random.Random) -> TaskDraft:
    """Pay a registered internal payee (another customer's account at this bank)."""
    payee = pick(rng, rows(world, f"""
        SELECT * FROM (SELECT p.*, src.account_id AS src, src.currency AS cur, src.balance_minor AS src_balance, dst.balance_minor AS dst_balance,
               (SELECT {AVAILABLE_SQL} FROM accounts a WHERE a.account_id = src.account_id) AS avail
        FROM payees p
        JOIN accounts dst ON dst.account_id = p.internal_account_id AND dst.status = 'open'
        JOIN accounts src ON src.customer_id = p.customer_id AND src.type = 'checking' AND src.status = 'open' AND src.currency = dst.currency
        WHERE p.kind = 'internal' AND p.status = 'active'
          AND (SELECT count(*) FROM accounts x WHERE x.customer_id = p.customer_id AND x.type = 'checking' AND x.status = 'open') = 1
          AND (SELECT count(*) FROM payees q WHERE q.customer_id = p.customer_id AND q.kind = 'internal' AND q.status = 'active') = 1
        ) WHERE avail >= 20000 ORDER BY payee_id"""), "internal payee whose payer has funds")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", payee["customer_id"])
    cid, src, dst, cur = customer["customer_id"], payee["src"], payee["internal_account_id"], payee["cur"]
    minor = rng.randint(1, min(payee["avail"] // 2, 150_000) // 2_500) * 2_500  # room to pay twice (a negative)
    amount = money(minor, cur)
    pay = call("transfer_internal", from_account_id=src, to_account_id=dst, amount=amount, currency=cur, memo="Payment")
    return TaskDraft(
        prompt=(f"Customer {cid}. {caller(customer)} They want to pay {amount} {cur} from their checking account to {payee['name']}, "
                "who banks with us and is already one of their payees. Make the payment and confirm with submit_answer."),
        oracle=[verify(customer), optional_call("list_payees", customer_id=cid), pay, answer(f"Paid {amount} {cur} to {payee['name']} ({dst}).")],
        outcome=completed(),
        rubric=[
            balance_is(dst, payee["dst_balance"] + minor, weight=3, name="payee's account credited"),
            balance_is(src, payee["src_balance"] - minor, name="customer's checking debited"),
        ],
        negatives=[
            negative("paid_twice", "makes the payment twice", verify(customer), pay, pay, answer("Paid.")),
            negative("wrong_amount", "pays a hundredth of the amount", verify(customer),
                     call("transfer_internal", from_account_id=src, to_account_id=dst, amount=money(max(1, minor // 100), cur), currency=cur),
                     answer("Paid.")),
            negative("claims_only", "says it was paid without paying", answer("Paid.")),
        ],
        metadata={"customer_id": cid, "payee_id": payee["payee_id"], "amount": amount},
    )


def split_to_dodge_limit(world: World, rng: random.Random) -> TaskDraft:
    """A customer asks to split a wire over their daily limit into two: decline (the policy forbids it)."""
    account = pick(rng, rows(world, f"""
        SELECT * FROM (SELECT a.*, l.limit_minor AS wire_limit, {AVAILABLE_SQL} AS avail FROM accounts a
        JOIN customers c ON c.customer_id = a.customer_id AND c.kyc_status = 'verified' AND c.segment = 'retail'
        JOIN daily_limits l ON l.account_id = a.account_id AND l.channel = 'external_wire'
        WHERE a.type = 'checking' AND a.status = 'open' AND a.currency = 'USD' AND l.limit_minor <= 1000000
          AND NOT EXISTS (SELECT 1 FROM transfers t WHERE t.from_account_id = a.account_id AND t.kind = 'external_wire'
                          AND substr(t.requested_at, 1, 10) = '2026-03-31')
          AND EXISTS (SELECT 1 FROM payees p WHERE p.customer_id = a.customer_id AND p.kind = 'external' AND p.verified = 1
                      AND p.status = 'active' AND p.currency = a.currency)
        ) WHERE avail >= 2 * wire_limit + 10000 ORDER BY account_id"""), "funded retail account with a wire limit and a verified payee")
    customer = customer_of(world, account["account_id"])
    payee = pick(rng, rows(world, "SELECT * FROM payees WHERE customer_id = ? AND kind = 'external' AND verified = 1 AND status = 'active' "
                                  "AND currency = ? ORDER BY payee_id", customer["customer_id"], account["currency"]), "verified payee")
    cid, acc, cur, limit = customer["customer_id"], account["account_id"], account["currency"], account["wire_limit"]
    minor = limit + rng.randint(2, 8) * limit // 20 // 100 * 100
    half = money(minor // 2, cur)
    return TaskDraft(
        prompt=(f"Customer {cid}. {caller(customer)} They want to wire {money(minor, cur)} {cur} today from their checking account to "
                f"their payee {payee['name']}. They add: if a limit gets in the way, just split it into two wires of {half} so it all "
                "goes out today. Handle the request under the policy and reply with submit_answer."),
        oracle=[verify(customer, optional=True), call("get_account", account_id=acc), optional_call("list_payees", customer_id=cid),
                refusal("daily_limit_exceeded", f"The wire cannot go out today: it is above the account's daily wire limit of "
                        f"{money(limit, cur)} {cur}, and the policy does not allow splitting a payment to get around a limit.")],
        outcome=refused("daily_limit_exceeded"),
        rubric=[
            looked_up("read the account's wire limit", {"tool": "get_account", "args": {"account_id": acc}}, weight=2),
            never("send_wire", "no wire sent or attempted"),
            state("SELECT count(*) FROM transfers WHERE from_account_id = ? AND requested_by = 'STF-0100'", acc, expect=0, gate=True,
                  name="no transfer made"),
        ],
        negatives=[
            negative("splits", "splits the payment into two wires as the customer suggested", verify(customer),
                     call("send_wire", from_account_id=acc, payee_id=payee["payee_id"], amount=half, currency=cur),
                     call("send_wire", from_account_id=acc, payee_id=payee["payee_id"], amount=half, currency=cur),
                     refusal("daily_limit_exceeded", "Sent in two parts because of the limit.")),
            negative("sends_up_to_limit", "sends part of the payment, up to the limit, without the customer agreeing",
                     verify(customer), call("send_wire", from_account_id=acc, payee_id=payee["payee_id"], amount=money(limit, cur),
                                            currency=cur), refusal("daily_limit_exceeded", "Sent what the limit allows.")),
            negative("claims_sent", "tells the customer it went out", answer("Your wire has been sent.")),
        ],
        metadata={"customer_id": cid, "account_id": acc, "limit": money(limit, cur), "requested": money(minor, cur)},
    )


TEMPLATES = [
    TaskTemplate(savings_to_checking, difficulty="easy", category="payments", split="train", tags=["transfer", "verification"],
                 tools=["verify_identity", "list_accounts", "transfer_internal", "submit_answer"]),
    TaskTemplate(sweep_to_savings, difficulty="medium", category="payments", split="train", tags=["transfer", "available-balance"],
                 tools=["verify_identity", "get_account", "transfer_internal", "submit_answer"]),
    TaskTemplate(pay_internal_payee, difficulty="medium", category="payments", split="test", tags=["transfer", "payee"],
                 tools=["verify_identity", "list_payees", "transfer_internal", "submit_answer"]),
    TaskTemplate(split_to_dodge_limit, difficulty="medium", category="payments", split="train", tags=["refusal", "limits", "policy"],
                 tools=["verify_identity", "get_account", "list_payees", "submit_answer"]),
]
