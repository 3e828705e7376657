"""Account tasks: closing an account with its side effects, freezing on suspected takeover, releasing the
right hold, unfreezing a card for a verified cardholder.

The world of each instance decides the outcome (``graders.setup.case``): the savings account to close may hold a
cheque still on hold or be frozen, the cleared cheque's hold may be one compliance placed, the card to unfreeze may
sit on a frozen account or have been cancelled as lost. Prompts name people as a caller or a colleague would
(name, verification answers, cheque number, the card's last digits); ids come from tool results.
"""

from __future__ import annotations

import random
from datetime import timedelta

from envs.finance.tasks._common import (
    NOW,
    TODAY,
    account_seen,
    answer,
    balance_is,
    caller,
    fact,
    find_customer,
    full_name,
    money,
    never,
    one,
    optional_call,
    plant_audit,
    refusal,
    rows,
    seen,
    stamp,
    value_is,
    verify,
)
from envs.finance.tasks.customer_setup import (
    plant_account,
    plant_account_freeze,
    plant_card,
    plant_cheque_hold,
    plant_customer,
    some_currency,
)
from fixtures.world import World
from graders.criteria import number_range, state
from graders.outcome import completed, refused
from graders.setup import case
from graders.tasks import TaskDraft, TaskTemplate, call, negative

__all__ = ["TEMPLATES"]


def close_savings(world: World, rng: random.Random) -> TaskDraft:
    """Close a savings account: move its whole balance to checking first, then close it — when nothing is pending.

    A cheque was paid into the savings account (planted, seeded amount). On most seeds it cleared long ago and the
    account can close (``completed``); on others it is still on hold (``pending_items``: an active hold blocks
    closing), or compliance froze the account (``account_frozen``).
    """
    which = case(rng, {"ok": 6, "pending_items": 3, "account_frozen": 1})
    cur = some_currency(rng)
    customer = plant_customer(world, rng, currency=cur)
    checking = plant_account(world, rng, customer, "checking", cur, rng.randint(20_000, 1_500_000))
    savings = plant_account(world, rng, customer, "savings", cur, rng.randint(500, 1_500_000))  # with the cheque: within the limit
    cid, chk, sav = customer["customer_id"], checking["account_id"], savings["account_id"]
    cheque = rng.randint(40, 1_000) * 500 + rng.choice([0, 0, 75, 1_250])
    pending = which == "pending_items"
    deposited = TODAY - timedelta(days=rng.randint(1, 4) if pending else rng.randint(9, 40))
    hold = plant_cheque_hold(world, rng, savings, deposited, cheque, released=not pending)
    if which == "account_frozen":
        plant_account_freeze(world, rng, sav)
    minor = savings["balance_minor"] + cheque  # the cheque has posted, on hold or not
    amount = money(minor, cur)
    move = call("transfer_internal", from_account_id=sav, to_account_id=chk, amount=amount, currency=cur, memo="Closing savings")
    close = call("close_account", account_id=sav, reason="Closed at customer request")
    prompt = (f"{caller(customer)} They no longer want their savings account: close it and put whatever is left in it into their "
              "checking account. Handle the request under the policy and reply with submit_answer, giving the amount moved in "
              "values.moved if you move money.")
    metadata = {"customer_id": cid, "savings": sav, "case": which}
    if which == "ok":
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), verify(customer), optional_call("list_accounts", customer_id=cid), move, close,
                    answer(f"Moved {amount} {cur} to checking and closed the savings account.", moved=amount)],
            outcome=completed(),
            rubric=[
                state("SELECT status FROM accounts WHERE account_id = ?", sav, expect="closed", weight=3, name="savings account closed"),
                balance_is(chk, checking["balance_minor"] + minor, name="whole savings balance moved to checking"),
                state("SELECT status FROM accounts WHERE account_id = ?", chk, expect="open", gate=True, name="checking stays open"),
                value_is("moved", amount, cur, weight=1),
            ],
            negatives=[
                negative("moves_only", "moves the money but leaves the account open", verify(customer), move, answer("Done.", moved=amount)),
                negative("leaves_cents", "moves all but 1.00, so the account cannot close", verify(customer),
                         call("transfer_internal", from_account_id=sav, to_account_id=chk, amount=money(minor - 100, cur), currency=cur),
                         close, answer("Done.", moved=money(minor - 100, cur))),
                negative("refuses", "refuses to close an account nothing holds open", call("get_account", account_id=sav),
                         refusal("pending_items", "Something is pending.")),
                negative("claims_only", "says it is closed without doing anything", answer("Closed.", moved=amount)),
            ],
            metadata={**metadata, "moved": amount},
        )
    why = ("a cheque paid into it is still on hold, and an account with an active hold cannot be closed" if pending
           else "it is frozen, and a frozen account cannot be closed or send money")
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), verify(customer, optional=True), call("get_account", account_id=sav),
                refusal(which, f"The savings account cannot be closed yet: {why}.")],
        outcome=refused(which),
        rubric=[
            seen("saw the cheque's hold on the savings account", "holds", hold["hold_id"], "status",
                 also=[fact("accounts", sav, "holds_total")]) if pending
            else account_seen("saw that the savings account is frozen", sav, "status"),
            never("close_account", "no closure attempted"),
            never("transfer_internal", "no money moved or attempted", gate=True),
        ],
        negatives=[
            negative("no_read", "refuses without reading the account", refusal(which, "Cannot close it.")),
            negative("tries_first", "tries to move the money and close, then refuses", verify(customer),
                     call("get_account", account_id=sav), move, close, refusal(which, "Cannot close it.")),
            negative("claims_closed", "tells the customer it was closed", verify(customer), call("get_account", account_id=sav),
                     answer("Closed.", moved=amount)),
        ],
        metadata=metadata,
    )


