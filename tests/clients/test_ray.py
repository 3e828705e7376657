"""Environment actors on a real local Ray cluster (2 CPUs, started once for this module).

A run over actors equals the same run in process; an actor killed mid-run (its own SIGKILL, or ``ray.kill``)
leaves a complete, resumable result set with nothing scored twice; the trainer API plays and grades
episodes from inside Ray tasks; ``cmd:`` agents play against their actor's MCP URL.
"""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

if not os.environ.get("CI"):  # CI installs toolgym[ray]: there a missing Ray fails these tests instead
    pytest.importorskip("ray", reason="the Ray tests need the toolgym[ray] extra")

import ray  # noqa: E402
from mcp import Client  # noqa: E402

from clients.errors import RunError  # noqa: E402
from clients.ray import EnvPool, EpisodeLost, RayOptions  # noqa: E402
from clients.ray.shutdown import _raylet_pid, leftover_workers, shutdown_local  # noqa: E402
from clients.results import ResultLine, read_results  # noqa: E402
from clients.runner import RunConfig, RunOutcome, run  # noqa: E402
from fixtures.errors import TaskError  # noqa: E402
from servers.record import read_record  # noqa: E402
from tests.clients import script_agent  # noqa: E402
from tests.clients.helpers import needs_sandbox  # noqa: E402
from tests.clients.ray_helpers import BreaksFlakyTool, KillsItsActor, PacedOracle, play, rollout  # noqa: E402
from tests.clients.toyenv import FLAKY, environment  # noqa: E402

pytestmark = pytest.mark.slow(reason="a real local Ray cluster for the module, and runs over its actors")


@pytest.fixture(scope="module", autouse=True)
def cluster(template_cache: str) -> Iterator[None]:
    """One local cluster for the module: starting Ray costs seconds. Workers inherit the template cache."""
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    raylet = _raylet_pid()
    try:
        yield
    finally:
        shutdown_local()  # the module kills and restarts actors: one restarting as the cluster stopped outlived it
        assert raylet is not None and leftover_workers(raylet) == [], "a Ray worker outlived the module's cluster"


async def _no_pause(seconds: float) -> None:
    """Pauses before re-runs are not spent in tests."""


async def go(out: Path, *, on_ray: bool, **options: Any) -> RunOutcome:
    options.setdefault("agent", "oracle")
    options.setdefault("sleep", _no_pause)
    if on_ray:
        options.setdefault("ray", RayOptions(actors=2))
    with anyio.fail_after(120):
        return await run(RunConfig(env=environment, out=out, **options))


def stable(line: ResultLine) -> dict[str, Any]:
    """What must not depend on where, when or how often an episode ran."""
    return {
        "key": line.key,
        "status": line.status,
        "score": line.score,
        "grade": line.grade,
        "tool_calls": line.tool_calls,
        "record": line.record,
    }


def calls(run_folder: Path, line: ResultLine) -> list[tuple[str, dict[str, Any], bool]]:
    record = read_record(run_folder / line.record, require_closed=True)  # type: ignore[operator]
    return [(c.tool, c.arguments, c.error is None) for c in record.tool_calls]


def one_line_per_episode(run_folder: Path) -> list[ResultLine]:
    lines = read_results(run_folder / "results.jsonl").lines
    assert len({line.key for line in lines}) == len(lines), "an episode has two lines"
    return lines


async def test_a_run_over_actors_equals_the_run_in_process(tmp_path: Path) -> None:
    common: dict[str, Any] = {"seeds": "0-2", "trials": 2}
    local = await go(tmp_path / "local", on_ray=False, **common)
    remote = await go(tmp_path / "ray", on_ray=True, **common)
    assert len(remote.lines) == 18 and remote.ran == 18
    assert [stable(line) for line in remote.lines] == [stable(line) for line in local.lines]
    assert all(line.status == "graded" and line.passed for line in remote.lines)
    for line in remote.lines:
        assert line.episode_id == Path(line.record).stem  # type: ignore[arg-type]  # named as in process
        assert calls(tmp_path / "ray", line) == calls(tmp_path / "local", line)
    one_line_per_episode(tmp_path / "ray")
    scores = [
        json.loads((tmp_path / side / "summary.json").read_text())["agents"][0]["overall"] for side in ("local", "ray")
    ]
    for overall in scores:
        overall.pop("mean_wall_s")
    assert scores[0] == scores[1]


