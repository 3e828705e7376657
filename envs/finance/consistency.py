"""Domain checks of a finance instance's world against what its prompt says (``Environment.consistency``).

The kit's timeline lint (``graders/consistency.py``) already holds planted rows to the rows they reference (a charge
is not dated before the card it was made with, a dispute not before its charge). What it cannot know is what a
prompt *says* about the world: "they lost their card on 2026-03-27" is a claim about a card the setup picked, and a
card issued on 2026-03-28 makes the story impossible to play correctly (observed: lost_card_fraud, a card issued the
day after the loss and a fraud charge dated before the card existed). Each check reads the facts a template records
in its metadata (``lost_on``, ``frozen_on``, ``posted_on`` with the card or charge they are about) and returns every
contradiction as a sentence; ``toolgym check`` reports them as violations.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fixtures.world import World
    from graders.tasks import TaskInstance

__all__ = ["finance_consistency"]

_DATE = re.compile(r"\b(20[0-9]{2}-[01][0-9]-[0-3][0-9])\b")


def _one(world: World, sql: str, *params: Any) -> dict[str, Any] | None:
    found = world.query(sql, params)
    return dict(found[0]) if found else None


def _prompt_dates(world: World, instance: TaskInstance) -> list[str]:
    """A date the prompt names is never after the world's today (a story told on the frozen date)."""
    today = world.clock.today.isoformat()
    return [f"the prompt names {day}, after the world's today {today}" for day in _DATE.findall(instance.prompt) if day > today]


def _lost_card(world: World, instance: TaskInstance) -> list[str]:
    """A card reported lost on ``lost_on`` existed before it (issued earlier), and every charge disowned since is dated
    on or after the loss — the prompt's "they lost it on ..." against the card and the charges."""
    meta = instance.metadata
    lost, card_id = meta.get("lost_on"), meta.get("card_id")
    if not isinstance(lost, str) or not isinstance(card_id, str):
        return []
    problems = []
    card = _one(world, "SELECT issued_on FROM cards WHERE card_id = ?", card_id)
    if card is None:
        return [f"the lost card {card_id} is not in the world"]
    if card["issued_on"] >= lost:
        problems.append(f"card {card_id} was issued on {card['issued_on']}, not before it was lost on {lost}")
    for txn_id in meta.get("charges", []):
        charge = _one(world, "SELECT txn_date FROM transactions WHERE txn_id = ?", txn_id)
        if charge is None or charge["txn_date"] < lost:
            problems.append(f"the disowned charge {txn_id} is dated {charge and charge['txn_date']}, before the loss on {lost}")
    return problems


def _charge_after_freeze(world: World, instance: TaskInstance) -> list[str]:
    """A card frozen on ``frozen_on`` was issued before the freeze, is frozen, and the charge is dated after it."""
    meta = instance.metadata
    frozen, card_id, txn_id = meta.get("frozen_on"), meta.get("card_id"), meta.get("txn_id")
    if not isinstance(frozen, str) or not isinstance(card_id, str) or not isinstance(txn_id, str):
        return []
    problems = []
    card = _one(world, "SELECT issued_on, status, frozen_at FROM cards WHERE card_id = ?", card_id)
    charge = _one(world, "SELECT txn_date FROM transactions WHERE txn_id = ?", txn_id)
    if card is None or charge is None:
        return [f"the frozen card {card_id} or its charge {txn_id} is not in the world"]
    if card["issued_on"] >= frozen:
        problems.append(f"card {card_id} was issued on {card['issued_on']}, not before it was frozen on {frozen}")
    if card["status"] != "frozen" or not str(card["frozen_at"] or "").startswith(frozen):
        problems.append(f"card {card_id} is {card['status']} (frozen_at {card['frozen_at']}), not frozen on {frozen}")
    if charge["txn_date"] <= frozen:
        problems.append(f"the charge {txn_id} is dated {charge['txn_date']}, not after the freeze on {frozen}")
    return problems


def _posted_on(world: World, instance: TaskInstance) -> list[str]:
    """The posting date a task asks to report (``posted_on``) is the charge's own."""
    meta = instance.metadata
    posted, txn_id = meta.get("posted_on"), meta.get("txn_id")
    if not isinstance(posted, str) or not isinstance(txn_id, str):
        return []
    charge = _one(world, "SELECT posted_on FROM transactions WHERE txn_id = ?", txn_id)
    if charge is None or charge["posted_on"] != posted:
        return [f"the charge {txn_id} posted on {charge and charge['posted_on']}, the task says {posted}"]
    return []


_CHECKS: tuple[Callable[[World, TaskInstance], list[str]], ...] = (_prompt_dates, _lost_card, _charge_after_freeze, _posted_on)


def finance_consistency(world: World, instance: TaskInstance) -> list[str]:
    """Every contradiction between the instance's prompt (and the facts its template records) and its world."""
    return [problem for check in _CHECKS for problem in check(world, instance)]
