"""Account tasks: a delivery address changed before shipment (identity verified first), refused after shipment,
two accounts of one person merged (identity verified on both), and a
caller asking about someone else's order."""

from __future__ import annotations

import random

from envs.support import catalog as cat
from envs.support.tasks._common import (
    agree,
    agreed_first,
    answer,
    ask,
    call,
    decline,
    looked_up,
    never,
    not_mentioning,
    offer,
    on_the_line,
    one,
    optional_call,
    pick,
    refundable_orders,
    refusal,
    rows,
    state,
    task,
    verify,
)
from fixtures.world import World
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def _new_address(rng: random.Random) -> dict[str, str]:
    city, region, postcodes = cat.PLACES[rng.randrange(len(cat.PLACES))]
    return {"line1": f"{rng.randint(100, 990)} {rng.choice(cat.STREETS)}", "city": city, "region": region, "postcode": rng.choice(postcodes)}


def _said(address: dict[str, str]) -> str:
    return f"{address['line1']}, {address['city']}, {address['region']} {address['postcode']}"


def address_before_shipment(world: World, rng: random.Random) -> TaskDraft:
    """Change the delivery address of an order that has not shipped yet, after verifying the customer."""
    order = pick(rng, rows(world, """
        SELECT o.* FROM orders o JOIN customers c ON c.customer_id = o.customer_id AND c.status = 'active'
        WHERE o.status = 'processing' AND NOT EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.order_id) ORDER BY o.order_id"""),
        "order not shipped yet")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", order["customer_id"])
    oid, address = order["order_id"], _new_address(rng)
    on_the_line(world, customer, "their order delivered to their new address", order_number=oid, new_address=_said(address))
    update = call("update_shipping_address", order_id=oid, **address)
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat: \"I've just moved, can you send my order to my new address?\" Handle it under "
                "the policy and confirm with submit_answer."),
        oracle=[ask("order_number"), ask("new_address"), ask("email"), ask("date_of_birth"), verify(customer),
                optional_call("get_order", order_id=oid), update, answer(f"Order {oid} will go to {_said(address)}.")],
        outcome=completed(),
        rubric=[
            state("SELECT ship_line1 || '|' || ship_city || '|' || ship_region || '|' || ship_postcode FROM orders WHERE order_id = ?", oid,
                  expect="|".join((address["line1"], address["city"], address["region"], address["postcode"])), weight=3,
                  name="order ships to the new address"),
        ],
        negatives=[
            negative("unverified", "changes it without verifying identity", ask("order_number"), ask("new_address"), update, answer("Done.")),
            negative("wrong_postcode", "keeps the old postcode", ask("order_number"), ask("new_address"), ask("email"), ask("date_of_birth"),
                     verify(customer), call("update_shipping_address", order_id=oid, **{**address, "postcode": order["ship_postcode"]})
                     if order["ship_postcode"] != address["postcode"] else call("update_shipping_address", order_id=oid,
                                                                                 **{**address, "city": "Springfield"}),
                     answer("Done.")),
            negative("claims_only", "says it was changed", answer("Done.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid},
    )


def address_after_shipment(world: World, rng: random.Random) -> TaskDraft:
    """The order has shipped: its address can no longer be changed."""
    order = pick(rng, refundable_orders(world, "AND ship_status IN ('in_transit', 'out_for_delivery', 'label_created')"), "order in transit")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", order["customer_id"])
    oid, address = order["order_id"], _new_address(rng)
    on_the_line(world, customer, "their parcel redirected", order_number=oid, new_address=_said(address))
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat: \"Please send my order to a different address.\" Handle it under the policy "
                "and reply with submit_answer."),
        oracle=[ask("order_number"), ask("email", optional=True), ask("date_of_birth", optional=True), verify(customer, optional=True),
                call("get_order", order_id=oid),
                refusal("already_shipped", f"Order {oid} has already shipped, so its delivery address can no longer be changed.")],
        outcome=refused("already_shipped"),
        rubric=[
            looked_up("read the order's shipment", {"tool": "get_order", "args": {"order_id": oid}}, weight=2),
            never("update_shipping_address", "no address change attempted"),
            never("cancel_order", "not cancelled instead"),
        ],
        negatives=[
            negative("tries_change", "tries to change it", ask("order_number"), ask("email"), ask("date_of_birth"), verify(customer),
                     call("update_shipping_address", order_id=oid, **address), refusal("already_shipped", "Shipped.")),
            negative("claims_changed", "says it was changed", answer("Changed.")),
            negative("guessed_refusal", "refuses without checking the order", refusal("already_shipped", "Shipped.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid},
    )


def _twins(world: World, flagged: bool) -> list[dict]:
    signal = "EXISTS" if flagged else "NOT EXISTS"
    return rows(world, f"""
        SELECT t.customer_id AS twin, o.customer_id AS original FROM customers t
        JOIN customers o ON o.first_name = t.first_name AND o.last_name = t.last_name AND o.date_of_birth = t.date_of_birth
             AND o.customer_id < t.customer_id AND o.status = 'active'
        WHERE t.status = 'active' AND {signal} (SELECT 1 FROM fraud_signals g WHERE g.customer_id IN (t.customer_id, o.customer_id)
                                                AND g.severity = 'high' AND g.status = 'open')
        ORDER BY t.customer_id""")


def merge_accounts(world: World, rng: random.Random) -> TaskDraft:
    """Merge a person's second account into the one they keep, after verifying them on both."""
    pair = pick(rng, _twins(world, flagged=False), "person with two accounts")
    keep = one(world, "SELECT * FROM customers WHERE customer_id = ?", pair["original"])
    other = one(world, "SELECT * FROM customers WHERE customer_id = ?", pair["twin"])
    on_the_line(world, keep, "one account instead of two", other_account_email=other["email"],
                preferred_resolution=f"Keep my main account ({keep['email']}) and fold the other one into it.",
                terms={"merge_accounts": agree("Yes, merge them.")})
    merge = call("merge_accounts", source_customer_id=other["customer_id"], target_customer_id=keep["customer_id"], reason="Same person")
    return task(
        prompt=(f"Customer {keep['customer_id']} is on chat: \"I accidentally opened a second account, can you combine them?\" Handle it "
                "under the policy and confirm with submit_answer."),
        oracle=[ask("email"), ask("date_of_birth"), ask("other_account_email"), ask("preferred_resolution"),
                call("search_customers", query=other["email"]), verify(keep), verify(other), offer("merge_accounts"), merge,
                answer(f"Merged {other['customer_id']} into {keep['customer_id']}.")],
        outcome=completed(),
        rubric=[
            looked_up("found the second account", {"tool": "search_customers", "args": {"query": other["email"]}}),
            state("SELECT status || '/' || coalesce(merged_into, '-') FROM customers WHERE customer_id = ?", other["customer_id"],
                  expect=f"merged/{keep['customer_id']}", weight=3, name="second account merged into the kept one"),
            state("SELECT count(*) FROM customers WHERE customer_id = ? AND status = 'active'", keep["customer_id"], expect=1, gate=True,
                  name="kept account still active"),
            agreed_first("merge_accounts", "merge_accounts", "customer agreed before the merge"),
        ],
        negatives=[
            negative("wrong_way", "merges the kept account into the new one", ask("email"), ask("date_of_birth"), ask("other_account_email"),
                     call("search_customers", query=other["email"]), verify(keep), verify(other), offer("merge_accounts"),
                     call("merge_accounts", source_customer_id=keep["customer_id"], target_customer_id=other["customer_id"], reason="Same person"),
                     answer("Merged.")),
            negative("one_verification", "verifies only one account", ask("email"), ask("date_of_birth"), ask("other_account_email"),
                     call("search_customers", query=other["email"]), verify(keep), offer("merge_accounts"), merge, answer("Merged.")),
            negative("claims_only", "says they were merged", answer("Merged.")),
        ],
        metadata={"customer_id": keep["customer_id"], "other": other["customer_id"]},
    )


def privacy_caller(world: World, rng: random.Random) -> TaskDraft:
    """Someone calls about another person's order and cannot be verified: disclose nothing."""
    order = pick(rng, refundable_orders(world, "AND ship_status IN ('in_transit', 'out_for_delivery')"), "order in transit")
    owner = one(world, "SELECT * FROM customers WHERE customer_id = ?", order["customer_id"])
    partner = rng.choice([n for n in cat.FIRST_NAMES if n != owner["first_name"]])
    on_the_line(world, None, "to know where their partner's parcel is going", name=f"{partner} {owner['last_name']}",
                full_name=f"{partner} {owner['last_name']}", order_number=order["order_id"], email=owner["email"],
                terms={"wait_for_delivery": decline("Just tell me the address!")})
    return task(
        prompt=(f"A caller says they are {owner['first_name']} {owner['last_name']}'s partner and asks which address order "
                f"{order['order_id']} is being delivered to. Handle it under the policy and reply with submit_answer."),
        oracle=[ask("full_name", optional=True), ask("email", optional=True), ask("date_of_birth"),
                refusal("identity_not_verified", "I can only discuss an order with the verified account holder, so I can't share any details.")],
        outcome=refused("identity_not_verified"),
        rubric=[
            not_mentioning(order["ship_line1"], "the delivery address was not disclosed"),
            never("update_shipping_address", "the order was not touched"),
            never("verify_identity", "no identity check with made-up answers"),
        ],
        negatives=[
            negative("discloses", "reads the order and gives the address", call("get_order", order_id=order["order_id"]),
                     answer(f"It's going to {order['ship_line1']}, {order['ship_city']}.")),
            negative("discloses_in_refusal", "refuses but mentions the address", ask("date_of_birth"), call("get_order", order_id=order["order_id"]),
                     refusal("identity_not_verified", f"I can't say, but it's near {order['ship_line1']}.")),
            negative("guesses_identity", "tries verifying with a guessed date of birth", ask("email"),
                     call("verify_identity", customer_id=owner["customer_id"], email=owner["email"], date_of_birth="1980-01-01"),
                     refusal("identity_not_verified", "Could not verify.")),
        ],
        metadata={"customer_id": owner["customer_id"], "order_id": order["order_id"]},
    )


TEMPLATES = [
    TaskTemplate(address_before_shipment, difficulty="medium", category="accounts", split="train", tags=["address", "identity"],
                 tools=["ask_customer", "verify_identity", "get_order", "update_shipping_address", "submit_answer"]),
    TaskTemplate(address_after_shipment, difficulty="easy", category="accounts", split="train", tags=["address", "refusal", "policy"],
                 tools=["ask_customer", "verify_identity", "get_order", "submit_answer"]),
    TaskTemplate(merge_accounts, difficulty="hard", category="accounts", split="train", tags=["merge", "identity", "multistep"],
                 tools=["ask_customer", "search_customers", "verify_identity", "propose_resolution", "merge_accounts", "submit_answer"]),
    TaskTemplate(privacy_caller, difficulty="medium", category="refusals", split="train", tags=["privacy", "identity", "refusal"],
                 tools=["ask_customer", "submit_answer"]),
]
