"""The episode clock: the agent's time and the provider's time are two budgets, and the right one is blamed."""

from __future__ import annotations

import time

import anyio
import anyio.to_thread

from clients.agents.timing import EpisodeClock


async def test_provider_waits_do_not_count_as_the_agents_time() -> None:
    # The agent's own 0.1 s is far inside its budget even on a busy machine; the wait alone is longer than it.
    clock = EpisodeClock(agent_budget=1.5, provider_budget=30.0)
    with anyio.fail_after(60), anyio.CancelScope() as scope:
        clock.start(scope)
        await anyio.sleep(0.05)
        with clock.waiting_on_provider():
            await anyio.sleep(2.0)  # more than the agent's whole budget, spent waiting
        await anyio.sleep(0.05)
    assert not scope.cancelled_caught
    assert clock.provider_seconds >= 2.0
    assert 0.1 <= clock.agent_seconds < clock.agent_budget < clock.provider_seconds


async def test_the_agents_own_time_runs_out_as_the_agents() -> None:
    clock = EpisodeClock(agent_budget=0.2, provider_budget=5.0)
    with anyio.fail_after(5), anyio.CancelScope() as scope:
        clock.start(scope)
        with clock.waiting_on_provider():
            await anyio.sleep(0.1)
        await anyio.sleep(5)
    assert scope.cancelled_caught and clock.settle() == "agent"


async def test_a_wait_past_the_provider_budget_is_the_providers() -> None:
    clock = EpisodeClock(agent_budget=30.0, provider_budget=0.2)
    with anyio.fail_after(60), anyio.CancelScope() as scope:
        clock.start(scope)
        with clock.waiting_on_provider():
            await anyio.sleep(0.1)
        with clock.waiting_on_provider():  # the budget is for all waits together: 0.1 s is left
            await anyio.sleep(3600)
    assert scope.cancelled_caught and clock.settle() == "provider"
    assert 0.2 <= clock.provider_seconds < 30  # cut at the budget, not at the end of the wait


async def test_an_agent_out_of_time_is_not_saved_by_a_wait() -> None:
    clock = EpisodeClock(agent_budget=0.05, provider_budget=5.0)
    with anyio.fail_after(5), anyio.CancelScope() as scope:
        clock.start(scope)
        await anyio.to_thread.run_sync(time.sleep, 0.1)  # busy past its deadline (not cancellable meanwhile)
        with clock.waiting_on_provider():
            await anyio.sleep(5)
    assert scope.cancelled_caught and clock.settle() == "agent"


async def test_an_unbound_clock_keeps_accounts_and_nested_waits_count_once() -> None:
    clock = EpisodeClock(agent_budget=1.0, provider_budget=1.0)
    started = anyio.current_time()
    with clock.waiting_on_provider():
        with clock.waiting_on_provider():
            await anyio.sleep(0.1)
        assert clock.provider_left() < 0.95
    elapsed = anyio.current_time() - started
    assert 0.1 <= clock.provider_seconds <= elapsed  # counted twice, it would be about twice what passed
