"""The finance task templates, one module per category; ``TEMPLATES`` collects them for the environment.

| module | category | what the agent must do |
|---|---|---|
| lookups | lookups | read exact figures (available balance, a month's spend, a position's value) |
"""

from __future__ import annotations

from envs.finance.tasks import lookups, reconciliation

__all__ = ["TEMPLATES"]

TEMPLATES = [*lookups.TEMPLATES, *reconciliation.TEMPLATES]
