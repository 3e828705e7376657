"""The finance task templates, one module per category; ``TEMPLATES`` collects them for the environment.

| module | category | what the agent must do |
|---|---|---|
| lookups | lookups | read exact figures: available balance, a month's spend, a position's and a portfolio's value, a wire's status |
| reconciliation | reconciliation | dispute a planted duplicate (second charge only), foreign fraud, a charge after a freeze; decline a late dispute |
| payments | payments | internal transfers computed from available balances; refuse to split a wire around a limit |
| wires | wires | wires after verification, dual approval above USD 10,000, a failed verification, an unverified payee, recording an approval |
| trading | trading | suitable buys, declining an unsuitable one, selling just enough; (multistep) a rebalance |
| fx | fx | quotes and conversions at the customer rate, the smallest conversion that covers a need |
| accounts | accounts | close savings, freeze on takeover, release the right hold, unfreeze a card |
| multistep | multistep | 8+ calls: a lost card with two fraudulent charges, closing a brokerage account, triaging two alerts |
| refusals | refusals | decline under the policy: four eyes, an approval limit, expired KYC, a compliance hold |
| injection | injection | ignore instructions planted in a memo, a payee name or a staff note |

What several of them share lives in modules of its own (no template module imports another):

| module | what it holds (used by) |
|---|---|
| _common | what every template uses: the world's staff and clock, picking rows, the standard calls (verify, answer, refusal) and criteria (a gate on what was seen, an asked figure in its currency), planting ledger rows, notes, payees, pending wires and alerts, naming a customer as a person would (one whose records keep their timeline), the twin in which the caller's ID digits do not match |
| customer_setup | a fresh customer per instance with accounts, cards, cheque holds, freezes, payees and an earlier wire; amounts drawn around a balance (payments, accounts, fx, injection) |
| wire_setup | the customer's wire request, the accounts and payees it involves, amounts around the USD threshold, an earlier wire today, a pending debit, a wire in the approvals queue (wires, refusals, injection) |
| wire_drafts | the twins a wire request or an approval ends in: sent or refused, recorded or refused (wires, refusals) |
| charge_setup | card accounts (with a card issued before the story) and charges, a planted duplicate or open dispute, the gate that the deciding charge was seen (reconciliation, multistep) |
| wealth_setup | a wealth client with cash and holdings, the facts a trade turns on (risk profile, KYC, cash, freeze), last closes (trading, multistep) |
| lookup_setup | the figures a look-up asks about: a held cheque, a card authorisation, a charge in a month, a decided wire (lookups) |
| checks | custom rubric checks (``CustomCheck``) for what the built-in criteria cannot say |

Every template picks its subject from the world with its rng, plants its setup, and computes its oracle,
rubric and negatives from what it read; ``toolgym check finance`` proves each one (oracle 1.0, no-op and
negatives fail, deterministic). ``split`` keeps about 30% of the templates for evaluation only.
"""

from __future__ import annotations

from envs.finance.tasks import (
    accounts,
    fx,
    injection,
    lookups,
    multistep,
    payments,
    reconciliation,
    refusals,
    trading,
    wires,
)

__all__ = ["TEMPLATES"]

TEMPLATES = [
    *lookups.TEMPLATES,
    *reconciliation.TEMPLATES,
    *payments.TEMPLATES,
    *wires.TEMPLATES,
    *trading.TEMPLATES,
    *fx.TEMPLATES,
    *accounts.TEMPLATES,
    *multistep.TEMPLATES,
    *refusals.TEMPLATES,
    *injection.TEMPLATES,
]
