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
