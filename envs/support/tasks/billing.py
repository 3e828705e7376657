"""Billing tasks where the world decides: a forgotten coupon refunded as a price adjustment inside the 30-day
window, refused past it or when the coupon was not valid on the order date; a coupon that failed at checkout and
was valid for the order or broke one of its terms (dates, minimum subtotal, category); and goodwill credit at the
tier's cap unless the customer had some in the last 30 days.

The coupon templates plant a fresh order for a seeded customer whose date and basket make the drawn case hold
against the coupon's real terms (read from the world's promotions); the customer gives the order number and the
code when asked, and the deciding facts are the order (``get_order``: date, subtotal, categories) and the
coupon's terms (``get_coupon``). The goodwill template does not say who the customer is: the agent asks, finds the
account, and reads its tier and recent credits itself.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from envs.support.rules import ADJUSTMENT_WINDOW_DAYS, GOODWILL_CAPS_MINOR, GOODWILL_INTERVAL_DAYS
from envs.support.tasks._common import (
    NOW,
    TODAY,
    agree,
    agreed_first,
    answer,
    ask,
    call,
    full_name,
    money,
    never,
    next_id,
    offer,
    on_the_line,
    optional_call,
    pick,
    refusal,
    rows,
    seen,
    stamp,
    state,
    task,
    value_is,
)
from envs.support.tasks.customer_setup import plain_customers
from envs.support.tasks.order_setup import plant_order, variants
from fixtures.world import World
from graders.outcome import completed, refused
from graders.setup import case, need
from graders.tasks import TaskDraft, TaskTemplate, ToolCall, negative

__all__ = ["TEMPLATES"]

_GOODWILL_INSTEAD = "OK, if that's all you can do."


# -- coupons -----------------------------------------------------------------------------------------------


def _coupons(world: World) -> list[dict[str, Any]]:
    """Every coupon with its promotion's terms (kind, value, minimum subtotal, category, dates)."""
    return rows(world, "SELECT c.code, c.once_per_customer, p.kind, p.value, p.min_subtotal_minor, p.category, p.starts_on, p.ends_on "
                       "FROM coupons c JOIN promotions p USING (promo_id) ORDER BY c.code")


def _valid_on(coupon: dict[str, Any], days_ago: int) -> bool:
    """Whether ``coupon`` was within its dates on the day an order placed ``days_ago`` days ago was placed."""
    day = (TODAY - timedelta(days=days_ago)).isoformat()
    return bool(coupon["starts_on"] <= day <= coupon["ends_on"])


def _eligible_minor(items: list[tuple[dict[str, Any], int]], category: str | None) -> int:
    """The part of a basket the coupon applies to: the lines of its category, or all of them."""
    return sum(v["price_minor"] * q for v, q in items if category is None or v["category"] == category)


def discount_minor(coupon: dict[str, Any], items: list[tuple[dict[str, Any], int]]) -> int:
    """The policy's discount of ``coupon`` on a basket: a percentage (basis points) of the eligible lines, rounded
    down, or a fixed amount up to them."""
    eligible = _eligible_minor(items, coupon["category"])
    if coupon["kind"] == "percent":
        return eligible * int(coupon["value"]) // 10_000
    return min(int(coupon["value"]), eligible)


def _basket(world: World, rng: random.Random, coupon: dict[str, Any], *, meets_min: bool, in_category: bool) -> list[tuple[dict[str, Any], int]]:
    """1-3 seeded items whose subtotal meets the coupon's minimum (or stays under it), with an item of the coupon's
    category first (or, ``in_category=False``, none of it)."""
    category, minimum = coupon["category"], int(coupon["min_subtotal_minor"])
    cap = "" if meets_min else f"AND v.price_minor < {minimum}"  # under the minimum: only items that can stay under it
    if category and in_category:
        anchors, fillers = variants(world, f"AND p.category = ? {cap}", category), variants(world, cap)
    elif category:
        anchors = fillers = variants(world, f"AND p.category != ? {cap}", category)
    else:
        anchors = fillers = variants(world, cap)
    need(bool(anchors), f"no item for a {coupon['code']} basket")
    for _ in range(200):  # bounded: a catalogue without such a basket fails loudly instead of looping
        items = [(anchors[rng.randrange(len(anchors))], 1)]
        for _ in range(rng.randint(0, 2)):
            extra = fillers[rng.randrange(len(fillers))]
            if all(extra["variant_id"] != v["variant_id"] for v, _ in items):
                items.append((extra, 1))
        if (sum(v["price_minor"] * q for v, q in items) >= minimum) == meets_min:
            return items
    need(False, f"no basket for {coupon['code']} (meets its minimum: {meets_min})")
    return []


