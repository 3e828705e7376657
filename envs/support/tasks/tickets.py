"""Ticket tasks: triage three or four new tickets by the policy's priorities (SLA clocks follow), pick up the ticket
closest to breaching its first-response SLA, and combine a customer's two tickets when they are about the same order
(merge the newer into the older) — or refuse when each is about an order of its own (``not_duplicate``).

Triage and pick-up are one-sided (there is always a priority to set, a ticket to take: the world decides which, never
whether); merging is decided by the tickets, drawn with ``graders.setup.case``."""

from __future__ import annotations

import random
from datetime import datetime

from envs.support.rules import SLA_HOURS
from envs.support.tasks._common import (
    NOW,
    answer,
    call,
    full_name,
    never,
    optional_call,
    pick,
    refusal,
    rows,
    seen,
    state,
    task,
    text_is,
)
from envs.support.tasks.customer_setup import named_customers, plain_customers, plant_ticket
from fixtures.world import World
from graders.outcome import completed, refused
from graders.setup import case
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
    """Three or four customers each just opened a ticket with a default priority: set each one's priority per the
    policy (its kind, one level higher for a platinum customer). The prompt names the customers, not the tickets:
    the priorities are a few discrete values, so a prompt quoting the ticket numbers would let another instance's
    oracle, replayed on these tickets, be right by luck; found through the tools, the tickets are this world's own."""
    count = rng.randint(3, 4)
    kinds = rng.sample(_KINDS, count)
    customers = rng.sample(named_customers(world, "AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.customer_id = c.customer_id "
                                                  "AND t.status IN ('new', 'open', 'pending'))"), count)
    planted = []
    for (tag, subject, body, base), customer in zip(kinds, customers):
        expected = _bump(base, customer["tier"])
        initial = "normal" if expected != "normal" else "low"
        ticket = plant_ticket(world, customer["customer_id"], subject, body, tag=tag, priority=initial, hours_ago=rng.uniform(0.1, 0.9))
        planted.append((ticket, expected, customer))
    names = [full_name(c) for _, _, c in planted]
    flat = "urgent" if any(p != "urgent" for _, p, _ in planted) else "low"  # one priority for all: wrong for some ticket
    triage = [call("triage_ticket", ticket_id=t, priority=p) for t, p, _ in planted]
    find = [step for t, _, c in planted for step in (
        optional_call("search_customers", query=full_name(c)), optional_call("list_tickets", customer_id=c["customer_id"], status="new"),
        optional_call("get_ticket", ticket_id=t), optional_call("get_customer", customer_id=c["customer_id"]))]  # the tier counts
    return task(
        prompt=(f"New tickets just came in from {', '.join(names[:-1])} and {names[-1]}, one each, with a default priority. Triage each "
                "one: set the priority the policy gives it (its SLA clock follows). Do not reply yet. Confirm with submit_answer."),
        oracle=[*find, *triage, answer(f"Triaged the {count} tickets.")],
        outcome=completed(),
        rubric=[state("SELECT priority FROM tickets WHERE ticket_id = ?", t, expect=p, weight=2, name=f"ticket {n} prioritised")
                for n, (t, p, _) in enumerate(planted, start=1)],
        negatives=[
            negative("one_priority", "gives every ticket the same priority", *[call("triage_ticket", ticket_id=t, priority=flat) for t, _, _ in planted],
                     answer("Done.")),
            negative("all_but_one", "triages all tickets but the last", *triage[:-1], answer("Done.")),
            negative("replies", "triages and also replies to each", *triage,
                     *[call("reply_to_ticket", ticket_id=t, body="Thanks, we're on it.") for t, _, _ in planted], answer("Done.")),
        ],
        metadata={"tickets": [t for t, _, _ in planted], "customers": [c["customer_id"] for _, _, c in planted]},
    )


def _due_in(world: World, customer: dict, kind: tuple[str, str, str, str], hours: float) -> str:
    """Plant a new frontline ticket of ``kind`` whose first-response deadline is ``hours`` from now (negative: breached)."""
    tag, subject, body, priority = kind
    return plant_ticket(world, customer["customer_id"], subject, body, tag=tag, priority=priority, hours_ago=SLA_HOURS[priority] - hours)


