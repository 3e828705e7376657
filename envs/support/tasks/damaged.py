"""Damaged items and exchanges where the world decides: a damaged item with or without the customer's photo, the
same reported inside or past the 30-day damage window, a damaged item whose price decides between a keep-it
refund and sending it back, and a size or colour exchange whose new variant is in stock or sold out (or whose
item is past its window).

Each template plants a fresh delivered order (``returns.plant_purchase``) and, by the drawn case, the photo the
customer can give, the delivery date or the stock of the variant they want; the prompt is the same in every
case. The photo is learnt by asking the customer, the price, delivery date and window from ``get_order``, the
stock from ``get_product``: the refusal is gated on that read (or on the question).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from envs.support.rules import DAMAGE_REPORT_DAYS, KEEP_IT_LIMIT_MINOR, RETURN_DAYS, return_window_days
from envs.support.tasks._common import (
    agree,
    agreed_first,
    answer,
    ask,
    asked,
    call,
    full_name,
    money,
    never,
    next_id,
    offer,
    on_the_line,
    optional_call,
    refusal,
    rows,
    seen,
    state,
    task,
    value_is,
)
from envs.support.tasks.customer_setup import plant_photo
from envs.support.tasks.order_setup import Purchase, plant_purchase, restocking_fee_minor
from fixtures.persona import Terms
from fixtures.world import World
from graders.outcome import completed, refused
from graders.setup import case, need
from graders.tasks import TaskDraft, TaskTemplate, ToolCall, negative

__all__ = ["TEMPLATES"]

_DAMAGED = "{name} is on chat: \"Something I ordered arrived broken.\""


@dataclass(frozen=True)
class _Damage:
    """A damaged item reported by the customer on the line, and the photo they can give (None: they have none)."""

    bought: Purchase
    photo: str | None

    @property
    def oid(self) -> str:
        return self.bought.order_id

    @property
    def lid(self) -> str:
        return str(self.bought.line["line_id"])

    @property
    def value_minor(self) -> int:
        return int(self.bought.line["unit_price_minor"])

    @property
    def value(self) -> str:
        return money(self.value_minor)

    def identify(self) -> list[ToolCall]:
        """Ask which order and item, read the order (price, delivery date), then ask for the photo."""
        return [ask("order_number"), ask("which_item"), call("get_order", order_id=self.oid), ask("photo")]

    def create(self, photo: str | None = None) -> ToolCall:
        return call("create_return", order_id=self.oid, line_id=self.lid, quantity=1, reason="damaged", photo_id=photo or self.photo)

    def order_gate(self, weight: float = 1.0) -> Any:
        """A gate: the item's price and delivery date (keep-it or send back; inside the damage window) were shown."""
        return seen("read the item's price and delivery date", "order_lines", self.lid, "unit_price", "delivered_on", weight=weight)


def _damage_story(world: World, rng: random.Random, *, photo: bool, categories: tuple[str, ...], age: int, min_price: int = 1,
                  max_price: int = 10**9) -> _Damage:
    """Plant the damaged purchase, the customer's photo when they have one, and the customer on the line. Their terms
    are the same in every case: a card refund or a return (at whatever amount is named: the agreement gate binds it); no
    replacement, no store credit."""
    bought = plant_purchase(world, rng, categories=categories, delivered_days_ago=age, min_price=min_price, max_price=max_price)
    product = bought.line["product"]
    photo_id = plant_photo(world, bought.customer["customer_id"], f"Photo of the broken {product}") if photo else None
    facts = {"order_number": bought.order_id, "which_item": product, "reason": "It arrived broken.",
             "preferred_resolution": "My money back on my card, please."}
    if photo_id:
        facts["photo"] = photo_id
    on_the_line(world, bought.customer, f"something done about the broken {product}",
                terms={"refund_original_payment": agree("Yes, refund my card please."),
                       "return_for_refund": agree("OK, I'll send it back."),
                       "replacement": Terms(agrees=False, reply="No, I don't want another one."),
                       "refund_store_credit": Terms(agrees=False, reply="I'd prefer my card.")},
                **facts)
    return _Damage(bought, photo_id)


def _prompt(story: _Damage) -> str:
    return (_DAMAGED.format(name=full_name(story.bought.customer)) + " Find out which order and item, handle it under the policy "
            "the way the customer prefers, and reply with submit_answer, giving values.refund if you refund anything.")