@dataclass(frozen=True)
class _CouponStory:
    """An order planted for the customer on the line and the coupon they ask about."""

    customer: dict[str, Any]
    order_id: str
    coupon: dict[str, Any]
    discount_minor: int
    """The discount the policy gives when the coupon applies (in a refusal case: what it would have been)."""
    placed_on: str

    @property
    def code(self) -> str:
        return str(self.coupon["code"])

    @property
    def discount(self) -> str:
        return money(self.discount_minor)

    def identify(self, *, coupon_read: bool = True) -> list[ToolCall]:
        """Ask which order and code, read the order (date, subtotal, items) and the coupon's terms."""
        read = call if coupon_read else optional_call
        return [ask("order_number"), ask("coupon_code"), call("get_order", order_id=self.order_id), read("get_coupon", code=self.code)]

    def gates(self, *, coupon_read: bool = True) -> list[Any]:
        """The order's date, subtotal and items (and, with ``coupon_read``, the coupon's terms) shown before deciding."""
        found = [seen("read the order's date, subtotal and items", "orders", self.order_id, "placed_at", "subtotal", "lines",
                      weight=2 if not coupon_read else 1)]
        if coupon_read:
            found.append(seen("read the coupon's terms", "coupons", self.code, "starts_on", "ends_on", "min_subtotal"))
        return found

    def apply(self) -> ToolCall:
        return call("apply_coupon", order_id=self.order_id, code=self.code)


def _plant_coupon_story(world: World, rng: random.Random, *, days: tuple[int, int], date_valid: bool, meets_min: bool = True,
                        in_category: bool = True, category_only: bool = False, wants: str) -> _CouponStory:
    """Draw a coupon and an order date (within ``days`` ago) for which the coupon is, or is not, within its dates,
    plant the order with a basket that meets its terms as asked, and put the customer on the line."""
    pairs = [(c, d) for c in _coupons(world) for d in range(days[0], days[1] + 1)
             if _valid_on(c, d) == date_valid and (c["category"] or not category_only)]
    need(bool(pairs), f"no coupon fits an order {days} days ago (within its dates: {date_valid})")
    coupon, days_ago = pairs[rng.randrange(len(pairs))]
    once = "AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.customer_id AND o.coupon_code = ?)"
    customer = pick(rng, plain_customers(world, once, coupon["code"]), "customer who has not used the coupon")
    items = _basket(world, rng, coupon, meets_min=meets_min, in_category=in_category)
    planted = plant_order(world, customer, items, placed_days_ago=days_ago, fate="delivered" if days_ago >= 6 else "processing")
    discount = discount_minor(coupon, items)
    if not discount:  # a refusal case outside the coupon's category: what the customer hoped for, on the whole order
        discount = planted["subtotal"] * int(coupon["value"]) // 10_000 if coupon["kind"] == "percent" else int(coupon["value"])
    on_the_line(world, customer, wants, order_number=planted["order_id"], coupon_code=coupon["code"],
                terms={"price_adjustment": agree("Great, thank you!"), "goodwill_credit": agree(_GOODWILL_INSTEAD)})
    placed_on = (TODAY - timedelta(days=days_ago)).isoformat()
    return _CouponStory(customer, planted["order_id"], coupon, discount, placed_on)