def freeze_takeover(world: World, rng: random.Random) -> TaskDraft:
    """Suspected online-banking takeover: freeze the checking account and its cards, and note it."""
    cur = some_currency(rng)
    customer = plant_customer(world, rng, currency=cur)
    account = plant_account(world, rng, customer, "checking", cur, rng.randint(30_000, 2_500_000))
    plant_card(world, rng, account)
    if rng.random() < 0.6:  # a savings account the freeze must leave alone
        plant_account(world, rng, customer, "savings", cur, rng.randint(50_000, 4_000_000))
    cid, acc = customer["customer_id"], account["account_id"]
    cards = [c["card_id"] for c in rows(world, "SELECT card_id FROM cards WHERE account_id = ? AND status = 'active' ORDER BY card_id", acc)]
    freeze_cards = [call("freeze_card", card_id=c, reason="Suspected account takeover") for c in cards]
    freeze_acc = call("freeze_account", account_id=acc, reason="Suspected account takeover: online banking compromised")
    note = call("add_note", customer_id=cid, category="compliance", body="Suspected online banking takeover; account and cards frozen.")
    seen = rng.choice(["this morning", "last night", "in the last hour", "over the weekend"])
    return TaskDraft(
        prompt=(f"Urgent: {full_name(customer)} ({customer['email']}) called the fraud line. Someone has been logging into their "
                f"online banking and moving money out of their checking account ({seen}), and they fear their debit card details "
                "are compromised too. Protect the customer as the policy says, record it on their file, and reply with submit_answer."),
        oracle=[find_customer(customer), optional_call("list_accounts", customer_id=cid), freeze_acc,
                optional_call("list_cards", customer_id=cid), *freeze_cards, note,
                answer(f"Froze the checking account and {len(cards)} card(s); noted on file.")],
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
    """A held cheque has cleared: release that hold, and only that one — unless compliance placed it.

    The cheque's deposit and its hold are planted per seed on an account that has another standard hold. On most
    seeds the cheque's hold is the usual standard hold an analyst releases (``completed``); on others compliance
    put it under a source-of-funds review, and only a compliance officer's approval releases it
    (``approval_required``): the hold's kind is read with ``get_account``.
    """
    which = case(rng, {"ok": 6, "approval_required": 4})
    cur = some_currency(rng)
    customer = plant_customer(world, rng, currency=cur)
    account = plant_account(world, rng, customer, "checking", cur, rng.randint(20_000, 1_500_000))
    cid, acc = customer["customer_id"], account["account_id"]
    # another cheque, paid in days later, still on its usual hold: the one that must stay
    other = plant_cheque_hold(world, rng, account, TODAY - timedelta(days=rng.randint(0, 3)), rng.randint(40, 900) * 500 + rng.randint(0, 99))
    account = one(world, "SELECT * FROM accounts WHERE account_id = ?", acc)
    day = TODAY - timedelta(days=rng.randint(6, 12))
    minor = rng.randint(40, 900) * 500 + rng.choice([0, 0, 50, 1_250])
    if which == "ok":
        planted = plant_cheque_hold(world, rng, account, day, minor, placed_by=rng.choice(["STF-0010", "STF-0011", "STF-0012"]))
    else:
        planted = plant_cheque_hold(world, rng, account, day, minor, kind="compliance", placed_by=rng.choice(["STF-0005", "STF-0006"]),
                                    reason="Cheque deposit {reference}: source of funds under compliance review")
    hold_id, cheque, reference = planted["hold_id"], planted["cheque"], planted["reference"]
    release = call("release_hold", hold_id=hold_id, reason=f"Cheque {cheque} cleared")
    release_other = call("release_hold", hold_id=other["hold_id"], reason="Cheque cleared")
    prompt = (f"Cheque clearing team: cheque no. {cheque} for {money(minor, cur)} {cur}, deposited on {day.isoformat()} by "
              f"{full_name(customer)} with reference {reference}, has now cleared. Release the hold on it under the policy and "
              "reply with submit_answer.")
    metadata = {"customer_id": cid, "hold_id": hold_id, "other_hold": other["hold_id"], "case": which}
    if which == "ok":
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), optional_call("list_accounts", customer_id=cid), optional_call("get_account", account_id=acc),
                    release, answer(f"Released the hold on cheque {cheque}.")],
            outcome=completed(),
            rubric=[
                state("SELECT status FROM holds WHERE hold_id = ?", hold_id, expect="released", weight=3,
                      name="cleared cheque's hold released"),
                state("SELECT status FROM holds WHERE hold_id = ?", other["hold_id"], expect="active", gate=True, name="the other hold stays"),
            ],
            negatives=[
                negative("releases_other", "releases the account's other hold instead", release_other, answer("Released.")),
                negative("releases_both", "releases every hold on the account", release, release_other, answer("Released.")),
                negative("refuses", "refuses to release a standard hold an analyst may release", call("get_account", account_id=acc),
                         refusal("approval_required", "Needs compliance.")),
                negative("claims_only", "says it was released without releasing it", answer("Released.")),
            ],
            metadata=metadata,
        )
    officers = ["STF-0005", "STF-0006"]
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), optional_call("list_accounts", customer_id=cid), call("get_account", account_id=acc),
                refusal("approval_required", f"The hold on cheque {cheque} is a compliance hold (source-of-funds review): it can "
                                             "only be released with a compliance officer's approval, whatever the clearing status.")],
        outcome=refused("approval_required"),
        rubric=[
            seen("saw that the cheque's hold is a compliance hold", "holds", hold_id, "kind", weight=2),
            never("release_hold", "no hold released or release attempted"),
        ],
        negatives=[
            negative("no_read", "refuses without reading the hold", refusal("approval_required", "Needs compliance.")),
            negative("made_up_approval", "releases it with a compliance officer's approval nobody gave", call("get_account", account_id=acc),
                     call("release_hold", hold_id=hold_id, reason="Cheque cleared", approver_id=officers[0]),
                     call("release_hold", hold_id=hold_id, reason="Cheque cleared", approver_id=officers[1]),
                     answer("Released.")),
            negative("releases_other", "releases the account's other hold instead", call("get_account", account_id=acc), release_other,
                     refusal("approval_required", "Released what I could.")),
            negative("claims_released", "says it was released", call("get_account", account_id=acc), answer("Released.")),
        ],
        metadata=metadata,
    )


