"""The RL API: prompt, OpenAI tool schemas, steps answered in process or through a real in-memory MCP client, reward."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from clients.rl import Gym, Transport, open_episode, open_gym
from fixtures.errors import EnvironmentNotFound, TaskError
from servers.episodes import EpisodeManager
from tests.clients.toyenv import environment


TRANSPORTS = pytest.mark.parametrize("transport", ["direct", "memory"])


@TRANSPORTS
async def test_oracle_steps_earn_the_full_reward(transport: Transport) -> None:
    world, instance = environment.instantiate_task("pay_back", 4)
    world.close()
    async with open_episode(environment, task="pay_back", seed=4, transport=transport) as ep:
        assert ep.prompt == instance.prompt
        names = {t["function"]["name"] for t in ep.tools}
        assert names == {"list_accounts", "get_account", "transfer", "submit_answer", "flaky_balance"}
        transfer = next(t for t in ep.tools if t["function"]["name"] == "transfer")["function"]
        assert transfer["parameters"]["required"] == ["from_account", "to_account", "amount"]
        for step in instance.oracle:
            obs = await ep.step(step.tool, step.arguments)
            assert not obs.is_error, obs.text
        assert ep.steps == 2
        done = await ep.finish()
        assert done.reward == 1.0 and done.passed and done.grade.template_id == "pay_back"
        assert await ep.finish() is done
        with pytest.raises(RuntimeError, match="is finished"):
            await ep.step("list_accounts", {})


@TRANSPORTS
async def test_errors_are_observations_not_exceptions(transport: Transport) -> None:
    async with open_episode(environment, task="report_balance", seed=0, transport=transport) as ep:
        bad_json = await ep.step("get_account", '{"account_id": ')
        assert bad_json.is_error and json.loads(bad_json.text)["error"] == "invalid_arguments"
        not_object = await ep.step("get_account", "[1]")
        assert not_object.is_error and "JSON object" in json.loads(not_object.text)["message"]
        refused = await ep.step("get_account", '{"account_id": "acc-999"}')
        assert refused.is_error and json.loads(refused.text)["error"] == "account_not_found"
        invalid = await ep.step("get_account", {"account_id": 5})
        assert invalid.is_error and json.loads(invalid.text)["error"] == "invalid_arguments"
        ok = await ep.step("get_account", {"account_id": "acc-001"})
        assert not ok.is_error and ok.structured["id"] == "acc-001"
        ep.log_message("assistant", "checking", usage={"prompt": 3, "completion": 1, "total": 4})
        assert [c.tool for c in ep.record.tool_calls] == ["get_account", "get_account", "get_account"]  # bad JSON never reached it
        done = await ep.finish()
        assert done.reward < 1.0 and not done.passed


async def test_episodes_are_isolated_and_released() -> None:
    manager = EpisodeManager(environment)
    async with open_episode(environment, task="pay_back", seed=1, manager=manager) as first, open_episode(
        environment, task="pay_back", seed=1, manager=manager
    ) as second:
        world, instance = environment.instantiate_task("pay_back", 1)
        world.close()
        for step in instance.oracle:
            await first.step(step.tool, step.arguments)
        assert len(manager) == 2
        assert (await first.finish()).grade.criteria[0].passed
        assert not (await second.finish()).grade.criteria[0].passed
    assert len(manager) == 0


async def test_bad_names_are_clear_errors() -> None:
    with pytest.raises(EnvironmentNotFound, match="no environment 'nope'"):
        async with open_episode("nope"):
            pass
    with pytest.raises(TaskError, match="has no task template 'nope'"):
        async with open_episode(environment, task="nope"):
            pass
    async with open_episode(environment) as free:
        assert free.prompt == ""
        with pytest.raises(TaskError, match="free play"):
            await free.finish()
    with pytest.raises(ValueError, match="transport is 'direct' or 'memory'"):
        async with open_episode(environment, task="pay_back", transport="http"):  # type: ignore[arg-type]
            pass
    with pytest.raises(ValueError, match="transport is 'direct' or 'memory'"):
        async with open_gym(environment, transport="stdio"):  # type: ignore[arg-type]
            pass


@TRANSPORTS
async def test_a_gym_shares_one_client_between_concurrent_isolated_episodes(transport: Transport) -> None:
    rewards: dict[int, float] = {}

    async def play(gym: Gym, seed: int, solve: bool) -> None:
        world, instance = environment.instantiate_task("pay_back", seed)
        world.close()
        async with gym.episode("pay_back", seed) as ep:
            assert ep.prompt == instance.prompt
            if solve:
                for step in instance.oracle:
                    obs = await ep.step(step.tool, step.arguments)
                    assert not obs.is_error, obs.text
            else:
                await ep.step("list_accounts", {})
            assert [c.tool for c in ep.record.tool_calls] == ([s.tool for s in instance.oracle] if solve else ["list_accounts"])
            rewards[seed] = (await ep.finish()).reward

    with anyio.fail_after(30):
        async with open_gym(environment, transport=transport) as gym:
            async with anyio.create_task_group() as group:
                for seed in range(6):
                    group.start_soon(play, gym, seed, seed % 2 == 0)
            assert len(gym.manager) == 0
            async with gym.episode("report_balance", 0) as ep:
                assert {t["function"]["name"] for t in ep.tools} >= {"transfer", "submit_answer"}
    assert rewards == {0: 1.0, 1: 0.0, 2: 1.0, 3: 0.0, 4: 1.0, 5: 0.0}


async def test_a_gym_request_without_its_episode_is_refused() -> None:
    async with open_gym(environment, transport="memory") as gym:
        async with gym.episode("report_balance", 0):
            with pytest.raises(MCPError, match="must name its episode"):
                await gym._client.call_tool("list_accounts", {})  # noqa: SLF001 - a caller bypassing the episode