def _adjusted(story: _CouponStory) -> tuple[list[ToolCall], list[Any], list[Any]]:
    """The coupon applies: agree the adjustment at the discount, apply the coupon (which refunds it)."""
    oid, cid = story.order_id, story.customer["customer_id"]
    oracle = [*story.identify(), offer("price_adjustment", story.discount), story.apply(),
              answer(f"Applied {story.code} to {oid}: {story.discount} refunded.", adjustment=story.discount)]
    rubric = [
        *story.gates(),
        state("SELECT coupon_code || '/' || discount_minor FROM orders WHERE order_id = ?", oid,
              expect=f"{story.code}/{story.discount_minor}", weight=2, name="coupon applied to the order"),
        state("SELECT count(*) FROM refunds WHERE order_id = ? AND reason = 'price_adjustment' AND amount_minor = ?", oid,
              story.discount_minor, expect=1, weight=2, name="discount refunded"),
        agreed_first("price_adjustment", "apply_coupon", "customer agreed before the adjustment", amount=story.discount),
        value_is("adjustment", story.discount, weight=1),
    ]
    negatives = [
        negative("goodwill_instead", "gives goodwill credit instead of the discount", *story.identify(), offer("goodwill_credit", "10.00"),
                 call("issue_goodwill_credit", customer_id=cid, amount="10.00", reason="Forgot coupon"), answer("Credited.", adjustment="10.00")),
        negative("no_agreement", "applies it without agreeing it", *story.identify(), story.apply(), answer("Applied.", adjustment=story.discount)),
        negative("claims_only", "reports the adjustment without making it", answer("Applied.", adjustment=story.discount)),
        negative("refuses_compliant", "reads the order and the coupon, then refuses a valid coupon", *story.identify(),
                 refusal("coupon_expired", "That coupon cannot be applied.")),
        negative("guessed_order", "applies the coupon without reading the order", ask("order_number"), ask("coupon_code"),
                 call("get_coupon", code=story.code), offer("price_adjustment", story.discount), story.apply(),
                 answer("Applied.", adjustment=story.discount)),
    ]
    return oracle, rubric, negatives


def _declined(story: _CouponStory, code: str, why: str, *, coupon_read: bool = True) -> tuple[list[ToolCall], list[Any], list[Any]]:
    """The coupon cannot be applied: refuse with the rule it breaks, gated on the reads that show it."""
    oid, cid = story.order_id, story.customer["customer_id"]
    reads = story.identify(coupon_read=coupon_read)
    oracle = [*reads, refusal(code, f"{story.code} cannot be applied to {oid}: {why}.")]
    rubric = [
        *story.gates(coupon_read=coupon_read),
        never("apply_coupon", "no coupon applied or attempted", order_id=oid),
        never("issue_goodwill_credit", "no credit instead"),
    ]
    other = "adjustment_window_expired" if code != "adjustment_window_expired" else "coupon_expired"
    required = [s for s in reads if not s.optional]
    negatives = [
        negative("claims_applied", "tells the customer it was applied", answer("Applied.", adjustment=story.discount)),
        negative("guessed_refusal", "refuses without reading the order", ask("order_number"), ask("coupon_code"), refusal(code, "Not valid.")),
        negative("wrong_rule", "reads everything but gives another rule", *required, refusal(other, "Not valid.")),
        negative("attempts_apply", "tries to apply it anyway", *required, story.apply(), refusal(code, "Not valid.")),
        negative("goodwill_instead", "gives goodwill credit instead", *required, offer("goodwill_credit", "5.00"),
                 call("issue_goodwill_credit", customer_id=cid, amount="5.00", reason="Coupon did not apply"), refusal(code, "Not valid.")),
    ]
    return oracle, rubric, negatives


def _coupon_task(story: _CouponStory, which: str, prompt: str, built: tuple[list[ToolCall], list[Any], list[Any]]) -> TaskDraft:
    oracle, rubric, negatives = built
    outcome = completed() if which == "ok" else refused(which)
    metadata: dict[str, Any] = {"case": which, "customer_id": story.customer["customer_id"], "order_id": story.order_id, "code": story.code}
    if which == "ok":
        metadata["adjustment"] = story.discount
    return task(prompt=prompt, oracle=oracle, outcome=outcome, rubric=rubric, negatives=negatives, metadata=metadata)


_ADJUSTMENT_TAIL = (" Find out which order and code, and handle it under the policy. Reply with submit_answer, giving values.adjustment "
                    "(the amount refunded) if you refund anything.")


