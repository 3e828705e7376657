"""The finance environment's tools, one module per noun; ``TOOLS`` lists them in the order agents see."""

from __future__ import annotations

from envs.finance.tools.accounts import close_account, freeze_account, get_account, list_accounts, place_hold, release_hold
from envs.finance.tools.answer import submit_answer
from envs.finance.tools.approvals import approve_transfer, get_transfer, list_pending_approvals, reject_transfer
from envs.finance.tools.cards import freeze_card, list_cards, list_disputes, open_dispute, unfreeze_card
from envs.finance.tools.compliance import close_alert, escalate_alert, list_alerts
from envs.finance.tools.customers import add_note, get_customer, list_notes, search_customers, verify_identity
from envs.finance.tools.payments import add_payee, list_payees, send_wire, transfer_internal
from envs.finance.tools.trading import convert_currency, get_fx_rate, get_positions, get_quote, list_instruments, place_order
from envs.finance.tools.transactions import get_transaction, search_transactions

__all__ = ["TOOLS"]

TOOLS = [
    search_customers,
    get_customer,
    verify_identity,
    list_notes,
    add_note,
    list_accounts,
    get_account,
    search_transactions,
    get_transaction,
    place_hold,
    release_hold,
    freeze_account,
    close_account,
    list_payees,
    add_payee,
    transfer_internal,
    send_wire,
    list_pending_approvals,
    get_transfer,
    approve_transfer,
    reject_transfer,
    list_cards,
    freeze_card,
    unfreeze_card,
    list_disputes,
    open_dispute,
    list_instruments,
    get_quote,
    get_positions,
    place_order,
    get_fx_rate,
    convert_currency,
    list_alerts,
    escalate_alert,
    close_alert,
    submit_answer,
]
