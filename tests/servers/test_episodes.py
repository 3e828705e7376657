"""The episode manager: create, cap, close, reap, release — and records that outlive their worlds."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from fixtures import EpisodeLimitReached, EpisodeNotFound, TaskError
from servers import EpisodeManager, read_record
from servers.dispatch import call_tool
from tests.toy_env import environment


async def test_free_play_episode_starts_from_the_template(toy_manager: EpisodeManager) -> None:
    episode = toy_manager.create(seed=2)
    assert episode.state == "live"
    assert episode.task is None
    assert episode.world.hash() == environment.fixture.template(2).hash
    assert episode.record.header.start_hash == episode.world.hash()
    assert episode.record.header.fixture_seed == 2
    assert episode.record.header.clock == environment.fixture.today.isoformat()


async def test_task_setup_is_not_in_the_diff(toy_manager: EpisodeManager) -> None:
    episode = toy_manager.create("pay_back", seed=1)
    assert episode.task is not None
    assert episode.record.header.prompt == episode.task.prompt
    assert "owes" in episode.record.header.prompt
    assert episode.world.hash() != environment.fixture.template(0).hash  # setup ran ...
    assert episode.world.diff() == []  # ... but is not the agent's doing
    assert episode.record.header.start_hash == episode.world.hash()


async def test_same_task_and_seed_give_the_same_start(toy_manager: EpisodeManager) -> None:
    first = toy_manager.create("pay_back", seed=5)
    second = toy_manager.create("pay_back", seed=5)
    other = toy_manager.create("pay_back", seed=6)
    assert first.id != second.id
    assert first.record.header.start_hash == second.record.header.start_hash
    assert first.task.prompt == second.task.prompt  # type: ignore[union-attr]
    assert other.task.prompt != first.task.prompt  # type: ignore[union-attr]
    assert other.record.header.start_hash != first.record.header.start_hash


async def test_unknown_task_is_refused_with_its_name(toy_manager: EpisodeManager) -> None:
    with pytest.raises(TaskError, match="no task template 'nope'.*pay_back"):
        toy_manager.create("nope")
    assert len(toy_manager) == 0


async def test_cap_raises_episode_limit_reached() -> None:
    manager = EpisodeManager(environment, max_live=2)
    manager.create()
    manager.create()
    with pytest.raises(EpisodeLimitReached, match="2 episodes are open"):
        manager.create()
    assert len(manager) == 2
    manager.release(manager.list()[0].id)
    manager.create()  # room again
    manager.close_all()


async def test_uncapped_episodes_take_no_room_from_capped_ones() -> None:
    manager = EpisodeManager(environment, max_live=1)
    others = [manager.create(capped=False) for _ in range(3)]  # e.g. /mcp sessions, capped by their own limit
    kept = manager.create()
    assert not others[0].capped and kept.capped and len(manager) == 4
    with pytest.raises(EpisodeLimitReached):
        manager.create()
    manager.create(capped=False)  # never refused by max_live
    manager.release(kept.id)
    manager.create()
    manager.close_all()


async def test_reap_closes_idle_and_releases_closed() -> None:
    manager = EpisodeManager(environment, idle_timeout=60, closed_ttl=300)
    idle, busy = manager.create(), manager.create()
    start = time.monotonic()
    busy.last_used = start + 1000  # "used" later than every simulated now below
    assert manager.reap(now=start + 61) == []
    assert idle.state == "closed" and busy.state == "live"
    assert idle.record.closed is not None and idle.record.closed.reason == "idle"
    assert manager.reap(now=idle.closed_at + 299) == []  # type: ignore[operator]
    assert manager.reap(now=idle.closed_at + 301) == [idle.id]  # type: ignore[operator]
    assert idle.released and idle.world.closed
    assert [e.id for e in manager.list()] == [busy.id]
    manager.close_all()


async def test_a_full_manager_reaps_before_refusing() -> None:
    manager = EpisodeManager(environment, max_live=1, closed_ttl=10)
    stale = manager.create()
    manager.close(stale.id)
    stale.closed_at -= 11  # type: ignore[operator]  # its grading grace period is over
    fresh = manager.create()  # the stale one is reaped to make room
    assert stale.released
    assert [e.id for e in manager.list()] == [fresh.id]
    manager.close_all()


async def test_record_is_readable_after_release(toy_manager: EpisodeManager) -> None:
    episode = toy_manager.create()
    await call_tool(episode, "get_account", {"account_id": "acc-001"})
    toy_manager.release(episode.id)
    record = toy_manager.record(episode.id)
    assert [e.tool for e in record.tool_calls] == ["get_account"]
    assert record.closed is not None
    with pytest.raises(EpisodeNotFound, match="released; its record is still readable"):
        toy_manager.get(episode.id)


async def test_release_history_is_bounded() -> None:
    manager = EpisodeManager(environment, history=2)
    ids = [manager.create().id for _ in range(3)]
    for ident in ids:
        manager.release(ident)
    with pytest.raises(EpisodeNotFound):
        manager.record(ids[0])
    assert manager.record(ids[2]).header.episode_id == ids[2]


async def test_release_history_is_bounded_in_bytes_and_counted_in_o1() -> None:
    """Issue 22: what a server remembers of released episodes is bounded in bytes, not only in count."""
    manager = EpisodeManager(environment, history=1000, history_bytes=3000)
    ids = []
    for _ in range(20):
        episode = manager.create()
        await call_tool(episode, "list_accounts", {})
        ids.append(episode.id)
        manager.release(episode.id)
    counts = manager.history_counts()
    assert 0 < counts["bytes"] <= 3000 and counts["max_bytes"] == 3000 and 0 < counts["records"] < 20
    assert manager.record(ids[-1]).header.episode_id == ids[-1]
    with pytest.raises(EpisodeNotFound):
        manager.record(ids[0])  # the oldest went first
    again = manager.create(episode_id=ids[-1])  # a retried episode reuses its id: counted once
    manager.release(again.id)
    assert manager.history_counts()["records"] == counts["records"]
    assert manager.capped_count == 0 and len(manager) == 0


async def test_unknown_id_is_episode_not_found(toy_manager: EpisodeManager) -> None:
    for operation in (toy_manager.get, toy_manager.record, toy_manager.close):
        with pytest.raises(EpisodeNotFound, match="no episode 'ep-missing'"):
            operation("ep-missing")
    toy_manager.release("ep-missing")  # idempotent: nothing to free


async def test_closed_episode_is_not_live(toy_manager: EpisodeManager) -> None:
    episode = toy_manager.create()
    toy_manager.close(episode.id)
    toy_manager.close(episode.id)  # idempotent
    assert toy_manager.get(episode.id).state == "closed"
    with pytest.raises(EpisodeNotFound, match="is closed"):
        toy_manager.get(episode.id, live=True)
    assert len([e for e in episode.record.events if e.type == "closed"]) == 1


async def test_record_dir_gets_one_complete_file_per_episode(tmp_path: Path) -> None:
    manager = EpisodeManager(environment, record_dir=tmp_path)
    episode = manager.create("pay_back", seed=2)
    await call_tool(episode, "transfer", {"from_account": "acc-001", "to_account": "acc-002", "amount": "1.00"})
    manager.close(episode.id)
    record = read_record(tmp_path / f"{episode.id}.jsonl", expect_env="toy", require_closed=True)
    assert record.header.task == "pay_back"
    assert [c.tool for c in record.tool_calls] == ["transfer"]
    assert record.closed is not None and record.closed.end_hash == episode.world.hash()
    manager.close_all()


async def test_release_hooks_run(toy_manager: EpisodeManager) -> None:
    seen: list[str] = []
    toy_manager.on_release.append(lambda ep: seen.append(ep.id))
    episode = toy_manager.create()
    toy_manager.release(episode.id)
    toy_manager.release(episode.id)
    assert seen == [episode.id]


async def test_info_summarises_an_episode(toy_manager: EpisodeManager) -> None:
    episode = toy_manager.create("pay_back", seed=3)
    await call_tool(episode, "list_accounts", {})
    info = toy_manager.info(episode)
    assert info["id"] == episode.id and info["env"] == "toy" and info["state"] == "live"
    assert info["task"] == "pay_back" and info["seed"] == 3 and info["tool_calls"] == 1
