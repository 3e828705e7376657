"""Read answers remembered by the world's content: a read of the same content answers as before, a write makes the
next read run, and an answer that depends on anything besides the world and the call is never remembered."""

from __future__ import annotations

from typing import Any

import pytest

from servers.dispatch import call_tool
from servers.environment import Environment
from servers.episodes import EpisodeManager
from servers.read_cache import READS
from servers.tools import DomainError, ToolContext, tool
from tests.toy_env.fixture import fixture
from tests.toy_env.tools import TOOLS

RUNS: dict[str, int] = {}


def _ran(name: str) -> None:
    RUNS[name] = RUNS.get(name, 0) + 1


@tool()
async def balance_of(ctx: ToolContext, account_id: str) -> str:
    """An account's balance, or a refusal for an unknown account."""
    _ran("balance_of")
    rows = ctx.world.query("SELECT balance_minor FROM accounts WHERE id = ?", (account_id,))
    if not rows:
        raise DomainError("account_not_found", f"no account {account_id}")
    return str(rows[0]["balance_minor"])


@tool()
async def whoami(ctx: ToolContext) -> str:
    """The episode's id (an answer that differs per episode)."""
    _ran("whoami")
    return ctx.episode_id


@tool()
async def broken(ctx: ToolContext) -> str:
    """Always crashes (an internal error)."""
    _ran("broken")
    raise RuntimeError("boom")


@tool(pure=lambda: SWITCH["pure"])
async def sometimes(ctx: ToolContext) -> str:
    """Pure only while the switch says so."""
    _ran("sometimes")
    return "same"


SWITCH = {"pure": True}

environment = Environment(name="toy-reads", description="The toy bank with tools for the read cache.", fixture=fixture,
                          tools=[*TOOLS, balance_of, whoami, broken, sometimes])


@pytest.fixture
def manager() -> EpisodeManager:
    READS.clear()
    RUNS.clear()
    return EpisodeManager(environment, history=0)


async def _answer(manager: EpisodeManager, episode: Any, tool_name: str, **arguments: Any) -> tuple[Any, Any]:
    event = await call_tool(episode, tool_name, arguments)
    result = event.result["result"] if isinstance(event.result, dict) and "result" in event.result else event.result
    return result, event.error.code if event.error else None


async def test_the_same_read_of_the_same_content_runs_once_and_answers_the_same(manager: EpisodeManager) -> None:
    first, second = manager.create(), manager.create()
    assert await _answer(manager, first, "balance_of", account_id="acc-001") == await _answer(manager, second, "balance_of", account_id="acc-001")
    assert RUNS["balance_of"] == 1
    # a refusal is an answer too; other arguments are another read
    assert (await _answer(manager, first, "balance_of", account_id="acc-999"))[1] == "account_not_found"
    assert (await _answer(manager, second, "balance_of", account_id="acc-999"))[1] == "account_not_found"
    assert RUNS["balance_of"] == 2


async def test_a_write_makes_the_next_read_run_and_see_it(manager: EpisodeManager) -> None:
    episode, other = manager.create(), manager.create()
    before = await _answer(manager, episode, "balance_of", account_id="acc-001")
    episode.world.execute("UPDATE accounts SET balance_minor = 4242 WHERE id = 'acc-001'")
    assert await _answer(manager, episode, "balance_of", account_id="acc-001") == ("4242", None)
    assert await _answer(manager, other, "balance_of", account_id="acc-001") == before  # the other world is unchanged
    episode.world.execute("UPDATE accounts SET balance_minor = ? WHERE id = 'acc-001'", (int(before[0]),))
    assert await _answer(manager, episode, "balance_of", account_id="acc-001") == before  # the same content again
    assert RUNS["balance_of"] == 2


async def test_answers_that_depend_on_more_than_the_world_are_never_remembered(manager: EpisodeManager) -> None:
    first, second = manager.create(), manager.create()
    assert await _answer(manager, first, "whoami") == (first.id, None)
    assert await _answer(manager, second, "whoami") == (second.id, None)  # never another episode's
    for episode in (first, second):
        assert (await _answer(manager, episode, "broken"))[1] == "internal_error"
    SWITCH["pure"] = False
    try:
        for episode in (first, second):
            await _answer(manager, episode, "sometimes")
    finally:
        SWITCH["pure"] = True
    assert RUNS == {"whoami": 2, "broken": 2, "sometimes": 2}


async def test_an_episode_that_read_its_id_is_never_continued_past_that_read(manager: EpisodeManager) -> None:
    episode = manager.create()
    await call_tool(episode, "list_accounts", {})
    await call_tool(episode, "whoami", {})
    episode.call_keys = [("list_accounts", ("dict", ())), ("whoami", ("dict", ()))]
    episode._floors = [{}, {}]
    assert [key for key, _, _ in episode.played()] == [("list_accounts", ("dict", ()))]


async def test_reads_with_long_arguments_are_never_remembered(manager: EpisodeManager) -> None:
    # the cache's keys hold the arguments: an agent's thousand distinct 60 KB queries must not stay in memory
    first, second = manager.create(), manager.create()
    long_id = "acc-" + "9" * 3000
    for episode in (first, second):
        assert (await _answer(manager, episode, "balance_of", account_id=long_id))[1] == "account_not_found"
    assert RUNS["balance_of"] == 2