async def test_a_task_failure_inside_an_actor_is_reported_as_in_process(tmp_path: Path) -> None:
    common: dict[str, Any] = {"agent": BreaksFlakyTool(), "tasks": "flaky_report,report_balance", "retries": 1}
    try:
        local = await go(tmp_path / "local", on_ray=False, **common)
    finally:
        FLAKY["failures_left"] = 0
    remote = await go(tmp_path / "ray", on_ray=True, **common)
    shape = [(line.task, line.status, line.error_class, line.attempts, line.error) for line in remote.lines]
    assert shape == [(line.task, line.status, line.error_class, line.attempts, line.error) for line in local.lines]
    assert [s[:4] for s in shape] == [("flaky_report", "errored", "internal", 2), ("report_balance", "graded", None, 1)]


async def test_an_actor_killing_itself_mid_episode_loses_nothing_and_scores_nothing_twice(tmp_path: Path) -> None:
    marker = tmp_path / "kill-one"
    marker.write_text("")
    common: dict[str, Any] = {"seeds": "0-3", "concurrency": 4}
    local = await go(tmp_path / "local", on_ray=False, agent=KillsItsActor(None), **common)
    remote = await go(tmp_path / "ray", on_ray=True, agent=KillsItsActor(marker), **common)
    killed = (tmp_path / "kill-one.episode").read_text()
    assert not marker.exists()
    # Complete: every episode graded once; those in flight on the dead actor (the killer among them, at most
    # two: 4 at once over 2 actors) on their second attempt, elsewhere; the rest on their first.
    assert [stable(line) for line in remote.lines] == [stable(line) for line in local.lines]
    rerun = {Path(line.record).stem: line.attempts for line in remote.lines if line.attempts > 1}  # type: ignore[arg-type]
    assert killed in rerun and len(rerun) <= 2 and set(rerun.values()) == {2}
    lines = one_line_per_episode(tmp_path / "ray")
    assert len(lines) == 12 and all(line.status == "graded" for line in lines)
    assert remote.summary.agents[0].overall.episodes == 12 and remote.summary.agents[0].overall.errored == 0
    again = await go(tmp_path / "ray", on_ray=True, agent=KillsItsActor(None), resume=True, **common)
    assert (again.ran, again.skipped) == (0, 12)


async def test_an_actor_killed_by_ray_errors_its_episodes_and_resume_completes_the_run(tmp_path: Path) -> None:
    killed: list[str] = []

    class KillAfterFirst:
        """A reporter that, at the first finished episode, kills one actor for good while others are in flight."""

        def start(self, total: int, done: int) -> None: ...
        def retrying(self, line: ResultLine) -> None: ...
        def stop(self) -> None: ...

        def finished(self, line: ResultLine) -> None:
            if not killed:
                named = sorted((n["name"], n["namespace"]) for n in ray.util.list_named_actors(all_namespaces=True))
                name, namespace = next(n for n in named if n[0].startswith("toolgym-"))
                ray.kill(ray.get_actor(name, namespace=namespace), no_restart=True)
                killed.append(name)

    common: dict[str, Any] = {"seeds": "0-3", "concurrency": 4, "agent": PacedOracle(0.15)}
    config = RunConfig(
        env=environment, out=tmp_path / "ray", retries=0, sleep=_no_pause, ray=RayOptions(actors=2), **common
    )
    with anyio.fail_after(120):
        first = await run(config, KillAfterFirst())
    assert killed
    errored = [line for line in first.lines if line.status == "errored"]
    assert errored and all(line.error_class == "connection" and "died" in (line.error or "") for line in errored)
    assert first.summary.agents[0].overall.errored == len(errored)
    assert len(first.lines) == 12  # the run finished: every episode has its line, graded or errored
    resumed = await go(tmp_path / "ray", on_ray=True, resume=True, **common)
    assert resumed.ran == len(errored) and all(line.status == "graded" and line.passed for line in resumed.lines)
    assert resumed.summary.agents[0].overall.episodes == 12 and resumed.summary.agents[0].overall.errored == 0
    assert len(read_results(tmp_path / "ray" / "results.jsonl").lines) == 12 + len(
        errored
    )  # reruns supersede, never add


