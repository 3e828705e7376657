"""The check's shortcuts change nothing it reports: trajectories continued from a kept world after a shared prefix
(``SetupCache.fork``), setups replayed from logged rows, the no-op baseline worked out on the oracle replay's
world, read answers remembered by the world's content (``servers/read_cache.py``) — the report is the one playing
every trajectory whole on freshly built worlds gives, byte for byte."""

from __future__ import annotations

from typing import Any

import pytest

from fixtures.world import World
from graders.metaeval import check_environment
from servers.read_cache import READS
from servers.registry import load_environment
from servers.setups import SetupCache

pytestmark = pytest.mark.slow(reason="each environment's check run twice on a few templates (about 20 s)")

TEMPLATES = {
    "finance": ["savings_to_checking", "large_wire", "lost_card_fraud"],
    "support": ["late_shipping_refund", "merge_accounts"],
    "workspace": ["close_issue", "share_page", "book_room"],
}


@pytest.mark.parametrize("env", sorted(TEMPLATES))
async def test_a_check_with_its_shortcuts_reports_what_one_without_them_does(env: str, monkeypatch: pytest.MonkeyPatch) -> None:
    environment = load_environment(env)
    forked: list[int] = []
    fork = SetupCache.fork

    def counting(self: SetupCache, *args: Any) -> Any:
        found = fork(self, *args)
        forked.append(found is not None)
        return found

    monkeypatch.setattr(SetupCache, "fork", counting)
    READS.clear()
    hits = READS.hits
    fast = await check_environment(environment, seeds=3, templates=TEMPLATES[env])
    assert sum(forked) > 50 and READS.hits > hits + 50  # the shortcuts were taken, many times

    for template in TEMPLATES[env]:  # fresh baselines: the slow run works them out its own way
        environment.task_template(template)._expected.clear()
        environment.task_template(template)._noop_satisfied.clear()
    monkeypatch.setattr(SetupCache, "fork", lambda self, *args: None)
    monkeypatch.setattr(SetupCache, "instantiate", lambda self, template, seed: self.environment.instantiate_task(template, seed))
    monkeypatch.setattr(SetupCache, "take_back", lambda self, *args, **kwargs: False)
    monkeypatch.setattr(World, "rewind_to_start", lambda self: False)  # so the no-op baseline gets a world of its own
    monkeypatch.setattr(READS, "key", lambda *args: None)  # every read runs
    slow = await check_environment(environment, seeds=3, templates=TEMPLATES[env])
    assert fast.summary() == slow.summary()