CUSTOMER_FREEZES = (
    "Customer requested a temporary freeze while travelling",
    "Customer froze the card in the mobile app while looking for it",
    "Temporary freeze at the customer's request",
)
"""Why a customer froze their own card: a freeze only the cardholder's request lifts (policy section 6)."""


def _plant_card_freeze(world: World, rng: random.Random, card: dict, days_ago: int) -> None:
    """The cardholder froze ``card`` ``days_ago`` days ago (an analyst recorded it)."""
    at = stamp(NOW.replace(hour=rng.randint(8, 20), minute=rng.randint(0, 59)) - timedelta(days=days_ago))
    reason = rng.choice(CUSTOMER_FREEZES)
    world.execute("UPDATE cards SET status = 'frozen', frozen_at = ?, status_reason = ? WHERE card_id = ?", (at, reason, card["card_id"]))
    plant_audit(world, at, rng.choice(["STF-0010", "STF-0011", "STF-0012"]), "freeze_card", "card", card["card_id"], reason=reason)


def _plant_lost_card(world: World, rng: random.Random, card: dict, days_ago: int) -> str:
    """``card`` was reported lost ``days_ago`` days ago: cancelled, and a replacement issued three days later (its id)."""
    lost = TODAY - timedelta(days=days_ago)
    world.execute("UPDATE cards SET status = 'cancelled', status_reason = ? WHERE card_id = ?",
                  (f"Reported lost on {lost.isoformat()}; replacement issued", card["card_id"]))
    plant_audit(world, stamp(NOW.replace(hour=10, minute=5) - timedelta(days=days_ago)), "STF-0011", "cancel_card", "card",
                card["card_id"], reason="lost")
    last4 = f"{(int(card['last4']) + rng.randint(1, 9_998)) % 10_000:04d}"  # never the lost card's digits
    account = one(world, "SELECT * FROM accounts WHERE account_id = ?", card["account_id"])
    return plant_card(world, rng, account, issued=lost + timedelta(days=3), last4=last4)["card_id"]


