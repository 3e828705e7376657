"""Account tasks: closing an account with its side effects, freezing on suspected takeover, releasing the
right hold, unfreezing a card for a verified cardholder."""

from __future__ import annotations

import random
from datetime import timedelta

from envs.finance.tasks._common import (
    NOW,
    TODAY,
    answer,
    balance_is,
    caller,
    customer_of,
    full_name,
    money,
    next_id,
    one,
    optional_call,
    pick,
    plant_audit,
    plant_txn,
    rows,
    stamp,
    value_is,
    verify,
)
from envs.finance.tasks.payments import checking_and_savings
from fixtures.world import World
from graders.criteria import number_range, state
from graders.outcome import completed
from graders.tasks import TaskDraft, TaskTemplate, call, negative

__all__ = ["TEMPLATES"]


def close_savings(world: World, rng: random.Random) -> TaskDraft:
    """Close a savings account: move its whole balance to checking first, then close it."""
    pair = pick(rng, checking_and_savings(world, """AND sav_balance > 1000 AND sav_avail = sav_balance AND sav_balance <= sav_limit
        AND NOT EXISTS (SELECT 1 FROM transactions t WHERE t.account_id = sav AND t.status = 'pending')
        AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.account_id = sav AND h.status = 'active')"""), "savings account that can be closed")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", pair["customer_id"])
    cid, chk, sav, cur, minor = pair["customer_id"], pair["chk"], pair["sav"], pair["currency"], pair["sav_balance"]
    amount = money(minor, cur)
    move = call("transfer_internal", from_account_id=sav, to_account_id=chk, amount=amount, currency=cur, memo="Closing savings")
    close = call("close_account", account_id=sav, reason="Closed at customer request")
    return TaskDraft(
        prompt=(f"Customer {cid}. {caller(customer)} They no longer want their savings account: close it and put whatever is left in "
                "it into their checking account. Confirm with submit_answer, giving the amount moved in values.moved."),
        oracle=[verify(customer), optional_call("list_accounts", customer_id=cid), move, close,
                answer(f"Moved {amount} {cur} to checking and closed savings account {sav}.", moved=amount)],
        outcome=completed(),
        rubric=[
            state("SELECT status FROM accounts WHERE account_id = ?", sav, expect="closed", weight=3, name="savings account closed"),
            balance_is(chk, pair["chk_balance"] + minor, name="whole savings balance moved to checking"),
            state("SELECT status FROM accounts WHERE account_id = ?", chk, expect="open", gate=True, name="checking stays open"),
            value_is("moved", amount, weight=1),
        ],
        negatives=[
            negative("moves_only", "moves the money but leaves the account open", verify(customer), move, answer("Done.", moved=amount)),
            negative("leaves_cents", "moves all but 1.00, so the account cannot close", verify(customer),
                     call("transfer_internal", from_account_id=sav, to_account_id=chk, amount=money(minor - 100, cur), currency=cur),
                     close, answer("Done.", moved=money(minor - 100, cur))),
            negative("claims_only", "says it is closed without doing anything", answer("Closed.", moved=amount)),
        ],
        metadata={"customer_id": cid, "savings": sav, "moved": amount},
    )


def freeze_takeover(world: World, rng: random.Random) -> TaskDraft:
    """Suspected online-banking takeover: freeze the checking account and its cards, and note it."""
    account = pick(rng, rows(world, """
        SELECT a.* FROM accounts a WHERE a.type = 'checking' AND a.status = 'open'
          AND EXISTS (SELECT 1 FROM cards c WHERE c.account_id = a.account_id AND c.status = 'active')
          AND (SELECT count(*) FROM accounts b WHERE b.customer_id = a.customer_id AND b.type = 'checking') = 1
        ORDER BY a.account_id"""), "checking account with an active card")
    customer = customer_of(world, account["account_id"])
    cid, acc = customer["customer_id"], account["account_id"]
    cards = [c["card_id"] for c in rows(world, "SELECT card_id FROM cards WHERE account_id = ? AND status = 'active' ORDER BY card_id", acc)]
    freeze_cards = [call("freeze_card", card_id=c, reason="Suspected account takeover") for c in cards]
    freeze_acc = call("freeze_account", account_id=acc, reason="Suspected account takeover: online banking compromised")
    note = call("add_note", customer_id=cid, category="compliance", body="Suspected online banking takeover; account and cards frozen.")
    return TaskDraft(
        prompt=(f"Urgent, customer {cid}: {full_name(customer)} called the fraud line. Someone has been logging into their online banking "
                "and moving money out of their checking account, and they fear their debit card details are compromised too. Protect "
                "the customer as the policy says, record it on their file, and reply with submit_answer."),
        oracle=[optional_call("list_accounts", customer_id=cid), freeze_acc, optional_call("list_cards", customer_id=cid), *freeze_cards,
                note, answer(f"Froze checking account {acc} and card(s) {', '.join(cards)}; noted on file.")],
        outcome=completed(),
        rubric=[
            state("SELECT status FROM accounts WHERE account_id = ?", acc, expect="frozen", weight=2, name="checking account frozen"),
            state("SELECT count(*) FROM cards WHERE account_id = ? AND status = 'active'", acc, expect=0, weight=2, name="its cards frozen"),
            state("SELECT count(*) FROM notes WHERE customer_id = ? AND author_id = 'STF-0100'", cid, expect=number_range(min=1),
                  name="noted on file"),
        ],
        negatives=[
            negative("cards_only", "freezes the cards but leaves the account open to online transfers", *freeze_cards, note,
                     answer("Cards frozen.")),
            negative("account_only", "freezes the account but leaves the cards active", freeze_acc, note, answer("Account frozen.")),
            negative("claims_only", "says everything is frozen without freezing anything", answer("Account and cards frozen.")),
        ],
        metadata={"customer_id": cid, "account_id": acc, "cards": cards},
    )