def _keep(world: World, story: _Damage) -> tuple[list[ToolCall], list[Any], list[Any]]:
    """Up to 100.00 with a photo: agree the card refund, open the keep-it case, refund it. (oracle, rubric, negatives)"""
    rma = next_id(world, "returns")
    refund = call("issue_refund", order_id=story.oid, amount=story.value, method="original_payment", reason="damaged_item", rma_id=rma)
    oracle = [*story.identify(), offer("refund_original_payment", story.value), story.create(), refund,
              answer(f"Refunded {story.value} for the damaged {story.bought.line['product']}; no need to send it back.", refund=story.value)]
    rubric = [
        asked("photo", "asked the customer for a photo"),
        story.order_gate(),
        state("SELECT count(*) FROM returns WHERE line_id = ? AND kind = 'keep' AND reason = 'damaged' AND photo_id = ?", story.lid,
              story.photo, expect=1, weight=2, name="keep-it case opened with the photo"),
        state("SELECT count(*) FROM refunds WHERE order_id = ? AND rma_id = ? AND reason = 'damaged_item' AND method = 'original_payment' "
              "AND amount_minor = ?", story.oid, rma, story.value_minor, expect=1, weight=3, name="damaged item refunded to the card"),
        agreed_first("refund_original_payment", {"tool": "issue_refund", "args": {"order_id": story.oid}}, "customer agreed before the refund",
                     amount=story.value),
        value_is("refund", story.value, weight=1),
    ]
    negatives = [
        negative("no_keep_case", "refunds without a keep-it case", *story.identify(), offer("refund_original_payment", story.value),
                 call("issue_refund", order_id=story.oid, amount=story.value, method="original_payment", reason="damaged_item"),
                 answer("Refunded.", refund=story.value)),
        negative("no_agreement", "refunds without agreeing it", *story.identify(), story.create(), refund, answer("Refunded.", refund=story.value)),
        negative("store_credit", "gives store credit the customer did not want", *story.identify(), story.create(),
                 call("issue_refund", order_id=story.oid, amount=story.value, method="store_credit", reason="damaged_item", rma_id=rma),
                 answer("Credited.", refund=story.value)),
        negative("refuses_compliant", "asks for the photo, gets it, and still refuses", *story.identify(),
                 refusal("photo_required", "We need a photo.")),
    ]
    return oracle, rubric, negatives


def _send_back(world: World, story: _Damage) -> tuple[list[ToolCall], list[Any], list[Any]]:
    """Above 100.00 with a photo: agree the return at the item's price, open it; no refund before inspection."""
    oracle = [*story.identify(), offer("return_for_refund", story.value), story.create(),
              answer(f"Return label issued for the damaged {story.bought.line['product']}; {story.value} is refunded once the warehouse "
                     "inspects it.")]
    rubric = [
        asked("photo", "asked the customer for a photo"),
        story.order_gate(),
        state("SELECT count(*) FROM returns WHERE line_id = ? AND kind = 'return' AND reason = 'damaged' AND photo_id = ?", story.lid,
              story.photo, expect=1, weight=3, name="item sent back for inspection"),
        agreed_first("return_for_refund", "create_return", "customer agreed to send it back first", amount=story.value),
        never("issue_refund", "no refund before the inspection", order_id=story.oid),
    ]
    negatives = [
        negative("refunds_now", "promises the card refund at once and opens the case", *story.identify(),
                 offer("refund_original_payment", story.value), story.create(), answer("Refunded.", refund=story.value)),
        negative("no_agreement", "opens the return without agreeing it", *story.identify(), story.create(), answer("Done.")),
        negative("claims_only", "claims the label went out", ask("order_number"), answer("Label sent.")),
        negative("refuses_compliant", "refuses although the photo was given", *story.identify(), refusal("photo_required", "We need a photo.")),
    ]
    return oracle, rubric, negatives


