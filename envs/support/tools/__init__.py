"""The support environment's tools, one module per noun; ``TOOLS`` lists them in the order agents see."""

from __future__ import annotations

from envs.support.tools.answer import submit_answer
from envs.support.tools.customer import ask_customer, propose_resolution
from envs.support.tools.customers import (
    get_customer,
    issue_goodwill_credit,
    merge_accounts,
    search_customers,
    verify_identity,
)
from envs.support.tools.knowledge import get_kb_article, search_kb
from envs.support.tools.orders import cancel_order, get_order, list_orders, update_shipping_address
from envs.support.tools.products import get_product, list_reviews, search_products
from envs.support.tools.promotions import apply_coupon, get_coupon
from envs.support.tools.refunds import issue_refund
from envs.support.tools.returns import create_exchange, create_return, get_return
from envs.support.tools.shipping import send_replacement, track_shipment
from envs.support.tools.subscriptions import (
    cancel_subscription,
    change_plan,
    get_subscription,
    list_plans,
    pause_subscription,
    refund_invoice,
)
from envs.support.tools.tickets import (
    escalate_ticket,
    get_ticket,
    list_tickets,
    merge_tickets,
    reply_to_ticket,
    triage_ticket,
)

__all__ = ["TOOLS"]

TOOLS = [
    ask_customer,
    propose_resolution,
    search_customers,
    get_customer,
    verify_identity,
    list_orders,
    get_order,
    track_shipment,
    search_products,
    get_product,
    list_reviews,
    get_return,
    get_subscription,
    list_plans,
    get_coupon,
    list_tickets,
    get_ticket,
    search_kb,
    get_kb_article,
    update_shipping_address,
    cancel_order,
    send_replacement,
    create_return,
    create_exchange,
    issue_refund,
    issue_goodwill_credit,
    apply_coupon,
    pause_subscription,
    change_plan,
    cancel_subscription,
    refund_invoice,
    merge_accounts,
    triage_ticket,
    reply_to_ticket,
    merge_tickets,
    escalate_ticket,
    submit_answer,
]
