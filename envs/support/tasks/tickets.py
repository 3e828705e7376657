"""Ticket tasks: triage new tickets by the policy's priorities (SLA clocks follow), pick up the ticket closest to
breaching its first-response SLA, and merge a customer's duplicate ticket into the older one."""

from __future__ import annotations

import random

from envs.support.tasks._common import (
    NOW,
    answer,
    call,
    looked_up,
    never,
    optional_call,
    pick,
    plain_customers,
    plant_ticket,
    rows,
    state,
    task,
    text_is,
)
from fixtures.world import World
from graders.outcome import completed
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]

_KINDS = [
    ("safety", "Charger got very hot", "The power bank charger got so hot it melted the cable. Is it safe?", "urgent"),
    ("chargeback", "I disputed the charge", "I've asked my bank to reverse the payment for my last order.", "urgent"),
    ("lost", "Parcel lost", "Tracking says my parcel is lost. What now?", "high"),
    ("damaged", "Arrived broken", "My order arrived with a cracked screen.", "high"),
    ("where_is_order", "Order question", "When will my order arrive?", "normal"),
    ("feedback", "Nice packaging", "Just wanted to say I love the new packaging.", "low"),
]


def _bump(priority: str, tier: str) -> str:
    order = ["low", "normal", "high", "urgent"]
    return order[min(3, order.index(priority) + 1)] if tier == "platinum" else priority


def triage_new(world: World, rng: random.Random) -> TaskDraft:
    """Three new tickets arrived with the default priority: set each one's priority per the policy."""
    kinds = rng.sample(_KINDS, 3)
    customers = rng.sample(plain_customers(world), 3)
    planted = []
    for (tag, subject, body, base), customer in zip(kinds, customers):
        expected = _bump(base, customer["tier"])
        initial = "normal" if expected != "normal" else "low"
        ticket = plant_ticket(world, customer["customer_id"], subject, body, tag=tag, priority=initial, hours_ago=rng.uniform(0.1, 0.9))
        planted.append((ticket, expected))
    ids = ", ".join(t for t, _ in planted)
    return task(
        prompt=(f"Tickets {ids} just came in with a default priority. Triage each one: set the priority the policy gives it (its SLA clock "
                "follows). Do not reply yet. Confirm with submit_answer."),
        oracle=[*[optional_call("get_ticket", ticket_id=t) for t, _ in planted],
                *[call("triage_ticket", ticket_id=t, priority=p) for t, p in planted], answer("Triaged the three tickets.")],
        outcome=completed(),
        rubric=[state("SELECT priority FROM tickets WHERE ticket_id = ?", t, expect=p, weight=2, name=f"ticket {n} prioritised")
                for n, (t, p) in enumerate(planted, start=1)],
        negatives=[
            negative("all_urgent", "makes every ticket urgent", *[call("triage_ticket", ticket_id=t, priority="urgent") for t, _ in planted],
                     answer("Done.")),
            negative("two_of_three", "triages only the first two", *[call("triage_ticket", ticket_id=t, priority=p) for t, p in planted[:2]],
                     answer("Done.")),
            negative("replies", "triages and also replies to each", *[call("triage_ticket", ticket_id=t, priority=p) for t, p in planted],
                     *[call("reply_to_ticket", ticket_id=t, body="Thanks, we're on it.") for t, _ in planted], answer("Done.")),
        ],
        metadata={"tickets": [t for t, _ in planted]},
    )