def sla_pickup(world: World, rng: random.Random) -> TaskDraft:
    """Take the new frontline ticket closest to breaching its first-response SLA (among those not breached yet). Three
    planted tickets with seeded deadlines sit ahead of the queue: one just breached (a decoy), the one to take, and
    one due a little later; which is which, and their kinds and priorities, differ by seed."""
    now = NOW.isoformat()
    queue = rows(world, "SELECT * FROM tickets WHERE status = 'new' AND team_id = 'frontline' AND first_responded_at IS NULL "
                        "AND first_response_due >= ? ORDER BY first_response_due, ticket_id", now)
    first_due = (datetime.fromisoformat(queue[0]["first_response_due"]) - NOW).total_seconds() / 3600 if queue else 1.0
    soonest, later = sorted(rng.uniform(0.05, 0.95) * first_due for _ in range(2))
    customers = rng.sample(plain_customers(world), 3)
    kinds = [_KINDS[rng.randrange(2, 5)] for _ in range(3)]
    _due_in(world, customers[0], kinds[0], -rng.uniform(0.05, 0.5))  # already breached: not the one to take
    ticket = _due_in(world, customers[1], kinds[1], soonest)
    decoy = _due_in(world, customers[2], kinds[2], later + 0.01)
    priority = kinds[1][3]
    take = call("triage_ticket", ticket_id=ticket, priority=priority, assign_to_me=True)
    breached = rows(world, "SELECT ticket_id FROM tickets WHERE status = 'new' AND team_id = 'frontline' AND first_responded_at IS NULL "
                           "AND first_response_due < ? ORDER BY first_response_due DESC LIMIT 1", now)[0]["ticket_id"]
    return task(
        prompt=("You are starting your shift on the frontline queue. Take (assign to yourself) the new ticket closest to breaching its "
                "first-response SLA among those that have not breached yet — keep its priority — and reply with submit_answer giving "
                "values.ticket_id."),
        # the queue read is a look-around: no argument of it names the record taken, so a gate on it would accept
        # any listing; the end state (this ticket, and only it, taken with its priority) is what proves the work
        oracle=[optional_call("list_tickets", status="new", team_id="frontline", sla="within"), take, answer(f"Took {ticket}.", ticket_id=ticket)],
        outcome=completed(),
        rubric=[
            state("SELECT assignee || '/' || priority FROM tickets WHERE ticket_id = ?", ticket, expect=f"STF-0100/{priority}", weight=3,
                  name="ticket closest to breaching taken"),
            text_is("ticket_id", ticket),
        ],
        negatives=[
            negative("breached_one", "takes the ticket that breached most recently", call("list_tickets", status="new", team_id="frontline"),
                     call("triage_ticket", ticket_id=breached, priority="urgent", assign_to_me=True),
                     answer("Took it.", ticket_id=breached)),
            negative("next_one", "takes the ticket due after it", call("list_tickets", status="new", team_id="frontline", sla="within"),
                     call("triage_ticket", ticket_id=decoy, priority=kinds[2][3], assign_to_me=True), answer("Took it.", ticket_id=decoy)),
            negative("bumps_priority", "takes it but changes its priority", call("list_tickets", status="new", team_id="frontline", sla="within"),
                     call("triage_ticket", ticket_id=ticket, priority="urgent" if priority != "urgent" else "high", assign_to_me=True),
                     answer("Took it.", ticket_id=ticket)),
            negative("claims_only", "names the ticket without taking it", call("list_tickets", status="new", team_id="frontline", sla="within"),
                     answer("That one.", ticket_id=ticket)),
        ],
        metadata={"ticket_id": ticket},
    )