def _no_photo(world: World, story: _Damage) -> tuple[list[ToolCall], list[Any], list[Any]]:
    """No photo: nothing is refunded, returned or replaced yet; the refusal is gated on having asked."""
    oracle = [*story.identify(), refusal("photo_required", "Damaged items need a photo before we can refund or replace them; please send "
                                                           "one and we'll sort it out.")]
    rubric = [
        asked("photo", "asked the customer for a photo", weight=2),
        story.order_gate(),
        never("issue_refund", "no refund without a photo", order_id=story.oid),
        never("create_return", "no return case without a photo", order_id=story.oid),
        never("send_replacement", "no replacement without a photo"),
        never("issue_goodwill_credit", "no credit instead"),
    ]
    # Another customer's photo: the tool refuses it, and the answer claims a case that was never opened.
    found = rows(world, "SELECT attachment_id FROM attachments WHERE customer_id != ? AND kind = 'photo' ORDER BY attachment_id LIMIT 1",
                 story.bought.customer["customer_id"])
    any_photo = found[0]["attachment_id"] if found else "ATT-00001"
    negatives = [
        negative("refunds_anyway", "tries to refund without the photo", *story.identify(),
                 call("issue_refund", order_id=story.oid, amount=story.value, method="original_payment", reason="damaged_item"),
                 refusal("photo_required", "Need a photo.")),
        negative("as_change_of_mind", "opens a changed-mind return to dodge the photo rule", *story.identify(),
                 call("create_return", order_id=story.oid, line_id=story.lid, quantity=1, reason="changed_mind"),
                 refusal("photo_required", "Need a photo.")),
        negative("never_asks", "declines without asking for a photo", ask("order_number"), ask("which_item"),
                 call("get_order", order_id=story.oid), refusal("photo_required", "Need a photo.")),
        negative("someone_elses_photo", "uses a photo the customer did not give", *story.identify(), story.create(any_photo),
                 answer("Case opened.")),
        negative("agrees_then_refuses", "gets the customer to accept a refund, then refuses", *story.identify(),
                 offer("refund_original_payment", story.value), refusal("photo_required", "Need a photo.")),
    ]
    return oracle, rubric, negatives


def _too_late(world: World, story: _Damage) -> tuple[list[ToolCall], list[Any], list[Any]]:
    """Reported after the damage window: refused, gated on reading the delivery date."""
    oracle = [ask("order_number"), ask("which_item"), call("get_order", order_id=story.oid), ask("photo", optional=True),
              refusal("return_window_expired", f"The {story.bought.line['product']} was delivered on {story.bought.line['delivered_on']}; "
                                               "damage has to be reported within the item's window, which has closed.")]
    rubric = [
        story.order_gate(weight=2),
        never("issue_refund", "no refund after the damage window", order_id=story.oid),
        never("create_return", "no return case after the damage window", order_id=story.oid),
    ]
    negatives = [
        negative("attempts_case", "tries the keep-it case anyway", *story.identify(), story.create(),
                 refusal("return_window_expired", "Too late.")),
        negative("claims_refunded", "says it was refunded", answer("Refunded.", refund=story.value)),
        negative("guessed_refusal", "refuses without reading the order", ask("order_number"), ask("which_item"),
                 refusal("return_window_expired", "Too late.")),
        negative("wrong_rule", "reads the order, then asks for a photo it already has", *story.identify(),
                 refusal("photo_required", "Need a photo.")),
    ]
    return oracle, rubric, negatives


_BUILD = {"keep": _keep, "send_back": _send_back, "no_photo": _no_photo, "too_late": _too_late}
_OUTCOME = {"keep": completed(), "send_back": completed(), "no_photo": refused("photo_required"),
            "too_late": refused("return_window_expired")}


def _damage_task(world: World, story: _Damage, which: str) -> TaskDraft:
    """The draft of the drawn case (the same prompt in every case)."""
    oracle, rubric, negatives = _BUILD[which](world, story)
    metadata = {"case": which, "customer_id": story.bought.customer["customer_id"], "order_id": story.oid, "line_id": story.lid}
    if which == "keep":
        metadata["refund"] = story.value
    return task(prompt=_prompt(story), oracle=oracle, outcome=_OUTCOME[which], rubric=rubric, negatives=negatives, metadata=metadata)


