"""Damaged items and exchanges: a cheap damaged item refunded with the customer's photo (keep it), a damaged item
without a photo (decline), an expensive damaged item sent back for inspection, a size exchange in stock, and one
whose size is sold out (the customer declines a refund instead)."""

from __future__ import annotations

import random

from envs.support.tasks._common import (
    agree,
    agreed_first,
    answer,
    ask,
    asked,
    call,
    decline,
    delivered_lines,
    looked_up,
    money,
    never,
    next_id,
    offer,
    on_the_line,
    one,
    optional_call,
    pick,
    plant_photo,
    refusal,
    rows,
    state,
    task,
    value_is,
)
from fixtures.world import World
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def _damage_story(world: World, rng: random.Random, extra: str, what: str, *, photo: bool) -> tuple[dict, dict, str | None]:
    line = pick(rng, delivered_lines(world, f"AND age <= 25 AND quantity = 1 {extra}"), what)
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", line["customer_id"])
    photo_id = plant_photo(world, customer["customer_id"], f"Photo of the broken {line['product']}") if photo else None
    facts = {"order_number": line["order_id"], "which_item": line["product"], "reason": "It arrived broken."}
    if photo_id:
        facts["photo"] = photo_id
    on_the_line(world, customer, f"something done about the broken {line['product']}",
                terms={"refund_original_payment": agree("Yes, refund my card please."), "return_for_refund": agree("OK, I'll send it back."),
                       "replacement": decline("No, I don't want another one."), "refund_store_credit": decline("I'd prefer my card.")},
                **facts)
    return line, customer, photo_id


_DAMAGED = "Customer {cid} is on chat: \"Something I ordered arrived broken.\""


def damaged_keep(world: World, rng: random.Random) -> TaskDraft:
    """A damaged item worth up to 100.00: with the customer's photo, open a keep-it case and refund it to their card."""
    line, customer, photo = _damage_story(world, rng, "AND unit_price_minor <= 10000", "recent line up to 100.00", photo=True)
    oid, lid, value = line["order_id"], line["line_id"], money(line["unit_price_minor"])
    rma = next_id(world, "returns")
    refund = call("issue_refund", order_id=oid, amount=value, method="original_payment", reason="damaged_item", rma_id=rma)
    return task(
        prompt=(_DAMAGED.format(cid=customer["customer_id"]) + " Find out which order and item, handle it under the policy the way the "
                "customer prefers, and reply with submit_answer giving values.refund if you refund anything."),
        oracle=[ask("order_number"), ask("which_item"), call("get_order", order_id=oid), ask("photo"),
                call("create_return", order_id=oid, line_id=lid, quantity=1, reason="damaged", photo_id=photo),
                offer("refund_original_payment", value), refund, answer(f"Refunded {value} for the damaged {line['product']}; no need to send it back.",
                                                                      refund=value)],
        outcome=completed(),
        rubric=[
            asked("photo", "asked the customer for a photo"),
            looked_up("read the order", {"tool": "get_order", "args": {"order_id": oid}}),
            state("SELECT count(*) FROM returns WHERE line_id = ? AND kind = 'keep' AND reason = 'damaged' AND photo_id = ?", lid, photo,
                  expect=1, weight=2, name="keep-it case opened with the photo"),
            state("SELECT count(*) FROM refunds WHERE order_id = ? AND reason = 'damaged_item' AND method = 'original_payment' AND amount_minor = ?",
                  oid, line["unit_price_minor"], expect=1, weight=3, name="damaged item refunded to the card"),
            agreed_first("refund_original_payment", {"tool": "issue_refund", "args": {"order_id": oid}}, "customer agreed before the refund"),
            value_is("refund", value, weight=1),
        ],
        negatives=[
            negative("no_photo", "refunds without a keep-it case or photo", ask("order_number"), call("get_order", order_id=oid),
                     offer("refund_original_payment", value),
                     call("issue_refund", order_id=oid, amount=value, method="original_payment", reason="damaged_item"), answer("Refunded.", refund=value)),
            negative("no_agreement", "refunds without agreeing it", ask("order_number"), call("get_order", order_id=oid), ask("photo"),
                     call("create_return", order_id=oid, line_id=lid, quantity=1, reason="damaged", photo_id=photo), refund,
                     answer("Refunded.", refund=value)),
            negative("replacement_credit", "gives store credit the customer did not want", ask("order_number"), call("get_order", order_id=oid),
                     ask("photo"), call("create_return", order_id=oid, line_id=lid, quantity=1, reason="damaged", photo_id=photo),
                     call("issue_refund", order_id=oid, amount=value, method="store_credit", reason="damaged_item", rma_id=rma),
                     answer("Credited.", refund=value)),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid, "refund": value},
    )


