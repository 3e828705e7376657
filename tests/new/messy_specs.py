"""Rules files for the messy databases, written from the README's "Your own database" section alone: only ``verify``
and ``actions`` (the rest of the spec comes from the spec.json ``toolgym new`` wrote)."""

from __future__ import annotations

__all__ = ["BILLING_RULES", "LIBRARY_RULES"]

BILLING_RULES = {
    "verify": {"entity": "account", "fields": ["billing_email", "phone"]},
    "actions": [
        {"name": "cancel_subscription", "kind": "transition", "entity": "subscription", "field": "status", "to": "canceled",
         "requires_verified": True, "description": "Cancel a subscription.",
         "rules": [{"check": "subscription.status in [active, trialing, past_due]", "code": "subscription_not_cancelable",
                    "message": "Only active, trialing or past-due subscriptions can be cancelled."},
                   {"check": "subscription.plan_code.seats < 100", "code": "enterprise_plan_contract",
                    "message": "Plans of 100 seats or more end by contract, not here."}]},
        {"name": "update_account_contact", "kind": "update", "entity": "account", "fields": ["billing_email", "phone"],
         "requires_verified": True, "description": "Change an account's billing e-mail or phone."},
        {"name": "record_payment", "kind": "create", "entity": "payment", "parent": "invoice_id", "fields": ["amount", "method"],
         "set": {"reference": "manual"}, "description": "Record a payment received for an invoice.",
         "rules": [{"check": "invoice.status in ['open', 'uncollectible']", "code": "invoice_not_payable",
                    "message": "Payments are recorded only on open or uncollectible invoices."},
                   {"check": "amount <= invoice.amount_due - sum(payments.amount)", "code": "payment_exceeds_due",
                    "message": "A payment never exceeds what is still due on the invoice."}]},
        {"name": "void_invoice", "kind": "transition", "entity": "invoice", "field": "status", "to": "void",
         "rules": [{"check": "invoice.status == 'open'", "code": "invoice_not_open", "message": "Only open invoices can be voided."},
                   {"check": "count(payments) == 0", "code": "invoice_has_payments",
                    "message": "An invoice with payments recorded cannot be voided."},
                   {"check": "invoice.subscription.status != 'canceled'", "code": "subscription_canceled",
                    "message": "Invoices of cancelled subscriptions stay as they are."}]},
    ],
}

LIBRARY_RULES = {
    "verify": {"entity": "member", "fields": ["email", "postcode"]},
    "actions": [
        {"name": "suspend_member", "kind": "transition", "entity": "member", "field": "status", "to": "suspended",
         "description": "Suspend a member who owes the library money.",
         "rules": [{"check": "member.status in [active]", "code": "member_not_active", "message": "Only active members can be suspended."},
                   {"check": "member.balance >= 2.5", "code": "balance_too_small",
                    "message": "Members are suspended only when they owe 2.50 or more."}]},
        {"name": "update_member_contact", "kind": "update", "entity": "member", "fields": ["phone", "postcode"],
         "requires_verified": True, "description": "Change a member's phone or postcode."},
        {"name": "lend_book", "kind": "create", "entity": "loan", "parent": "member_id", "fields": ["isbn"],
         "set": {"state": "open"}, "requires_verified": True, "description": "Lend a book to a member.",
         "rules": [{"check": "member.status == 'active'", "code": "member_not_active", "message": "Only active members borrow books."},
                   {"check": "count(loans) < 16", "code": "loan_limit_reached", "message": "A member has at most 15 loans on record."},
                   {"check": "member.balance <= 5", "code": "balance_owed", "message": "Members owing more than 5.00 cannot borrow."}]},
        {"name": "return_loan", "kind": "transition", "entity": "loan", "field": "state", "to": "returned",
         "rules": [{"check": "loan.state in [open, renewed, lost]", "code": "loan_not_open", "message": "Only open, renewed or lost loans can be returned."},
                   {"check": "loan.member.status != 'expired'", "code": "member_expired",
                    "message": "Loans of expired memberships are settled at the desk."}]},
    ],
}
