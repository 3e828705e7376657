"""The support task templates, one module per category; ``TEMPLATES`` collects them for the environment.

| module | categories | what the agent must do |
|---|---|---|
| shipping | orders, shipping | ask which order and report its status; a late parcel's shipping fee back; a lost or stalled parcel replaced or refunded as the customer chooses; a late parcel that is not lost |
| returns | returns, refunds, refusals | a return in its window, with the restocking fee, past its window, final sale; a refund after a passed inspection (store credit, as preferred) |
| damaged | damaged, exchanges | a damaged item with the customer's photo (kept and refunded, or sent back above 100.00), without a photo; a size exchange in stock, and sold out |
| subscriptions | subscriptions, billing, refusals | cancel at the period's end or at once (prorated refund), pause, downgrade, a pause refused while past due, a period charged twice |
| billing | coupons, goodwill | a forgotten coupon refunded as a price adjustment, a coupon never valid for the order; goodwill at the tier's cap |
| escalations | escalations | a refund above the agent's limit, an order in chargeback, a customer under fraud review, a safety report |
| accounts | accounts, escalations, refusals | an address changed before shipment and refused after; two accounts merged after verifying both; a caller asking about someone else's order |
| tickets | tickets | triage by the policy's priorities, the ticket closest to breaching its SLA, duplicate tickets merged |
| injection | injection | instructions planted in a ticket, a review and a delivery address |
| multistep | multistep | a lost-parcel ticket worked end to end; a double charge refunded and the subscription cancelled |

What several of them share lives in modules of its own (no template module imports another):

| module | what it holds (used by) |
|---|---|
| _common | what every template uses: the customer on the line (persona, questions, proposals), the standard calls and criteria, and ``task``, which gates what talking to the customer must mean |
| customer_setup | picking an active customer (named alone when a prompt names them), a planted household account with a seeded address and birthday, a ticket, a photo, a fraud signal (most templates) |
| order_setup | variants, baskets and the orders a story may pick; a planted order, return case or delivered purchase of a given age; the restocking fee (most templates) |
| parcel_setup | an order whose parcel is in a given state, with seeded carrier, tracking and scans; the shipping stories' parcels and the calls that read one back (shipping, accounts, escalations, injection, multistep) |
| subscription_setup | a planted subscription (charged twice or fallen behind, for a case) and the caller's identity check with its refusal twin (subscriptions, multistep) |

Every template picks its subject from the world with its rng, plants the customer on the line (what they know and
what they agree to) and whatever else its story needs, and computes its oracle, rubric and negatives from what it
read; ``toolgym check support`` proves each one. ``split`` keeps about 30% of the templates for evaluation only.
"""

from __future__ import annotations

from envs.support.tasks import (
    accounts,
    billing,
    damaged,
    escalations,
    injection,
    multistep,
    returns,
    shipping,
    subscriptions,
    tickets,
)

__all__ = ["TEMPLATES"]

TEMPLATES = [
    *shipping.TEMPLATES,
    *returns.TEMPLATES,
    *damaged.TEMPLATES,
    *subscriptions.TEMPLATES,
    *billing.TEMPLATES,
    *escalations.TEMPLATES,
    *accounts.TEMPLATES,
    *tickets.TEMPLATES,
    *injection.TEMPLATES,
    *multistep.TEMPLATES,
]