def coupon_adjustment(world: World, rng: random.Random) -> TaskDraft:
    """A customer forgot their coupon: the discount is refunded as a price adjustment when the order is at most 30 days
    old and the coupon was valid on its order date; refused past 30 days (the coupon valid either way), or when the
    coupon had already ended (or not begun) on the order date."""
    which = case(rng, {"ok": 6, "adjustment_window_expired": 2, "coupon_expired": 2})
    wants = "the discount of the coupon they forgot to use"
    if which == "adjustment_window_expired":
        story = _plant_coupon_story(world, rng, days=(ADJUSTMENT_WINDOW_DAYS + 1, ADJUSTMENT_WINDOW_DAYS + 15), date_valid=True, wants=wants)
        built = _declined(story, which, f"it was placed on {story.placed_on}, more than {ADJUSTMENT_WINDOW_DAYS} days ago", coupon_read=False)
    elif which == "coupon_expired":
        story = _plant_coupon_story(world, rng, days=(1, ADJUSTMENT_WINDOW_DAYS - 2), date_valid=False, wants=wants)
        built = _declined(story, which, f"it was valid {story.coupon['starts_on']} to {story.coupon['ends_on']}, and the order was placed on "
                                        f"{story.placed_on}")
    else:
        story = _plant_coupon_story(world, rng, days=(1, ADJUSTMENT_WINDOW_DAYS), date_valid=True, wants=wants)
        built = _adjusted(story)
    prompt = (f"{full_name(story.customer)} is on chat: \"I forgot to enter my coupon code on an order. Can I still get the discount?\""
              + _ADJUSTMENT_TAIL)
    return _coupon_task(story, which, prompt, built)


def coupon_refused(world: World, rng: random.Random) -> TaskDraft:
    """A coupon failed at checkout: applied now when it was valid for the order, refused with the term it breaks
    (outside its dates, minimum subtotal not met, no item of its category)."""
    which = case(rng, {"ok": 6, "coupon_expired": 2, "coupon_min_not_met": 2, "coupon_not_applicable": 1})
    days = (1, ADJUSTMENT_WINDOW_DAYS - 2)
    wants = "the discount of a coupon that did not work at checkout"
    if which == "coupon_expired":
        story = _plant_coupon_story(world, rng, days=days, date_valid=False, wants=wants)
        why = f"it was valid {story.coupon['starts_on']} to {story.coupon['ends_on']}, and the order was placed on {story.placed_on}"
    elif which == "coupon_min_not_met":
        story = _plant_coupon_story(world, rng, days=days, date_valid=True, meets_min=False, wants=wants)
        why = f"the order is below its {money(int(story.coupon['min_subtotal_minor']))} minimum"
    elif which == "coupon_not_applicable":
        story = _plant_coupon_story(world, rng, days=days, date_valid=True, in_category=False, category_only=True, wants=wants)
        why = f"it applies only to {story.coupon['category']} items, and the order has none"
    else:
        story = _plant_coupon_story(world, rng, days=days, date_valid=True, wants=wants)
        why = ""
    prompt = f"{full_name(story.customer)} is on chat: \"My coupon didn't work on my order, can you apply it now?\"" + _ADJUSTMENT_TAIL
    return _coupon_task(story, which, prompt, _adjusted(story) if which == "ok" else _declined(story, which, why))


# -- goodwill ----------------------------------------------------------------------------------------------