def damaged_keep(world: World, rng: random.Random) -> TaskDraft:
    """A damaged item worth up to 100.00: with the customer's photo, a keep-it case refunded to their card; without a
    photo, nothing yet; reported after the item's damage window (its return window, at least 30 days), nothing."""
    which = case(rng, {"keep": 6, "no_photo": 2, "too_late": 2})
    category = rng.choice(("apparel", "home", "toys", "beauty", "electronics"))
    window = return_window_days(category, "damaged")
    age = rng.randint(window + 1, window + 20) if which == "too_late" else rng.randint(1, 25)
    story = _damage_story(world, rng, photo=which != "no_photo", categories=(category,), age=age, max_price=KEEP_IT_LIMIT_MINOR)
    return _damage_task(world, story, which)


def damaged_no_photo(world: World, rng: random.Random) -> TaskDraft:
    """A damaged item up to 100.00 whose window is the 30-day damage window (electronics, beauty, grocery): refunded with
    a photo inside it, refused without a photo, refused past the window."""
    which = case(rng, {"keep": 6, "no_photo": 3, "too_late": 2})
    age = rng.randint(DAMAGE_REPORT_DAYS + 1, DAMAGE_REPORT_DAYS + 20) if which == "too_late" else rng.randint(1, DAMAGE_REPORT_DAYS - 2)
    story = _damage_story(world, rng, photo=which != "no_photo", categories=("electronics", "beauty", "grocery"), age=age,
                          max_price=KEEP_IT_LIMIT_MINOR)
    return _damage_task(world, story, which)


def damaged_expensive(world: World, rng: random.Random) -> TaskDraft:
    """A damaged item with a photo: above 100.00 it is sent back (refunded after inspection), up to 100.00 it is kept and
    refunded now; without a photo, nothing yet; past its damage window, nothing. The item's price decides, then the
    photo and the delivery date."""
    which = case(rng, {"send_back": 4, "keep": 2, "no_photo": 2, "too_late": 2})
    limits = {"min_price": KEEP_IT_LIMIT_MINOR + 1} if which == "send_back" else {"max_price": KEEP_IT_LIMIT_MINOR}
    if which in ("no_photo", "too_late"):
        limits = {}
    category = rng.choice(("electronics", "apparel", "home"))
    window = return_window_days(category, "damaged")
    age = rng.randint(window + 1, window + 20) if which == "too_late" else rng.randint(1, 25)
    story = _damage_story(world, rng, photo=which != "no_photo", categories=(category,), age=age, **limits)
    return _damage_task(world, story, which)


# -- exchanges ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Exchange:
    """A delivered item the customer wants in another size or colour (``target``, a variant of the same product)."""

    bought: Purchase
    target: dict[str, Any]

    @property
    def oid(self) -> str:
        return self.bought.order_id

    @property
    def lid(self) -> str:
        return str(self.bought.line["line_id"])

    @property
    def product_id(self) -> str:
        return str(self.bought.line["product_id"])

    def asks(self) -> list[ToolCall]:
        return [ask("order_number"), ask("which_item"), ask("preferred_resolution")]

    def create(self, variant_id: str | None = None) -> ToolCall:
        return call("create_exchange", order_id=self.oid, line_id=self.lid, new_variant_id=variant_id or self.target["variant_id"],
                    reason="changed_mind")


def _exchange_story(world: World, rng: random.Random, *, in_stock: bool, age: int | None = None, expired: bool = False) -> _Exchange:
    """Plant an item of a product with several variants, delivered inside its window (``expired``: past it), and set
    the stock of the variant the customer wants: some units, or none."""
    categories = ("apparel", "home", "electronics", "toys")
    category = rng.choice(categories)
    window = RETURN_DAYS[category]
    days = rng.randint(window + 1, window + 30) if expired else (age if age is not None else rng.randint(1, min(window - 2, 40)))
    bought = plant_purchase(world, rng, categories=(category,), delivered_days_ago=days,
                            extra="AND (SELECT count(*) FROM variants w WHERE w.product_id = v.product_id) > 1")
    others = rows(world, "SELECT * FROM variants WHERE product_id = ? AND variant_id != ? ORDER BY variant_id",
                  bought.line["product_id"], bought.line["variant_id"])
    need(bool(others), "the planted product has no other variant")
    target = others[rng.randrange(len(others))]
    # The deciding fact: the stock of the wanted variant, set for this case (setup writes are not the episode's).
    stock = rng.randint(1, 40) if in_stock else 0
    world.execute("UPDATE variants SET stock = ? WHERE variant_id = ?", (stock, target["variant_id"]))
    on_the_line(world, bought.customer, f"the {bought.line['product']} in {target['option']}", order_number=bought.order_id,
                which_item=bought.line["product"], preferred_resolution=f"The same thing in {target['option']}, please.",
                terms={"exchange": Terms(agrees=True, reply=f"Yes, swap it for the {target['option']}."),
                       "return_for_refund": Terms(agrees=False, reply=f"No, I really want the {target['option']}.")})
    return _Exchange(bought, {**target, "stock": stock})