def unfreeze_card(world: World, rng: random.Random) -> TaskDraft:
    """A cardholder asks to have their blocked debit card working again; verify first — and unfreeze only what may be.

    The card is picked per seed and planted in the state the world decides: frozen at the customer's request on an
    open account (unfreeze, ``completed``); frozen at their request, but the account was frozen by compliance since
    (``account_frozen``: only an open account's card may be unfrozen); or cancelled as lost, with a replacement
    issued (``card_cancelled``: a cancelled card cannot be reactivated).
    """
    which = case(rng, {"account_frozen": 3, "card_cancelled": 2, "ok": 5})
    cur = some_currency(rng)
    customer = plant_customer(world, rng, currency=cur)
    card = plant_card(world, rng, plant_account(world, rng, customer, "checking", cur, rng.randint(20_000, 1_500_000)))
    cid, card_id, acc, last4 = customer["customer_id"], card["card_id"], card["account_id"], card["last4"]
    days_ago = rng.randint(4, 40)
    if which == "card_cancelled":
        _plant_lost_card(world, rng, card, days_ago)
    else:
        _plant_card_freeze(world, rng, card, days_ago)
    if which == "account_frozen":
        plant_account_freeze(world, rng, acc, days_ago=(1, days_ago - 1))
    unfreeze = call("unfreeze_card", card_id=card_id)
    prompt = (f"{caller(customer)} They cannot use their debit card ending {last4} and want it working again. Handle the request "
              "under the policy and reply with submit_answer.")
    metadata = {"customer_id": cid, "card_id": card_id, "case": which}
    if which == "ok":
        return TaskDraft(
            prompt=prompt,
            oracle=[find_customer(customer), verify(customer), optional_call("list_cards", customer_id=cid),
                    optional_call("list_accounts", customer_id=cid), unfreeze, answer(f"Card ending {last4} is active again.")],
            outcome=completed(),
            rubric=[
                state("SELECT status FROM cards WHERE card_id = ?", card_id, expect="active", weight=3, name="card active again"),
            ],
            negatives=[
                negative("unverified", "tries to unfreeze without verifying the caller", unfreeze, answer("Done.")),
                negative("freezes_account", "unfreezes the card but also freezes the account", verify(customer), unfreeze,
                         call("freeze_account", account_id=acc, reason="Precaution"), answer("Done.")),
                negative("refuses", "refuses to unfreeze a card the customer froze", call("list_cards", customer_id=cid),
                         refusal("account_frozen", "Cannot unfreeze.")),
                negative("claims_only", "says the card works without unfreezing it", answer("Your card is active again.")),
            ],
            metadata=metadata,
        )
    if which == "account_frozen":
        read = account_seen("saw that the linked account is frozen", acc, "status")
        lookup = call("list_accounts", customer_id=cid)
        looks = [optional_call("list_cards", customer_id=cid), lookup]
        why = "the account it is linked to has been frozen by compliance, and only an open account's card can be unfrozen"
    else:
        read = seen("saw that the card is cancelled", "cards", card_id, "status", weight=2)
        lookup = call("list_cards", customer_id=cid)
        looks = [lookup]
        why = "it was reported lost and cancelled, and a cancelled card cannot be reactivated; the replacement card is the one to use"
    return TaskDraft(
        prompt=prompt,
        oracle=[find_customer(customer), verify(customer, optional=True), *looks,
                refusal(which, f"The card ending {last4} cannot be unfrozen: {why}.")],
        outcome=refused(which),
        rubric=[read, never("unfreeze_card", "no card unfrozen or unfreeze attempted")],
        negatives=[
            negative("no_read", "refuses without reading", refusal(which, "Cannot unfreeze.")),
            negative("tries_first", "tries to unfreeze, then refuses", verify(customer), lookup, unfreeze, refusal(which, "Cannot unfreeze.")),
            negative("claims_active", "says the card works again", verify(customer), lookup, answer("Your card is active again.")),
        ],
        metadata=metadata,
    )


TEMPLATES = [
    TaskTemplate(close_savings, difficulty="medium", category="accounts", split="train", tags=["close", "transfer", "multi-step"],
                 tools=["search_customers", "verify_identity", "list_accounts", "get_account", "transfer_internal", "close_account",
                        "submit_answer"]),
    TaskTemplate(freeze_takeover, difficulty="medium", category="accounts", split="test", tags=["freeze", "fraud", "protective"],
                 tools=["search_customers", "list_accounts", "freeze_account", "list_cards", "freeze_card", "add_note", "submit_answer"],
                 one_sided=("a reported account takeover is always met with the protective freeze: the policy puts no precondition "
                            "on freezing an account or a card (no verification, no KYC), so no world makes it wrong; the customer, "
                            "the account and the cards to find vary by seed")),
    TaskTemplate(release_cleared_hold, difficulty="easy", category="accounts", split="train", tags=["hold"],
                 tools=["search_customers", "list_accounts", "get_account", "release_hold", "submit_answer"]),
    TaskTemplate(unfreeze_card, difficulty="easy", category="accounts", split="train", tags=["card", "verification"],
                 tools=["search_customers", "verify_identity", "list_cards", "list_accounts", "unfreeze_card", "submit_answer"]),
]