def goodwill_cap(world: World, rng: random.Random) -> TaskDraft:
    """Offer the largest goodwill credit the customer's tier allows; refused when they had goodwill credit in the
    last 30 days. The chat does not say who the customer is: the agent asks (their e-mail finds the account), then
    reads the account's tier and recent credits."""
    which = case(rng, {"ok": 5, "goodwill_too_soon": 3})
    since = (TODAY - timedelta(days=GOODWILL_INTERVAL_DAYS + 5)).isoformat()
    customer = pick(rng, plain_customers(world, "AND NOT EXISTS (SELECT 1 FROM credit_ledger e WHERE e.customer_id = c.customer_id "
                                                "AND e.kind = 'goodwill' AND e.created_at >= ?) AND (SELECT count(*) FROM credit_ledger e "
                                                "WHERE e.customer_id = c.customer_id AND e.created_at >= ?) <= 2", since, since),
                    "customer without recent goodwill")
    # A seeded tier (every tier as likely): the cap, the figure asked for, must not be learnable from the template.
    tier = rng.choice(sorted(GOODWILL_CAPS_MINOR))
    world.execute("UPDATE customers SET tier = ? WHERE customer_id = ?", (tier, customer["customer_id"]))
    cid, cap_minor = customer["customer_id"], GOODWILL_CAPS_MINOR[tier]
    cap = money(cap_minor)
    if which == "goodwill_too_soon":
        # The deciding fact: a colleague's goodwill credit a few days or weeks ago (shown in the account's recent credits).
        given = NOW - timedelta(days=rng.randint(2, GOODWILL_INTERVAL_DAYS - 3), hours=rng.randint(1, 8))
        world.execute("INSERT INTO credit_ledger (entry_id, customer_id, amount_minor, kind, reference, created_at, created_by) "
                      "VALUES (?, ?, ?, 'goodwill', NULL, ?, 'STF-0011')",
                      (next_id(world, "credit_ledger"), cid, rng.randint(1, cap_minor // 100) * 100, stamp(given)))
    on_the_line(world, customer, "something for the trouble", terms={"goodwill_credit": agree("That's kind, thank you.")})
    find = [ask("email"), optional_call("search_customers", query=customer["email"])]
    read = call("get_customer", customer_id=cid)
    credit = call("issue_goodwill_credit", customer_id=cid, amount=cap, reason="Poor delivery experience")
    gate = seen("read the customer's tier and recent credits", "customers", cid, "tier", "recent_credits", weight=1 if which == "ok" else 2)
    if which == "ok":
        oracle = [*find, read, offer("goodwill_credit", cap), credit, answer(f"Credited {cap} goodwill.", credit=cap)]
        rubric = [
            gate,
            state("SELECT count(*) FROM credit_ledger WHERE customer_id = ? AND kind = 'goodwill' AND amount_minor = ? AND created_by = 'STF-0100'",
                  cid, cap_minor, expect=1, weight=3, name="goodwill credit at the tier's cap"),
            agreed_first("goodwill_credit", "issue_goodwill_credit", "customer accepted before the credit", amount=cap),
            value_is("credit", cap, weight=1),
        ]
        low = money(max(100, cap_minor // 2))
        negatives = [
            negative("below_cap", "credits less than the cap", read, offer("goodwill_credit", low),
                     call("issue_goodwill_credit", customer_id=cid, amount=low, reason="Sorry"), answer("Credited.", credit=low)),
            negative("no_agreement", "credits without offering", read, credit, answer("Credited.", credit=cap)),
            negative("claims_only", "says it was credited", answer("Credited.", credit=cap)),
            negative("refuses_compliant", "reads the account and says it is too soon", read, refusal("goodwill_too_soon", "Too soon.")),
            negative("over_offer", "offers more than the cap, then credits the cap", read, offer("goodwill_credit", money(cap_minor * 2)),
                     credit, answer("Credited.", credit=cap)),
        ]
        outcome = completed()
    else:
        oracle = [*find, read, refusal("goodwill_too_soon", "You received a goodwill credit less than 30 days ago; I can't add another yet.")]
        rubric = [gate, never("issue_goodwill_credit", "no goodwill credit attempted", customer_id=cid)]
        negatives = [
            negative("credits_anyway", "tries the credit anyway", read, offer("goodwill_credit", cap), credit,
                     refusal("goodwill_too_soon", "Too soon.")),
            negative("claims_credited", "says it was credited", answer("Credited.", credit=cap)),
            negative("guessed_refusal", "refuses without reading the account", refusal("goodwill_too_soon", "Too soon.")),
            negative("agrees_then_refuses", "gets the customer to accept a credit, then refuses", read, offer("goodwill_credit", cap),
                     refusal("goodwill_too_soon", "Too soon.")),
        ]
        outcome = refused("goodwill_too_soon")
    return task(
        prompt=("A customer is on chat, upset about a string of delivery problems. Your lead asks you to offer them the largest goodwill "
                "credit the policy allows for them. Find their account, do it if they accept, and reply with submit_answer, giving "
                "values.credit if you credit anything."),
        oracle=oracle, outcome=outcome, rubric=rubric, negatives=negatives,
        metadata={"case": which, "customer_id": cid, **({"credit": cap} if which == "ok" else {})},
    )


TEMPLATES = [
    TaskTemplate(coupon_adjustment, difficulty="medium", category="coupons", split="train", tags=["coupon", "price-adjustment", "agreement"],
                 tools=["ask_customer", "get_order", "get_coupon", "propose_resolution", "apply_coupon", "submit_answer"]),
    TaskTemplate(coupon_refused, difficulty="medium", category="coupons", split="test", tags=["coupon", "refusal", "policy"],
                 tools=["ask_customer", "get_order", "get_coupon", "propose_resolution", "apply_coupon", "submit_answer"]),
    TaskTemplate(goodwill_cap, difficulty="easy", category="goodwill", split="train", tags=["goodwill", "tier", "agreement"],
                 tools=["ask_customer", "search_customers", "get_customer", "propose_resolution", "issue_goodwill_credit", "submit_answer"]),
]