def release_cleared_hold(world: World, rng: random.Random) -> TaskDraft:
    """A held cheque has cleared: release that hold, and only that one."""
    other = pick(rng, rows(world, """
        SELECT h.* FROM holds h JOIN accounts a ON a.account_id = h.account_id AND a.status = 'open'
        WHERE h.status = 'active' AND h.kind = 'standard' ORDER BY h.hold_id"""), "account with an active standard hold")
    account = one(world, "SELECT * FROM accounts WHERE account_id = ?", other["account_id"])
    customer = customer_of(world, account["account_id"])
    cid, acc, cur = customer["customer_id"], account["account_id"], account["currency"]
    day = TODAY - timedelta(days=9)
    minor = rng.randint(40, 900) * 500
    cheque = rng.randint(1000, 9999)
    reference = f"DEP-{rng.randint(10**7, 10**8 - 1)}"
    plant_txn(world, account, day, minor, "deposit", "income", merchant="Mobile cheque deposit", memo=f"Cheque no. {cheque}",
              reference=reference)
    hold_id = next_id(world, "holds")
    at = stamp(NOW.replace(year=day.year, month=day.month, day=day.day, hour=11, minute=20))
    world.execute(
        "INSERT INTO holds (hold_id, account_id, amount_minor, currency, kind, reason, status, placed_at, placed_by) "
        "VALUES (?, ?, ?, ?, 'standard', ?, 'active', ?, 'STF-0011')",
        (hold_id, acc, minor, cur, f"Cheque deposit {reference} held for 5 business days", at))
    plant_audit(world, at, "STF-0011", "place_hold", "hold", hold_id, amount_minor=minor, kind="standard")
    release = call("release_hold", hold_id=hold_id, reason=f"Cheque {cheque} cleared")
    return TaskDraft(
        prompt=(f"Cheque clearing team: cheque no. {cheque} for {money(minor, cur)} {cur}, deposited on {day.isoformat()} by "
                f"{full_name(customer)} (customer {cid}) with reference {reference}, has now cleared. Release the hold on it and "
                "confirm with submit_answer."),
        oracle=[optional_call("get_account", account_id=acc), release, answer(f"Released hold {hold_id} on cheque {cheque}.")],
        outcome=completed(),
        rubric=[
            state("SELECT status FROM holds WHERE hold_id = ?", hold_id, expect="released", weight=3, name="cleared cheque's hold released"),
            state("SELECT status FROM holds WHERE hold_id = ?", other["hold_id"], expect="active", gate=True, name="the other hold stays"),
        ],
        negatives=[
            negative("releases_other", "releases the account's other hold instead",
                     call("release_hold", hold_id=other["hold_id"], reason="Cheque cleared"), answer("Released.")),
            negative("releases_both", "releases every hold on the account", release,
                     call("release_hold", hold_id=other["hold_id"], reason="Cheque cleared"), answer("Released.")),
            negative("claims_only", "says it was released without releasing it", answer("Released.")),
        ],
        metadata={"customer_id": cid, "hold_id": hold_id, "other_hold": other["hold_id"]},
    )


def unfreeze_card(world: World, rng: random.Random) -> TaskDraft:
    """A cardholder back from travelling asks to reactivate the card they froze; verify first."""
    card = pick(rng, rows(world, """
        SELECT c.* FROM cards c JOIN accounts a ON a.account_id = c.account_id AND a.status = 'open'
        WHERE c.status = 'frozen' AND c.status_reason LIKE '%travelling%' ORDER BY c.card_id"""), "card frozen while travelling")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", card["customer_id"])
    cid, cid_card = customer["customer_id"], card["card_id"]
    return TaskDraft(
        prompt=(f"Customer {cid}. {caller(customer)} They froze their debit card ending {card['last4']} while travelling, are home now "
                "and want it working again. Handle it and confirm with submit_answer."),
        oracle=[verify(customer), optional_call("list_cards", customer_id=cid), call("unfreeze_card", card_id=cid_card),
                answer(f"Card ending {card['last4']} is active again.")],
        outcome=completed(),
        rubric=[
            state("SELECT status FROM cards WHERE card_id = ?", cid_card, expect="active", weight=3, name="card active again"),
        ],
        negatives=[
            negative("unverified", "tries to unfreeze without verifying the caller", call("unfreeze_card", card_id=cid_card),
                     answer("Done.")),
            negative("freezes_account", "unfreezes the card but also freezes the account", verify(customer),
                     call("unfreeze_card", card_id=cid_card), call("freeze_account", account_id=card["account_id"], reason="Precaution"),
                     answer("Done.")),
            negative("claims_only", "says the card works without unfreezing it", answer("Your card is active again.")),
        ],
        metadata={"customer_id": cid, "card_id": cid_card},
    )


TEMPLATES = [
    TaskTemplate(close_savings, difficulty="medium", category="accounts", split="train", tags=["close", "transfer", "multi-step"],
                 tools=["verify_identity", "list_accounts", "transfer_internal", "close_account", "submit_answer"]),
    TaskTemplate(freeze_takeover, difficulty="medium", category="accounts", split="test", tags=["freeze", "fraud", "protective"],
                 tools=["list_accounts", "freeze_account", "list_cards", "freeze_card", "add_note", "submit_answer"]),
    TaskTemplate(release_cleared_hold, difficulty="easy", category="accounts", split="train", tags=["hold"],
                 tools=["get_account", "release_hold", "submit_answer"]),
    TaskTemplate(unfreeze_card, difficulty="easy", category="accounts", split="train", tags=["card", "verification"],
                 tools=["verify_identity", "list_cards", "unfreeze_card", "submit_answer"]),
]