def damaged_no_photo(world: World, rng: random.Random) -> TaskDraft:
    """A damaged item, but the customer has no photo: nothing can be refunded yet."""
    line, customer, _ = _damage_story(world, rng, "AND unit_price_minor <= 10000", "recent line up to 100.00", photo=False)
    oid, lid, value = line["order_id"], line["line_id"], money(line["unit_price_minor"])
    return task(
        prompt=(_DAMAGED.format(cid=customer["customer_id"]) + " Find out which order and item and handle it under the policy. Reply with "
                "submit_answer."),
        oracle=[ask("order_number"), ask("which_item"), optional_call("get_order", order_id=oid), ask("photo"),
                refusal("photo_required", "Damaged items need a photo before we can refund or replace them; please send one and we'll sort it out.")],
        outcome=refused("photo_required"),
        rubric=[
            asked("photo", "asked the customer for a photo", weight=2),
            never("issue_refund", "no refund without a photo", order_id=oid),
            never("send_replacement", "no replacement without a photo"),
            never("issue_goodwill_credit", "no credit instead"),
            never("create_return", "no changed-mind return to dodge the photo rule", reason="changed_mind"),
        ],
        negatives=[
            negative("refunds_anyway", "tries to refund without the photo", ask("order_number"), ask("photo"),
                     call("issue_refund", order_id=oid, amount=value, method="original_payment", reason="damaged_item"),
                     refusal("photo_required", "Need a photo.")),
            negative("as_change_of_mind", "opens a changed-mind return to dodge the photo rule", ask("order_number"), ask("which_item"),
                     call("create_return", order_id=oid, line_id=lid, quantity=1, reason="changed_mind"), refusal("photo_required", "Need a photo.")),
            negative("never_asks", "declines without asking for a photo", ask("order_number"), refusal("photo_required", "Need a photo.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid},
    )


def damaged_expensive(world: World, rng: random.Random) -> TaskDraft:
    """A damaged item above 100.00: with the photo it is sent back and refunded after inspection, not refunded now."""
    line, customer, photo = _damage_story(world, rng, "AND unit_price_minor > 10000 AND category != 'grocery'", "recent line above 100.00",
                                          photo=True)
    oid, lid, value = line["order_id"], line["line_id"], money(line["unit_price_minor"])
    create = call("create_return", order_id=oid, line_id=lid, quantity=1, reason="damaged", photo_id=photo)
    return task(
        prompt=(_DAMAGED.format(cid=customer["customer_id"]) + " Find out which order and item, handle it under the policy the way the "
                "customer prefers, and confirm with submit_answer."),
        oracle=[ask("order_number"), ask("which_item"), optional_call("get_order", order_id=oid), ask("photo"), offer("return_for_refund"),
                create, answer(f"Return label issued for the damaged {line['product']}; it is refunded once the warehouse inspects it.")],
        outcome=completed(),
        rubric=[
            asked("photo", "asked the customer for a photo"),
            state("SELECT count(*) FROM returns WHERE line_id = ? AND kind = 'return' AND reason = 'damaged' AND photo_id = ?", lid, photo,
                  expect=1, weight=3, name="item sent back for inspection"),
            agreed_first("return_for_refund", "create_return", "customer agreed to send it back first"),
            never("issue_refund", "no refund before the inspection", order_id=oid),
        ],
        negatives=[
            negative("refunds_now", "tries to refund at once", ask("order_number"), ask("photo"), offer("return_for_refund"), create,
                     call("issue_refund", order_id=oid, amount=value, method="original_payment", reason="returned_item",
                          rma_id=next_id(world, "returns")), answer("Refunded.")),
            negative("no_agreement", "opens the return without agreeing it", ask("order_number"), ask("photo"), create, answer("Done.")),
            negative("no_photo_asked", "claims the label went out without asking for the photo", ask("order_number"), answer("Label sent.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid},
    )


def _exchange_story(world: World, rng: random.Random, stock_sql: str, what: str) -> tuple[dict, dict, dict]:
    candidates = []
    for line in delivered_lines(world, "AND category = 'apparel' AND age <= 45 AND quantity = 1"):
        others = rows(world, f"SELECT * FROM variants WHERE product_id = ? AND variant_id != ? AND {stock_sql} ORDER BY variant_id",
                      line["product_id"], line["variant_id"])
        if others:
            candidates.append({**line, "_others": others})
    line = pick(rng, candidates, what)
    target = line["_others"][rng.randrange(len(line["_others"]))]
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", line["customer_id"])
    on_the_line(world, customer, f"the {line['product']} in size {target['option']}", order_number=line["order_id"], which_item=line["product"],
                preferred_resolution=f"The same thing in size {target['option']}, please.",
                terms={"exchange": agree("Yes, swap it for that size."), "return_for_refund": decline("No, I really want that size.")})
    return line, customer, target


def exchange_in_stock(world: World, rng: random.Random) -> TaskDraft:
    """A size exchange: check the new size is in stock and open the exchange."""
    line, customer, target = _exchange_story(world, rng, "stock > 0", "apparel line with another size in stock")
    oid, lid = line["order_id"], line["line_id"]
    exchange = call("create_exchange", order_id=oid, line_id=lid, new_variant_id=target["variant_id"], reason="changed_mind")
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat: \"The size is wrong, can I swap it?\" Find out which order, item and size, "
                "and handle it under the policy. Confirm with submit_answer."),
        oracle=[ask("order_number"), ask("which_item"), ask("preferred_resolution"), call("get_order", order_id=oid),
                call("get_product", product_id=line["product_id"]), offer("exchange"), exchange,
                answer(f"Exchange opened: size {target['option']} is reserved for you.")],
        outcome=completed(),
        rubric=[
            asked("preferred_resolution", "asked which size the customer wants"),
            looked_up("read the order", {"tool": "get_order", "args": {"order_id": oid}}),
            looked_up("checked the stock of the sizes", {"tool": "get_product", "args": {"product_id": line["product_id"]}}),
            state("SELECT count(*) FROM returns WHERE line_id = ? AND kind = 'exchange' AND exchange_variant_id = ?", lid, target["variant_id"],
                  expect=1, weight=3, name="exchange for the wanted size opened"),
            agreed_first("exchange", "create_exchange", "customer agreed before the exchange"),
        ],
        negatives=[
            negative("return_instead", "opens a return instead", ask("order_number"), call("get_order", order_id=oid), offer("return_for_refund"),
                     call("create_return", order_id=oid, line_id=lid, quantity=1, reason="changed_mind"), answer("Return opened.")),
            negative("no_agreement", "opens the exchange without agreeing it", ask("order_number"), ask("preferred_resolution"),
                     call("get_order", order_id=oid), call("get_product", product_id=line["product_id"]), exchange, answer("Done.")),
            negative("claims_only", "says it was exchanged", answer("Exchange opened.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid, "variant_id": target["variant_id"]},
    )


def exchange_out_of_stock(world: World, rng: random.Random) -> TaskDraft:
    """The wanted size is sold out and the customer declines a refund instead: decline the exchange."""
    line, customer, target = _exchange_story(world, rng, "stock = 0", "apparel line whose other size is sold out")
    oid, lid = line["order_id"], line["line_id"]
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat: \"The size is wrong, can I swap it?\" Find out which order, item and size, "
                "and handle it under the policy. Reply with submit_answer."),
        oracle=[ask("order_number"), ask("which_item"), ask("preferred_resolution"), optional_call("get_order", order_id=oid),
                call("get_product", product_id=line["product_id"]), offer("return_for_refund", optional=True),
                refusal("out_of_stock", f"Size {target['option']} is sold out, so it cannot be exchanged; a refund is possible if you change your mind.")],
        outcome=refused("out_of_stock"),
        rubric=[
            asked("preferred_resolution", "asked which size the customer wants"),
            looked_up("checked the stock of the sizes", {"tool": "get_product", "args": {"product_id": line["product_id"]}}, weight=2),
            never("create_return", "no return the customer declined"),
            never("create_exchange", "no exchange for another size than the one asked for"),
        ],
        negatives=[
            negative("return_anyway", "opens a return the customer declined", ask("order_number"), call("get_product", product_id=line["product_id"]),
                     call("create_return", order_id=oid, line_id=lid, quantity=1, reason="changed_mind"), refusal("out_of_stock", "Sold out.")),
            negative("tries_exchange", "tries the sold-out exchange", ask("order_number"),
                     call("create_exchange", order_id=oid, line_id=lid, new_variant_id=target["variant_id"]), refusal("out_of_stock", "Sold out.")),
            negative("claims_exchanged", "says it was exchanged", answer("Exchanged.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid},
    )


TEMPLATES = [
    TaskTemplate(damaged_keep, difficulty="hard", category="damaged", split="train", tags=["damaged", "photo", "refund", "multistep"],
                 tools=["ask_customer", "get_order", "create_return", "propose_resolution", "issue_refund", "submit_answer"]),
    TaskTemplate(damaged_no_photo, difficulty="medium", category="damaged", split="train", tags=["damaged", "photo", "refusal"],
                 tools=["ask_customer", "get_order", "submit_answer"]),
    TaskTemplate(damaged_expensive, difficulty="hard", category="damaged", split="test", tags=["damaged", "photo", "inspection"],
                 tools=["ask_customer", "get_order", "propose_resolution", "create_return", "submit_answer"]),
    TaskTemplate(exchange_in_stock, difficulty="medium", category="exchanges", split="train", tags=["exchange", "stock", "agreement"],
                 tools=["ask_customer", "get_order", "get_product", "propose_resolution", "create_exchange", "submit_answer"]),
    TaskTemplate(exchange_out_of_stock, difficulty="medium", category="exchanges", split="test", tags=["exchange", "stock", "refusal"],
                 tools=["ask_customer", "get_order", "get_product", "propose_resolution", "submit_answer"]),
]
