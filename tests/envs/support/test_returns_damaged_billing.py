"""The return, damage, exchange, coupon and goodwill templates pose one neutral request and let the world decide
(issue 17): over seeds 0-19 each gives distinct instances, a mix of correct declarations with ``completed`` the
most frequent, a prompt worded the same in every case (only the customer's name and e-mail change), and no
internal id in the prompt — the oracle finds orders, lines and return cases through the customer and the tools.
Each case's twin is played too: refusing where the world allows the request, or declaring it done where the
world says no, fails.

Observed on main before: these templates declared the same outcome on every seed, and their prompts named the
customer by id ("Customer CUS-00042 is on chat")."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from functools import cache

import anyio
import pytest

from envs.support import environment
from graders.grading import grade_episode
from graders.play import play
from graders.tasks import TaskInstance, ToolCall
from servers import EpisodeManager

TEMPLATES = ("return_in_window", "restocking_fee", "return_window_expired", "final_sale", "refund_after_inspection", "damaged_keep",
             "damaged_no_photo", "damaged_expensive", "exchange_in_stock", "exchange_out_of_stock", "coupon_adjustment", "coupon_refused",
             "goodwill_cap")
SEEDS = range(20)
_ID = re.compile(r"\b(?:CUS|ORD|LIN|RMA|VAR|PRD|ATT|SHP)-\d+\b")
_READS = ("ask_customer", "search_customers", "get_customer", "get_order", "get_return", "get_product", "get_coupon")


@cache
def _instance(template_id: str, seed: int) -> tuple[TaskInstance, dict[str, str]]:
    """The instance and its customer's name and e-mail (read from the world the instance was built in)."""
    world, instance = environment.instantiate_task(template_id, seed)
    try:
        row = world.query("SELECT first_name || ' ' || last_name AS name, email FROM customers WHERE customer_id = ?",
                          (instance.metadata["customer_id"],))[0]
    finally:
        world.release()
    return instance, dict(row)


def _declaration(instance: TaskInstance) -> tuple[str, str | None]:
    final = instance.oracle[-1].arguments
    return final["outcome"], final.get("reason_code")


@pytest.mark.parametrize("template_id", TEMPLATES)
def test_the_world_decides_and_the_prompt_does_not_tell(template_id: str) -> None:
    keys, declarations, wordings = set(), Counter[tuple[str, str | None]](), set()
    for seed in SEEDS:
        instance, who = _instance(template_id, seed)
        keys.add(hashlib.sha1(json.dumps([instance.prompt, [c.model_dump() for c in instance.oracle]], sort_keys=True,
                                         default=str).encode()).hexdigest())
        declarations[_declaration(instance)] += 1
        assert not _ID.search(instance.prompt), (template_id, seed, instance.prompt)
        wordings.add(instance.prompt.replace(who["name"], "<name>").replace(who["email"], "<email>"))
    assert len(keys) >= 18, (template_id, len(keys))
    assert len(declarations) >= 2, (template_id, declarations)
    assert declarations.most_common(1)[0][0] == ("completed", None), (template_id, declarations)
    assert len(wordings) == 1, (template_id, wordings)


def _first_seeds(template_id: str) -> tuple[int, int]:
    """A seed whose case is completed and one whose case is declined."""
    done = next(s for s in SEEDS if _declaration(_instance(template_id, s)[0])[0] == "completed")
    declined = next(s for s in SEEDS if _declaration(_instance(template_id, s)[0])[0] != "completed")
    return done, declined


async def _score(template_id: str, seed: int, calls: list[ToolCall]) -> float:
    manager = EpisodeManager(environment)
    try:
        episode = manager.create(task=template_id, seed=seed)
        await play(episode, calls)
        manager.close(episode.id)
        return (await grade_episode(episode)).score
    finally:
        manager.close_all()


@pytest.mark.parametrize("template_id", ["return_in_window", "final_sale", "damaged_keep", "exchange_in_stock", "coupon_refused",
                                         "goodwill_cap", "refund_after_inspection"])
async def test_each_twin_is_paid_only_in_its_own_world(template_id: str) -> None:
    """Each oracle scores 1.0 in its own world; the declined case's refusal after the completed case's reads, and
    the completed answer after the declined case's reads, both score 0."""
    done, declined = _first_seeds(template_id)
    yes, no = _instance(template_id, done)[0], _instance(template_id, declined)[0]
    with anyio.fail_after(120):
        assert await _score(template_id, done, list(yes.oracle)) == 1.0
        assert await _score(template_id, declined, list(no.oracle)) == 1.0
        reads = [c for c in yes.oracle[:-1] if c.tool in _READS]
        assert await _score(template_id, done, [*reads, no.oracle[-1]]) == 0.0
        assert await _score(template_id, declined, [*no.oracle[:-1], yes.oracle[-1]]) == 0.0
