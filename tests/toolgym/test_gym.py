"""Gymnasium: every environment by id, Gymnasium's own checker, standard wrappers, and an episode that earns
the oracle's reward, equal to toolgym's grade of the same calls."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

if os.environ.get("CI"):
    import gymnasium  # CI installs the gym extra: a missing gymnasium must fail, never skip
else:
    gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env
from gymnasium.wrappers import RecordEpisodeStatistics, TimeLimit

from clients.rl import open_episode
from servers.registry import environment_names, load_environment
from toolgym.gym import DEFAULT_MAX_STEPS, ToolgymEnv, env_id, parse_action


def _oracle(env: str, task: str, seed: int) -> list[dict[str, Any]]:
    world, instance = load_environment(env).instantiate_task(task, seed)
    world.release()
    return [{"name": step.tool, "arguments": dict(step.arguments)} for step in instance.oracle]


@pytest.fixture
def finance() -> Iterator[gymnasium.Env]:
    env = gymnasium.make(env_id("finance"))
    yield env
    env.close()


def test_every_environment_is_registered_by_id() -> None:
    for name in environment_names():
        spec = gymnasium.spec(env_id(name))
        assert spec.kwargs == {"env": name}
    assert ToolgymEnv("finance").max_steps == DEFAULT_MAX_STEPS


def test_make_without_importing_toolgym_first() -> None:
    code = (
        "import sys, gymnasium\n"
        "env = gymnasium.make('toolgym.gym:toolgym/support-v0')\n"
        "obs, info = env.reset(seed=1)\n"
        "assert obs['prompt'] and obs['tools'] and obs['result'] == ''\n"
        "print(sorted(obs), info['task'])\n"
        "env.close()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "['instructions', 'prompt', 'result', 'tools']" in done.stdout


def test_gymnasiums_env_checker_passes(finance: gymnasium.Env) -> None:
    check_env(finance.unwrapped)


def test_reset_returns_the_task_and_the_tools(finance: gymnasium.Env) -> None:
    obs, info = finance.reset(seed=3, options={"task": "duplicate_charge", "seed": 0})
    assert info["task"] == "duplicate_charge" and info["seed"] == 0 and info["episode_id"].startswith("ep-")
    assert "charged twice" in obs["prompt"] and "submit_answer" in obs["instructions"]
    assert "submit_answer" in {tool["function"]["name"] for tool in json.loads(obs["tools"])}
    assert finance.observation_space.contains(obs)
    again, _ = finance.reset(seed=3, options={"task": "duplicate_charge", "seed": 0})
    assert again == obs


def test_the_reset_seed_is_the_task_seed(finance: gymnasium.Env) -> None:
    """``reset(seed=3, options={"task": ...})`` plays task seed 3, as the README says (it once drew seed 811)."""
    obs, info = finance.reset(seed=3, options={"task": "duplicate_charge"})
    assert info["seed"] == 3

    async def prompt() -> str:
        async with open_episode("finance", task="duplicate_charge", seed=3) as episode:
            return episode.prompt

    assert obs["prompt"] == anyio.run(prompt)
    _, info = finance.reset(seed=5)
    assert info["seed"] == 5  # the task drawn, the seed is still the one given
    _, info = finance.reset(seed=7, options={"task": "duplicate_charge", "seed": 2})
    assert info["seed"] == 2  # options["seed"] names the task seed outright
    narrowed = ToolgymEnv("finance", seeds=[10, 20])
    try:
        assert [narrowed.reset(seed=s, options={"task": "duplicate_charge"})[1]["seed"] for s in range(3)] == [10, 20, 10]
    finally:
        narrowed.close()


def test_options_pick_the_split() -> None:
    env = gymnasium.make(env_id("finance"), tasks="split:train")
    try:
        templates = load_environment("finance").task_templates()
        for seed in range(4):
            _, info = env.reset(seed=seed, options={"split": "test"})
            assert templates[info["task"]].split == "test"
    finally:
        env.close()


def test_a_wrapped_episode_reaches_the_oracles_reward_and_matches_toolgyms_grade() -> None:
    env = RecordEpisodeStatistics(gymnasium.make(env_id("finance")))
    calls = _oracle("finance", "duplicate_charge", 0)
    try:
        env.reset(seed=0, options={"task": "duplicate_charge", "seed": 0})
        rewards = []
        for index, call in enumerate(calls):
            action: Any = json.dumps(call) if index % 2 else call  # the JSON a model emits, or a dict
            obs, reward, terminated, truncated, info = env.step(action)
            rewards.append(reward)
            assert not info["is_error"], obs["result"]
        assert terminated and not truncated
        assert rewards[:-1] == [0.0] * (len(calls) - 1) and rewards[-1] == 1.0
        assert info["passed"] and info["grade"]["score"] == 1.0
        assert all(c["evidence"] for c in info["grade"]["criteria"])
        assert info["episode"]["r"] == 1.0 and info["episode"]["l"] == len(calls)
    finally:
        env.close()


async def test_rewards_equal_toolgyms_grade_for_the_same_calls() -> None:
    calls = _oracle("finance", "large_wire", 1)[1:]  # skips the verification the oracle starts with
    env = gymnasium.make(env_id("finance"))
    try:
        env.reset(seed=0, options={"task": "large_wire", "seed": 1})
        for call in calls:
            _, reward, terminated, _, info = env.step(call)
        assert terminated
    finally:
        env.close()
    async with open_episode("finance", task="large_wire", seed=1) as episode:
        for call in calls:
            await episode.step(call["name"], call["arguments"])
        done = await episode.finish()
    assert reward == done.reward and info["passed"] == done.passed
    assert [c["score"] for c in info["grade"]["criteria"]] == [c.score for c in done.grade.criteria]


def test_the_step_limit_truncates_and_grades() -> None:
    env = gymnasium.make(env_id("finance"), max_steps=2, max_episode_steps=2)
    try:
        assert isinstance(env, TimeLimit)
        env.reset(seed=0, options={"task": "duplicate_charge", "seed": 0})
        _, _, terminated, truncated, _ = env.step({"name": "list_alerts", "arguments": {}})
        assert not (terminated or truncated)
        _, reward, terminated, truncated, info = env.step({"name": "list_alerts", "arguments": {}})
        assert truncated and not terminated
        assert reward == info["grade"]["score"] == 0.0 and not info["passed"]
        with pytest.raises(RuntimeError, match="call reset"):
            env.unwrapped.step({"name": "list_alerts", "arguments": {}})
    finally:
        env.close()


def test_bad_actions_are_error_observations_not_exceptions(finance: gymnasium.Env) -> None:
    finance.reset(seed=0, options={"task": "duplicate_charge", "seed": 0})
    for action in ("not json", {"arguments": {}}, 7, {"name": "get_customer", "arguments": [1]}):
        obs, reward, terminated, truncated, info = finance.step(action)
        assert info["is_error"] and "invalid_action" in obs["result"] and reward == 0.0 and not (terminated or truncated)
    obs, _, _, _, info = finance.step({"function": {"name": "get_customer", "arguments": "{not json"}})
    assert info["is_error"] and "invalid_arguments" in obs["result"]
    obs, _, terminated, _, info = finance.step({"name": "submit_answer", "arguments": {"answer": "x"}})
    assert info["is_error"] and not terminated  # an invalid answer is the agent's error; the episode goes on


def test_parse_action_forms() -> None:
    assert parse_action({"name": "a", "arguments": {"x": 1}}) == ("a", {"x": 1})
    assert parse_action('{"tool": "a", "arguments": "{\\"x\\": 1}"}') == ("a", '{"x": 1}')
    assert parse_action({"type": "function", "function": {"name": "a", "arguments": "{}"}}) == ("a", "{}")
    assert parse_action({"name": "a", "arguments": None}) == ("a", {})
    assert isinstance(parse_action(b"[1]"), str)


def test_close_is_idempotent_and_needs_no_reset() -> None:
    env = ToolgymEnv("finance")
    env.close()
    env.close()


def test_the_readme_gymnasium_snippet_runs() -> None:
    from tests.test_readme import python_blocks

    block = next(b for b in python_blocks() if "toolgym.gym:toolgym/" in b)
    namespace: dict[str, Any] = {}
    exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["obs"]["result"] and not namespace["info"]["is_error"]
    assert namespace["env"].unwrapped.max_steps == 30
