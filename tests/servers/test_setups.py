"""Task setups built twice, then replayed from their logged rows: a replayed instance is the built one, search
indexes included; a setup that writes where the log cannot see is built every time instead."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from graders.grading import grade_episode
from graders.play import play_direct, play_new
from servers.episodes import EpisodeManager
from servers.registry import load_environment
from servers.setups import SetupCache

# a finance template whose setup plants a customer the oracle then finds with search_customers (a trigram index
# kept by triggers: its upkeep is not in the change log, so the replay must rebuild it through the same triggers)
TEMPLATE = "savings_to_checking"


@pytest.fixture(scope="module")
def finance() -> Any:
    return load_environment("finance")


async def _oracle_results(manager: EpisodeManager, seed: int, *, full: bool = False) -> tuple[list[Any], str, str]:
    episode = manager.create(task=TEMPLATE, seed=seed)
    assert episode.task is not None
    await play_direct(episode, episode.task.oracle)
    start, end = episode.record.header.start_hash, episode.world.hash()
    if full:  # O(database): once
        assert end == episode.world.full_hash()
    results = [(e.tool, e.result, e.error) for e in episode.record.tool_calls]
    manager.close(episode.id)
    manager.release(episode.id)
    return results, start, end


async def test_a_replayed_setup_is_the_built_one_search_index_included(finance: Any) -> None:
    seed = 3
    setups = SetupCache(finance)  # its own: the counts below are this test's builds only
    manager = EpisodeManager(finance, max_live=4, history=0, setups=setups)
    played = [await _oracle_results(manager, seed, full=n == 3) for n in range(4)]
    assert setups.built == 1 and setups.replayed + setups.reused == 3  # built once, then replayed or reused
    assert all(p == played[0] for p in played[1:])
    first_call = played[0][0][0]
    assert first_call[0] == "search_customers" and first_call[2] is None and first_call[1]["total"] >= 1
    manager.close_all()
    setups.clear()


@dataclass
class _WritesTheIndex:
    """A template whose setup also writes the search index directly (which the change log cannot see)."""

    inner: Any

    def instantiate(self, world: Any, seed: int) -> Any:
        instance = self.inner.instantiate(world, seed)
        world.execute("INSERT INTO customer_search(customer_search) VALUES ('rebuild')")
        return instance


@dataclass
class _Environment:
    """Finance, with that template in place of every other."""

    inner: Any

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def task_template(self, template_id: str) -> Any:
        return _WritesTheIndex(self.inner.task_template(template_id))


def test_a_setup_writing_what_the_log_cannot_see_is_built_every_time(finance: Any) -> None:
    setups = SetupCache(_Environment(finance))  # type: ignore[arg-type]
    for _ in range(4):
        world, _instance = setups.instantiate(TEMPLATE, 0)
        assert world.unlogged_writes() == {"main.customer_search"}
        world.close()  # not back to the pool: its connection remembers that write for its whole life
    assert (setups.built, setups.replayed, setups.reused) == (4, 0, 0)


@pytest.mark.parametrize(("confirm", "builds"), [(False, 1), (True, 2)])
def test_a_setup_writing_only_logged_rows_is_replayed(finance: Any, confirm: bool, builds: int) -> None:
    # confirm (toolgym check): replayed only once a second build agreed with the first
    setups = SetupCache(finance, confirm=confirm)
    hashes = []
    for _ in range(4):
        world, _instance = setups.instantiate(TEMPLATE, 1)
        assert world.unlogged_writes() == set()
        hashes.append(world.hash())
        world.release()
    assert (setups.built, setups.replayed) == (builds, 4 - builds)
    world, _instance = setups.instantiate(TEMPLATE, 1)
    assert world.hash() == world.full_hash() == hashes[0]  # O(database): once
    world.release()
    assert len(set(hashes)) == 1


def _same(events: list[Any]) -> list[dict[str, Any]]:
    """Events as a grade sees them (timings apart)."""
    return [e.model_dump(exclude={"started_ms", "duration_ms"}) for e in events]


async def _played(manager: EpisodeManager, calls: list[Any], seed: int) -> tuple[list[dict[str, Any]], str, Any]:
    episode = await play_new(manager, TEMPLATE, seed, calls)
    events = _same(episode.record.tool_calls)
    manager.close(episode.id)
    grade = await grade_episode(episode, judge_from_env=False)
    end = episode.record.closed.end_hash if episode.record.closed else ""
    manager.release(episode.id)
    return events, end, grade.model_copy(update={"episode_id": None}).to_json()


async def test_an_episode_continued_after_a_shared_prefix_is_the_episode_played_whole(finance: Any) -> None:
    seed = 0  # its oracle: search_customers, verify_identity, list_accounts, submit_answer
    forking = EpisodeManager(finance, max_live=4, history=0)
    whole = EpisodeManager(finance, max_live=4, history=0, reuse_setups=False)
    instance = finance.task_template(TEMPLATE).instantiate(finance.fixture.world(finance.task_fixture_seed), seed)
    oracle = list(instance.oracle)
    search, verify, accounts, answer = oracle
    lie = answer.model_copy(update={"arguments": {**answer.arguments, "outcome": "completed", "reason_code": None}})
    trajectories = [
        oracle,  # the first: played whole, its world kept with its calls
        [search, verify, accounts, lie],  # shares three calls
        [search, verify],  # all of it played before: nothing left to dispatch
        [search, {"tool": "verify_identity", "arguments": {**verify.arguments, "postcode": "00000"}}, verify, accounts],
        # after the first call only: the failed check mints its own verification id, from floors as they were then
        oracle,
    ]
    for calls in trajectories:
        assert await _played(forking, calls, seed) == await _played(whole, calls, seed)
    assert forking.setups is not None and forking.setups.forked >= 3
    forking.close_all()
    forking.setups.clear()


def test_kept_worlds_taken_back_and_given_out_in_any_order_stay_counted() -> None:
    from tests.toy_env import environment as toy

    # pooled worlds another test wrote an untracked table on (a TEMP one, say) never keep a setup: start without them
    toy.fixture.shrink_pool(idle=-1.0)
    setups = SetupCache(toy, idle=2)
    manager = EpisodeManager(toy, history=0, setups=setups)

    def cycle(*seeds: int) -> None:
        episodes = [manager.create("pay_back", seed) for seed in seeds]
        for episode in episodes:
            manager.close(episode.id)
            manager.release(episode.id)

    cycle(1, 1)  # seed 1: two kept worlds
    cycle(1)  # one of them taken and given back
    cycle(1, 1)  # both taken (seed 1 left with none), then given back
    one = manager.create("pay_back", 1)
    two = manager.create("pay_back", 1)  # seed 1 holds nothing kept now
    cycle(2, 2, 2)  # past the bound: the oldest go, never an empty entry
    for episode in (one, two):
        manager.close(episode.id)
        manager.release(episode.id)
    kept = setups._idle  # noqa: SLF001 - the bookkeeping under test
    assert setups._idle_count == sum(len(worlds) for worlds in kept.values()) <= 2  # noqa: SLF001
    assert all(kept.values())
    assert setups.reused >= 4
    setups.clear()


def test_a_template_replaced_in_its_environment_is_built_again(monkeypatch: pytest.MonkeyPatch) -> None:
    import copy

    from tests.toy_env import environment as toy

    setups = SetupCache.shared(toy)
    assert SetupCache.shared(toy) is setups and EpisodeManager(toy).setups is setups  # one per environment
    for _ in range(2):
        world, _ = setups.instantiate("pay_back", 9)
        world.release()
    built = setups.built
    monkeypatch.setitem(toy.task_templates(), "pay_back", copy.copy(toy.task_template("pay_back")))
    world, _ = setups.instantiate("pay_back", 9)
    world.release()
    assert setups.built == built + 1