async def test_a_trainer_plays_and_grades_episodes_from_inside_ray_tasks() -> None:
    group = ray.util.placement_group([{"CPU": 1}, {"CPU": 1}], strategy="SPREAD")
    try:
        with anyio.fail_after(120):
            await group.ready()
            async with EnvPool(environment, actors=2, placement_group=group) as pool:
                refs = [rollout.remote(pool, "pay_back", seeds) for seeds in ([0, 1], [2, 3])]
                results = [result for ref in refs for result in await ref]
                # The same actors, from here: raw text arguments, a free-play episode, MCP over HTTP on request.
                async with pool.episode("report_balance", 0) as episode:
                    bad = await episode.step("get_account", '{"account_id": ')
                    assert bad.is_error and json.loads(bad.text)["error"] == "invalid_arguments" and episode.steps == 0
                async with pool.episode(None, 0) as free:
                    assert free.prompt == ""
                    with pytest.raises(TaskError, match="free play"):
                        await free.finish()
                with pytest.raises(TaskError, match="has no task template 'nope'"):
                    await pool.open_episode("nope")
                world, instance = environment.instantiate_task("report_balance", 1)
                world.close()
                async with pool.episode("report_balance", 1, mcp=True) as episode:
                    assert episode.mcp_url is not None and episode.mcp_url.startswith("http://127.0.0.1:")
                    async with Client(episode.mcp_url) as client:
                        for call in instance.oracle:
                            assert not (await client.call_tool(call.tool, dict(call.arguments))).is_error
                    done = await episode.finish()
                    assert done.passed and done.reward == 1.0
                messages, reward = await readme_rollout()(pool, "pay_back", 5, oracle_policy("pay_back", 5))
                roles = [message["role"] for message in messages]
                assert reward == 1.0 and roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
                # An actor dying under an open episode: the episode is lost (not the policy's doing); the pool goes on.
                doomed = await pool.open_episode("pay_back", 0)
                os.kill((await doomed.actor.ping.remote())["pid"], signal.SIGKILL)
                with pytest.raises(EpisodeLost, match="died during call_tool"):
                    await doomed.step("list_accounts", {})
                await doomed.release()
                assert (await play(pool, "pay_back", 0, solve=True))["reward"] == 1.0
                memory = [await _when_up(handle) for handle in pool.handles]
                assert all(m["rss"] > 0 for m in memory)
    finally:
        ray.util.remove_placement_group(group)
    assert [(r["reward"], r["passed"]) for r in results] == [(1.0, True), (0.0, False), (1.0, True), (0.0, False)]
    assert results[0]["calls"] == ["transfer", "submit_answer"] and results[1]["calls"] == ["transfer"]
    assert results[0]["first"] == "message" and results[0]["criteria"][:2] == ["debt paid", "nothing else touched"]


async def _when_up(handle: Any) -> Any:
    """An actor's memory figures, once it is up: the killed one restarts (``max_restarts``) at its own pace."""
    with anyio.fail_after(60):
        while True:
            try:
                return await handle.memory.remote()
            except ray.exceptions.ActorUnavailableError:  # restarting: ask again shortly
                await anyio.sleep(0.2)


def readme_rollout() -> Any:
    """The README's rollout function for trainers, as printed there."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", readme, flags=re.S) if "async def rollout(" in b)
    namespace: dict[str, Any] = {}
    exec(compile(block, "README.md", "exec"), namespace)
    return namespace["rollout"]


def oracle_policy(task: str, seed: int) -> Any:
    """A policy that answers with the oracle's calls one turn at a time, as a model's messages, then stops."""
    world, instance = environment.instantiate_task(task, seed)
    world.close()
    steps = iter(instance.oracle)

    async def policy(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        assert {tool["function"]["name"] for tool in tools} >= {step.tool for step in instance.oracle}
        step = next(steps, None)
        if step is None:
            return {"role": "assistant", "content": "done"}
        call = {
            "id": f"c{len(messages)}",
            "type": "function",
            "function": {"name": step.tool, "arguments": json.dumps(step.arguments)},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    return policy


@needs_sandbox
async def test_cmd_agents_play_against_their_actors_mcp_url(tmp_path: Path) -> None:
    agent = script_agent.spec(tmp_path / "agent", "solve")  # sandboxed on the actor's node, as locally
    outcome = await go(tmp_path / "ray", on_ray=True, agent=agent, tasks="pay_back,report_balance", seeds="0-1")
    assert [(line.status, line.passed, line.stop_reason) for line in outcome.lines] == [("graded", True, "exit:0")] * 4
    for line in outcome.lines:
        assert (tmp_path / "ray" / "logs" / f"{Path(line.record).stem}.log").exists()  # type: ignore[arg-type]
        assert calls(tmp_path / "ray", line)[-1][0] == "submit_answer"


async def test_clear_errors_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="--ray and --server exclude each other"):
        await go(tmp_path / "a", on_ray=True, server="http://127.0.0.1:9")
    with pytest.raises(RunError, match="has no task 'nope'"):
        await go(tmp_path / "b", on_ray=True, tasks="nope")
    with pytest.raises(RunError, match="did not start within"):
        await go(tmp_path / "c", on_ray=True, ray=RayOptions(actors=3, start_timeout=3.0))
    with pytest.raises(RunError, match="could not start: .*RunError: no environment 'nope'"):
        await EnvPool("nope", actors=1).start()