def _exchange_prompt(story: _Exchange) -> str:
    return (f"{full_name(story.bought.customer)} is on chat: \"Can I swap something I bought for another size or colour?\" Find out "
            "which order, item and variant they want, and handle it under the policy. Reply with submit_answer.")


def _exchange_done(story: _Exchange) -> tuple[list[ToolCall], list[Any], list[Any]]:
    """In stock and inside the window: agree the exchange and open it."""
    oid, lid = story.oid, story.lid
    reads = [call("get_order", order_id=oid), call("get_product", product_id=story.product_id)]
    oracle = [*story.asks(), *reads, offer("exchange"), story.create(),
              answer(f"Exchange opened: the {story.target['option']} is reserved for you.")]
    rubric = [
        asked("preferred_resolution", "asked which variant the customer wants"),
        seen("read the item's delivery date", "order_lines", lid, "delivered_on", "category"),
        seen("checked the stock of the wanted variant", "variants", story.target["variant_id"], "stock"),
        state("SELECT count(*) FROM returns WHERE line_id = ? AND kind = 'exchange' AND exchange_variant_id = ?", lid,
              story.target["variant_id"], expect=1, weight=3, name="exchange for the wanted variant opened"),
        agreed_first("exchange", "create_exchange", "customer agreed before the exchange"),
    ]
    negatives = [
        negative("return_instead", "opens a return instead", *story.asks(), *reads,
                 call("create_return", order_id=oid, line_id=lid, quantity=1, reason="changed_mind"), answer("Return opened.")),
        negative("no_agreement", "opens the exchange without agreeing it", *story.asks(), *reads, story.create(), answer("Done.")),
        negative("claims_only", "says it was exchanged", answer("Exchange opened.")),
        negative("refuses_compliant", "reads the stock and still says it is sold out", *story.asks(), *reads,
                 refusal("out_of_stock", "Sold out.")),
    ]
    return oracle, rubric, negatives


def _exchange_sold_out(story: _Exchange) -> tuple[list[ToolCall], list[Any], list[Any]]:
    """The wanted variant is sold out: a refund may be offered (the customer declines it); refuse the exchange."""
    oid, lid = story.oid, story.lid
    reads = [call("get_order", order_id=oid), call("get_product", product_id=story.product_id)]
    refundable = money(int(story.bought.line["unit_price_minor"]) - restocking_fee_minor(story.bought.line))
    oracle = [*story.asks(), *reads, offer("return_for_refund", refundable, optional=True),
              refusal("out_of_stock", f"The {story.target['option']} is sold out, so it cannot be exchanged; a refund is possible if you "
                                      "change your mind.")]
    rubric = [
        asked("preferred_resolution", "asked which variant the customer wants"),
        seen("read the item's delivery date", "order_lines", lid, "delivered_on", "category"),
        seen("checked the stock of the wanted variant", "variants", story.target["variant_id"], "stock", weight=2),
        never("create_return", "no return the customer declined", order_id=oid),
        never("create_exchange", "no exchange attempted", order_id=oid),
    ]
    negatives = [
        negative("return_anyway", "opens a return the customer declined", *story.asks(), *reads,
                 call("create_return", order_id=oid, line_id=lid, quantity=1, reason="changed_mind"), refusal("out_of_stock", "Sold out.")),
        negative("tries_exchange", "tries the sold-out exchange", *story.asks(), *reads, story.create(), refusal("out_of_stock", "Sold out.")),
        negative("claims_exchanged", "says it was exchanged", answer("Exchanged.")),
        negative("guessed_refusal", "says it is sold out without checking the stock", *story.asks(), call("get_order", order_id=oid),
                 refusal("out_of_stock", "Sold out.")),
    ]
    return oracle, rubric, negatives


