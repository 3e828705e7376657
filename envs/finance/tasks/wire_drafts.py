"""The drafts a wire request or an approval ends in, shared by the wires and refusals templates.

A wire template draws its case, plants the deciding fact and hands its request to one of two twins:
``wire_sent`` (verify the caller, send the wire; the end world shows it) or ``wire_refused`` (read the deciding
record, send nothing, refuse with the policy's code, gated on having seen the deciding fact). An approval template does the same
with ``approval_recorded`` / ``approval_refused`` on a wire planted in the approvals queue, worded by
``queue_prompt``.
"""

from __future__ import annotations

from typing import Any

from envs.finance.rules import WIRE_FEE_MINOR as FEE
from envs.finance.tasks._common import (
    SUPERVISORS,
    answer,
    available_minor,
    balance_is,
    full_name,
    money,
    need,
    never,
    optional_call,
    refusal,
    rows,
    seen,
    verify,
)
from envs.finance.tasks.wire_setup import WireRequest, ledger_balance, used_today
from fixtures.world import World
from graders.criteria import Seen, state
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, ToolCall, call, negative

__all__ = ["approval_recorded", "approval_refused", "queue_prompt", "wire_count", "wire_refused", "wire_sent"]


def wire_count(acc: str, payee_id: str, minor: int, status: str) -> Any:
    """A criterion: exactly one wire of ``minor`` from ``acc`` to ``payee_id``, in ``status``, requested by the agent."""
    return state("SELECT count(*) FROM transfers WHERE kind = 'external_wire' AND from_account_id = ? AND payee_id = ? AND amount_minor = ? "
                 "AND status = ? AND requested_by = 'STF-0100'", acc, payee_id, minor, status, expect=1, weight=3,
                 name=f"one {status} wire of the amount to the payee")


def wire_sent(world: World, req: WireRequest, prompt: str, *, twin_code: str, verification: ToolCall | None = None,
               extra_negatives: tuple[Any, ...] = ()) -> TaskDraft:
    """The compliant twin of a wire template: verify the caller, send the wire; the end world shows it completed.

    ``twin_code`` is the refusal of the template's other cases: declaring it here (after a read) must fail.
    """
    verified = verification or verify(req.customer)
    start = ledger_balance(world, req.acc)
    room = min(available_minor(world, req.acc), int(req.account["wire_limit"]) - used_today(world, req.acc))
    twice = ([negative("sent_twice", "sends the wire twice", verified, req.send(), req.send(), answer("Sent."))]
             if room >= 2 * (req.minor + FEE) else [])
    return TaskDraft(
        prompt=prompt,
        oracle=[*req.lookups(), optional_call("get_account", account_id=req.acc), verified, req.send(),
                answer(f"Wire of {req.amount} {req.cur} to {req.payee['name']} sent; the account was debited the amount plus the 25.00 fee.")],
        outcome=completed(),
        rubric=[
            wire_count(req.acc, req.payee["payee_id"], req.minor, "completed"),
            balance_is(req.acc, start - req.minor - FEE, name="account debited amount plus the wire fee"),
        ],
        negatives=[
            negative("fee_netted", "takes the fee out of the amount, so the payee receives 25.00 less", verified,
                     req.send(minor=req.minor - FEE), answer("Sent.")),
            *twice,
            negative("unverified_attempt", "wires without verifying the caller's identity", req.send(), answer("Sent.")),
            negative("refuses_compliant", "reads the account and refuses a wire the policy allows",
                     call("get_account", account_id=req.acc), refusal(twin_code, "The wire cannot go today.")),
            negative("claims_only", "says it was sent without sending it", answer("Sent.")),
            *extra_negatives,
        ],
        metadata={"customer_id": req.cid, "account_id": req.acc, "payee_id": req.payee["payee_id"], "amount": req.amount, "case": "ok"},
    )


def wire_refused(req: WireRequest, prompt: str, code: str, why: str, gate: Seen, *, read_call: ToolCall, also_shown_by: tuple[str, ...] = (),
                  verification: ToolCall | None = None, extra_negatives: tuple[Any, ...] = ()) -> TaskDraft:
    """The refusal twin of a wire template: read the deciding record, send nothing, refuse with the policy's code.

    The refusal is gated on having seen the deciding fact (``gate``: the account's limits, its available balance, the
    payee's verification, the customer's KYC), whatever read showed it: a refusal given without looking is a guess
    from the template, whatever it says. ``read_call`` is the oracle's one read that shows it; the optional look-ups
    that would show it too (``also_shown_by``: the account list shows the available balance) are left out of the
    oracle, so the check can prove that read required.
    """
    verified = verification or verify(req.customer, optional=True)  # a cautious agent verifies first: allowed, not needed
    lookups = [c for c in req.lookups() if c.tool != read_call.tool and c.tool not in also_shown_by]
    return TaskDraft(
        prompt=prompt,
        oracle=[*lookups, verified, read_call,
                refusal(code, f"I cannot send this wire: {why}. Nothing was sent.")],
        outcome=refused(code),
        rubric=[
            gate,
            never("send_wire", "no wire sent or attempted"),
        ],
        negatives=[
            negative("attempts_wire", "tries the wire anyway, then refuses", verify(req.customer), req.send(), refusal(code, f"Refused: {why}.")),
            negative("refuses_unread", "refuses with the right code without reading the deciding record", refusal(code, f"Refused: {why}.")),
            negative("claims_sent", "tells the customer the wire went out", answer("Your wire has been sent.")),
            *extra_negatives,
        ],
        metadata={"customer_id": req.cid, "account_id": req.acc, "payee_id": req.payee["payee_id"], "amount": req.amount, "case": code},
    )