def merge_duplicates(world: World, rng: random.Random) -> TaskDraft:
    """A customer asks to combine the two tickets they think they opened about one order: merge the newer into the
    older when both are about the same order; refuse (``not_duplicate``) when each is about an order of its own.
    The tickets decide."""
    which = case(rng, {"two_orders": 4, "same_order": 6})
    customer = pick(rng, named_customers(world, """AND (SELECT count(*) FROM orders o WHERE o.customer_id = c.customer_id
        AND o.status IN ('shipped', 'delivered')) >= 2 AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.customer_id = c.customer_id
        AND t.status IN ('new', 'open', 'pending'))"""), "customer with two orders and no open ticket")
    cid = customer["customer_id"]
    first, second = rng.sample(rows(world, "SELECT order_id FROM orders WHERE customer_id = ? AND status IN ('shipped', 'delivered') "
                                           "ORDER BY order_id", cid), 2)
    about = first["order_id"] if which == "same_order" else second["order_id"]
    older = plant_ticket(world, cid, f"Where is {first['order_id']}?", f"Hi, where is my order {first['order_id']}?", order_id=first["order_id"],
                         tag="where_is_order", hours_ago=rng.uniform(5, 20))
    newer = plant_ticket(world, cid, f"Order {about}", f"Order {about} still hasn't arrived, can you check?", order_id=about,
                         tag="where_is_order", hours_ago=rng.uniform(0.5, 4))
    prompt = (f"{full_name(customer)} thinks they opened two tickets about the same order and asks us to combine them. Check their "
              "open tickets and handle it under the policy; confirm with submit_answer.")
    listed = call("list_tickets", customer_id=cid)
    look = [optional_call("search_customers", query=full_name(customer)), optional_call("list_tickets", customer_id=cid),
            optional_call("get_ticket", ticket_id=older),
            optional_call("get_ticket", ticket_id=newer)]
    merge = call("merge_tickets", ticket_id=newer, into_ticket_id=older)
    read = seen("read which order each ticket is about", "tickets", [older, newer], "order_id")
    metadata = {"customer_id": cid, "older": older, "newer": newer, "case": which}
    if which == "two_orders":
        refuse = refusal("not_duplicate", "Your two tickets are about two different orders, so they stay separate.")
        return task(
            prompt=prompt,
            oracle=[*look, refuse],
            outcome=refused("not_duplicate"),
            rubric=[read, never("merge_tickets", "tickets not merged"), never("reply_to_ticket", "no reply sent while tidying", gate=False)],
            negatives=[
                negative("merges_anyway", "merges tickets about two different orders", listed, merge, answer("Merged.")),
                negative("refuses_unread", "refuses without reading the tickets", refuse),
                negative("claims_merged", "says they were merged", listed, answer("Merged.")),
            ],
            metadata=metadata,
        )
    return task(
        prompt=prompt,
        oracle=[*look, merge, answer(f"Merged {newer} into {older}.")],
        outcome=completed(),
        rubric=[
            read,
            state("SELECT status || '/' || coalesce(merged_into, '-') FROM tickets WHERE ticket_id = ?", newer, expect=f"merged/{older}",
                  weight=3, name="newer ticket merged into the older"),
            never("reply_to_ticket", "no reply sent while tidying", gate=False),
        ],
        negatives=[
            negative("wrong_way", "tries to merge the older into the newer", listed, call("merge_tickets", ticket_id=older, into_ticket_id=newer),
                     answer("Merged.")),
            negative("solves_newer", "solves the newer ticket with a reply instead", listed,
                     call("reply_to_ticket", ticket_id=newer, body="See your other ticket.", status="solved"), answer("Done.")),
            negative("refuses_duplicates", "refuses although both tickets are about the same order", listed,
                     refusal("not_duplicate", "Different issues.")),
            negative("claims_only", "says they were merged", answer("Merged.")),
        ],
        metadata=metadata,
    )


TEMPLATES = [
    TaskTemplate(triage_new, difficulty="medium", category="tickets", split="train", tags=["triage", "sla", "priority"],
                 tools=["search_customers", "list_tickets", "get_ticket", "get_customer", "triage_ticket", "submit_answer"],
                 one_sided="triage is always possible: every new ticket takes the priority the policy gives its kind and its customer's "
                           "tier; the world decides the priorities (seeded kinds, customers and tiers), never whether to act"),
    TaskTemplate(sla_pickup, difficulty="easy", category="tickets", split="test", tags=["sla", "queue"],
                 tools=["list_tickets", "triage_ticket", "submit_answer"],
                 one_sided="a frontline queue always has a ticket to take: the world decides which one (the planted ticket's kind, "
                           "priority and deadline among the queue's), never whether to act"),
    TaskTemplate(merge_duplicates, difficulty="easy", category="tickets", split="train", tags=["duplicates", "merge"],
                 tools=["search_customers", "list_tickets", "get_ticket", "merge_tickets", "submit_answer"]),
]