def sla_pickup(world: World, rng: random.Random) -> TaskDraft:
    """Take the new frontline ticket closest to breaching its first-response SLA (among those not breached yet)."""
    now = NOW.isoformat()
    queue = rows(world, "SELECT * FROM tickets WHERE status = 'new' AND team_id = 'frontline' AND first_responded_at IS NULL "
                        "AND first_response_due >= ? ORDER BY first_response_due, ticket_id", now)
    customer = pick(rng, plain_customers(world), "customer")
    # a fresh ticket so the answer differs per seed: due between now and the earliest existing deadline
    first_due = queue[0]["first_response_due"] if queue else None
    kind = _KINDS[rng.randrange(2, 5)]
    from datetime import datetime

    hours = 0.3 if first_due is None else max(0.05, (datetime.fromisoformat(first_due) - NOW).total_seconds() / 3600 / 2)
    sla = {"urgent": 1, "high": 4, "normal": 24, "low": 72}[kind[3]]
    ticket = plant_ticket(world, customer["customer_id"], kind[1], kind[2], tag=kind[0], priority=kind[3], hours_ago=sla - hours)
    breached = rows(world, "SELECT ticket_id FROM tickets WHERE status = 'new' AND team_id = 'frontline' AND first_responded_at IS NULL "
                           "AND first_response_due < ? ORDER BY first_response_due LIMIT 1", now)
    take = call("triage_ticket", ticket_id=ticket, priority=kind[3], assign_to_me=True)
    return task(
        prompt=("You are starting your shift on the frontline queue. Take (assign to yourself) the new ticket closest to breaching its "
                "first-response SLA among those that have not breached yet — keep its priority — and reply with submit_answer giving "
                "values.ticket_id."),
        oracle=[call("list_tickets", status="new", team_id="frontline", sla="within"), take, answer(f"Took {ticket}.", ticket_id=ticket)],
        outcome=completed(),
        rubric=[
            looked_up("read the queue", {"tool": "list_tickets", "args": {"status": "new"}}, {"tool": "list_tickets", "args": {"sla": "within"}}),
            state("SELECT assignee || '/' || priority FROM tickets WHERE ticket_id = ?", ticket, expect=f"STF-0100/{kind[3]}", weight=3,
                  name="ticket closest to breaching taken"),
            text_is("ticket_id", ticket),
        ],
        negatives=[
            negative("breached_one", "takes a ticket that already breached",
                     call("list_tickets", status="new", team_id="frontline"),
                     call("triage_ticket", ticket_id=breached[0]["ticket_id"] if breached else queue[-1]["ticket_id"], priority="urgent",
                          assign_to_me=True), answer("Took it.", ticket_id=breached[0]["ticket_id"] if breached else queue[-1]["ticket_id"])),
            negative("bumps_priority", "takes it but raises its priority", call("list_tickets", status="new", team_id="frontline", sla="within"),
                     call("triage_ticket", ticket_id=ticket, priority="urgent", assign_to_me=True), answer("Took it.", ticket_id=ticket)),
            negative("claims_only", "names the ticket without taking it", call("list_tickets", status="new", team_id="frontline", sla="within"),
                     answer("That one.", ticket_id=ticket)),
        ],
        metadata={"ticket_id": ticket},
    )


def merge_duplicates(world: World, rng: random.Random) -> TaskDraft:
    """A customer wrote twice about the same order: merge the newer ticket into the older one."""
    order = pick(rng, rows(world, """
        SELECT o.* FROM orders o JOIN customers c ON c.customer_id = o.customer_id AND c.status = 'active'
        WHERE o.status IN ('shipped', 'delivered') AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.customer_id = o.customer_id
              AND t.status IN ('new', 'open', 'pending')) ORDER BY o.order_id"""), "order of a customer with no open ticket")
    cid, oid = order["customer_id"], order["order_id"]
    older = plant_ticket(world, cid, f"Where is {oid}?", f"Hi, where is my order {oid}?", order_id=oid, tag="where_is_order",
                         hours_ago=rng.uniform(5, 20))
    newer = plant_ticket(world, cid, f"Re: order {oid}", f"Following up: order {oid} still hasn't arrived!", order_id=oid,
                         tag="where_is_order", hours_ago=rng.uniform(0.5, 4))
    merge = call("merge_tickets", ticket_id=newer, into_ticket_id=older)
    return task(
        prompt=(f"Customer {cid} seems to have written in more than once about the same order. Tidy up their open tickets per the policy "
                "and confirm with submit_answer."),
        oracle=[call("list_tickets", customer_id=cid), optional_call("get_ticket", ticket_id=older), merge,
                answer(f"Merged {newer} into {older}.")],
        outcome=completed(),
        rubric=[
            looked_up("read the customer's tickets", {"tool": "list_tickets", "args": {"customer_id": cid}}),
            state("SELECT status || '/' || coalesce(merged_into, '-') FROM tickets WHERE ticket_id = ?", newer, expect=f"merged/{older}",
                  weight=3, name="newer ticket merged into the older"),
            never("reply_to_ticket", "no reply sent while tidying", gate=False),
        ],
        negatives=[
            negative("wrong_way", "tries to merge the older into the newer", call("list_tickets", customer_id=cid),
                     call("merge_tickets", ticket_id=older, into_ticket_id=newer), answer("Merged.")),
            negative("solves_newer", "solves the newer ticket with a reply instead", call("list_tickets", customer_id=cid),
                     call("reply_to_ticket", ticket_id=newer, body="See your other ticket.", status="solved"), answer("Done.")),
            negative("claims_only", "says they were merged", answer("Merged.")),
        ],
        metadata={"customer_id": cid, "older": older, "newer": newer},
    )


TEMPLATES = [
    TaskTemplate(triage_new, difficulty="medium", category="tickets", split="train", tags=["triage", "sla", "priority"],
                 tools=["get_ticket", "triage_ticket", "submit_answer"]),
    TaskTemplate(sla_pickup, difficulty="easy", category="tickets", split="test", tags=["sla", "queue"],
                 tools=["list_tickets", "triage_ticket", "submit_answer"]),
    TaskTemplate(merge_duplicates, difficulty="easy", category="tickets", split="train", tags=["duplicates", "merge"],
                 tools=["list_tickets", "get_ticket", "merge_tickets", "submit_answer"]),
]