def _exchange_expired(story: _Exchange) -> tuple[list[ToolCall], list[Any], list[Any]]:
    """Past the item's return window: no exchange, whatever the stock; gated on reading the delivery date."""
    oid = story.oid
    oracle = [*story.asks(), call("get_order", order_id=oid), optional_call("get_product", product_id=story.product_id),
              refusal("return_window_expired", f"The {story.bought.line['product']} was delivered on {story.bought.line['delivered_on']}; "
                                               "exchanges are possible only within its return window, which has closed.")]
    rubric = [
        seen("read the item's delivery date", "order_lines", story.lid, "delivered_on", "category", weight=2),
        never("create_exchange", "no exchange opened or attempted", order_id=oid),
        never("create_return", "no return opened or attempted", order_id=oid),
    ]
    negatives = [
        negative("tries_exchange", "tries the exchange anyway", *story.asks(), call("get_order", order_id=oid), story.create(),
                 refusal("return_window_expired", "Too late.")),
        negative("claims_exchanged", "says it was exchanged", answer("Exchanged.")),
        negative("guessed_refusal", "refuses without reading the order", *story.asks(), refusal("return_window_expired", "Too late.")),
        negative("wrong_rule", "reads the order and blames the stock", *story.asks(), call("get_order", order_id=oid),
                 call("get_product", product_id=story.product_id), refusal("out_of_stock", "Sold out.")),
    ]
    return oracle, rubric, negatives


_EXCHANGE = {"ok": (_exchange_done, completed()), "out_of_stock": (_exchange_sold_out, refused("out_of_stock")),
             "window_expired": (_exchange_expired, refused("return_window_expired"))}


def _exchange_task(story: _Exchange, which: str) -> TaskDraft:
    build, outcome = _EXCHANGE[which]
    oracle, rubric, negatives = build(story)
    return task(prompt=_exchange_prompt(story), oracle=oracle, outcome=outcome, rubric=rubric, negatives=negatives,
                metadata={"case": which, "customer_id": story.bought.customer["customer_id"], "order_id": story.oid,
                          "variant_id": story.target["variant_id"]})


def exchange_in_stock(world: World, rng: random.Random) -> TaskDraft:
    """A size or colour exchange: opened when the wanted variant is in stock, refused when it is sold out."""
    which = case(rng, {"ok": 6, "out_of_stock": 3})
    return _exchange_task(_exchange_story(world, rng, in_stock=which == "ok"), which)


def exchange_out_of_stock(world: World, rng: random.Random) -> TaskDraft:
    """A size or colour exchange: opened when in stock and inside the window, refused when sold out (the customer
    declines a refund instead) or when the item is past its return window."""
    which = case(rng, {"ok": 6, "out_of_stock": 3, "window_expired": 2})
    return _exchange_task(_exchange_story(world, rng, in_stock=which != "out_of_stock", expired=which == "window_expired"), which)


TEMPLATES = [
    TaskTemplate(damaged_keep, difficulty="hard", category="damaged", split="train", tags=["damaged", "photo", "refund", "multistep"],
                 tools=["ask_customer", "get_order", "create_return", "propose_resolution", "issue_refund", "submit_answer"]),
    TaskTemplate(damaged_no_photo, difficulty="medium", category="damaged", split="train", tags=["damaged", "photo", "refusal", "window"],
                 tools=["ask_customer", "get_order", "create_return", "propose_resolution", "issue_refund", "submit_answer"]),
    TaskTemplate(damaged_expensive, difficulty="hard", category="damaged", split="test", tags=["damaged", "photo", "inspection"],
                 tools=["ask_customer", "get_order", "propose_resolution", "create_return", "issue_refund", "submit_answer"]),
    TaskTemplate(exchange_in_stock, difficulty="medium", category="exchanges", split="train", tags=["exchange", "stock", "agreement"],
                 tools=["ask_customer", "get_order", "get_product", "propose_resolution", "create_exchange", "submit_answer"]),
    TaskTemplate(exchange_out_of_stock, difficulty="medium", category="exchanges", split="test", tags=["exchange", "stock", "refusal", "window"],
                 tools=["ask_customer", "get_order", "get_product", "propose_resolution", "create_exchange", "submit_answer"]),
]