# -- approvals ---------------------------------------------------------------------------------------------------------


def queue_prompt(wire: dict[str, Any], approver: str, request: str, *, amount: bool = True) -> str:
    """The approvals-queue ticket: the wire named as people name it (customer, payee and, unless the amount is what
    decides, the amount), the supervisor by name only."""
    cur = wire["account"]["currency"]
    what = f"the wire of {money(wire['minor'], cur)} {cur}" if amount else "the wire"
    return (f"Approvals queue: {SUPERVISORS[approver][0]} has reviewed {what} from {full_name(wire['customer'])}'s account to "
            f"{wire['payee']['name']} that is awaiting approval, and approved it by phone. {request} Reply with submit_answer.")


def approval_recorded(world: World, wire: dict[str, Any], approver: str, prompt: str, *, refusal_code: str) -> TaskDraft:
    """The compliant twin of an approval template: record exactly the named supervisor's approval; the wire completes."""
    trf, acc = wire["transfer_id"], wire["account"]["account_id"]
    others = [w for w in rows(world, "SELECT transfer_id FROM transfers WHERE status = 'pending_approval' AND transfer_id != ? "
                                     "ORDER BY transfer_id", trf)]
    need(bool(others), "an approval task needs another pending wire for its negative")
    other = next(s for s in sorted(SUPERVISORS) if s not in (approver, wire["requested_by"]))
    approve = call("approve_transfer", transfer_id=trf, approver_id=approver, comment="Approved by phone")
    balance = ledger_balance(world, acc)
    return TaskDraft(
        prompt=prompt,
        oracle=[optional_call("list_pending_approvals"), optional_call("get_transfer", transfer_id=trf), approve,
                answer(f"Recorded {SUPERVISORS[approver][0]}'s approval; the wire completed.")],
        outcome=completed(),
        rubric=[
            state("SELECT status || ':' || decided_by FROM transfers WHERE transfer_id = ?", trf, expect=f"completed:{approver}", weight=3,
                  name="wire completed with the named approver"),
            balance_is(acc, balance - wire["minor"] - FEE, name="reserved funds posted"),
        ],
        negatives=[
            negative("wrong_approver", "records the approval under another supervisor", call("approve_transfer", transfer_id=trf, approver_id=other),
                     answer("Approved.")),
            negative("rejects", "rejects the wire instead", call("reject_transfer", transfer_id=trf, reason="Reviewed"), answer("Done.")),
            negative("approves_queue", "also approves another pending wire nobody approved", approve,
                     call("approve_transfer", transfer_id=others[0]["transfer_id"], approver_id="STF-0001"), answer("Approved.")),
            negative("refuses_compliant", "reads the wire and refuses an approval the policy allows", call("get_transfer", transfer_id=trf),
                     refusal(refusal_code, "This approval cannot be recorded.")),
        ],
        metadata={"transfer_id": trf, "approver": approver, "customer_id": wire["customer"]["customer_id"], "case": "ok"},
    )


def approval_refused(wire: dict[str, Any], approver: str, prompt: str, *, code: str, rule: str) -> TaskDraft:
    """The refusal twin of an approval template: read the wire (who requested it, or its USD equivalent: the fact the
    refusal ``code`` turns on), record nothing, refuse."""
    trf = wire["transfer_id"]
    deciding = "requested_by" if code == "same_approver" else "usd_equivalent"
    proper = "STF-0001" if approver != "STF-0001" else "STF-0002"
    return TaskDraft(
        prompt=prompt,
        oracle=[call("get_transfer", transfer_id=trf),
                refusal(code, f"I cannot record this approval: {rule}. The wire stays pending until an eligible supervisor approves it.")],
        outcome=refused(code),
        rubric=[
            seen("saw who requested the wire" if code == "same_approver" else "saw the wire's USD equivalent", "transfers", trf,
                 deciding, weight=2),
            never("approve_transfer", "no approval recorded or attempted", transfer_id=trf),
            state("SELECT status FROM transfers WHERE transfer_id = ?", trf, expect="pending_approval", gate=True, name="wire still pending"),
        ],
        negatives=[
            negative("other_supervisor", f"records the approval under {SUPERVISORS[proper][0]}, who never approved it",
                     call("approve_transfer", transfer_id=trf, approver_id=proper), answer("Approved by another supervisor.")),
            negative("as_asked", "tries to record the approval as asked", call("approve_transfer", transfer_id=trf, approver_id=approver),
                     refusal(code, f"I cannot: {rule}.")),
            negative("rejects", "rejects the customer's wire instead of leaving it for an eligible supervisor",
                     call("reject_transfer", transfer_id=trf, reason="Approval invalid"), refusal(code, f"Rejected: {rule}.")),
        ],
        metadata={"transfer_id": trf, "approver": approver, "customer_id": wire["customer"]["customer_id"], "case": code},
    )
