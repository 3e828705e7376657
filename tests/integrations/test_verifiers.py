"""verifiers: ``vf-eval`` (verifiers 0.4, its own virtual environment) evaluates finance tasks served by a
toolgym server, against a scripted OpenAI-compatible endpoint that replays tool calls; every rollout's
reward must equal toolgym's own grade of the same calls, and its metrics the grade's criteria."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from servers.http import running_http
from servers.registry import load_environment
from tests.integrations.oracle_provider import running_oracle_provider
from tests.integrations.scripted import oracle_of, toolgym_grade, variant
from tests.integrations.venvs import REPO, Venv

# (task, what the scripted model does): the whole oracle, the oracle without its first step, the answer only
SCRIPTS = {"duplicate_charge": "oracle", "large_wire": "skip_first", "lost_card_fraud": "answer_only"}


@pytest.mark.slow
async def test_vf_eval_rewards_equal_toolgyms_grades(verifiers_venv: Venv, tmp_path: Path) -> None:
    async with running_http(load_environment("finance")) as server:
        scripts: dict[str, list[dict[str, Any]]] = {}
        by_task: dict[str, list[dict[str, Any]]] = {}
        async with httpx.AsyncClient() as client:
            for task, kind in SCRIPTS.items():
                prompt, oracle = await oracle_of(server, client, task)
                scripts[prompt] = by_task[task] = variant(oracle, kind)
        async with running_oracle_provider(scripts) as provider:
            argv = [
                verifiers_venv.bin("vf-eval"), "toolgym-verifiers",
                "--env.taskset.server", server.url, "--env.taskset.tasks", ",".join(SCRIPTS),
                "-m", provider.model, "--client.base-url", provider.url, "--client.api-key-var", "SCRIPTED_API_KEY",
                "--no-push", "--no-rich", "-o", str(tmp_path / "outputs"), "--run.name", "toolgym",
            ]
            env = verifiers_venv.env(TOOLGYM_TOKEN=server.token or "", SCRIPTED_API_KEY="unused")
            with anyio.fail_after(600):
                done = await anyio.run_process(argv, env=env, cwd=tmp_path, check=False)
            log = done.stdout.decode()[-3000:] + done.stderr.decode()[-5000:]
            assert done.returncode == 0, log
            assert not provider.unknown_prompts, provider.unknown_prompts
        assert server.manager.capped_count == 0, "every rollout's episode is released"
    episodes = [json.loads(line) for line in (tmp_path / "outputs" / "toolgym" / "traces.jsonl").read_text().splitlines()]
    traces = {e["task"]["data"]["task"]: trace for e in episodes for trace in e["traces"]}
    assert set(traces) == set(SCRIPTS), log
    rewards = {}
    for task, trace in traces.items():
        grade = await toolgym_grade("finance", task, 0, by_task[task])
        assert trace["ok"], trace["errors"]
        rewards[task] = trace["rewards"]["toolgym_grade"]["score"]
        assert rewards[task] == grade.score, (task, trace["metrics"], grade.summary())
        assert trace["metrics"]["passed"] == float(grade.passed)
        assert {k: v for k, v in trace["metrics"].items() if k.startswith("criterion/")} == {
            f"criterion/{c.name}": c.score for c in grade.criteria
        }
        assert trace["task"]["data"]["episode_id"].startswith("ep-")
    assert rewards["duplicate_charge"] == 1.0
    assert rewards["lost_card_fraud"] < 1.0
    # Each criterion averaged over the rollouts where it applied, as the adapter logs it at the end.
    applied: dict[str, list[float]] = {}
    for trace in traces.values():
        for name, value in trace["metrics"].items():
            if name.startswith("criterion/"):
                applied.setdefault(name, []).append(value)
    assert any(len(values) < len(traces) for values in applied.values()), "some criterion applies to some tasks only"
    summary = [line.strip() for line in log.splitlines() if "criterion/" in line and "rollouts)" in line]
    expected = {f"{name} {sum(v) / len(v):.2f} ({len(v)}/{len(traces)} rollouts)" for name, v in applied.items()}
    assert {line[line.index("criterion/"):] for line in summary} == expected, log


def test_criterion_means_count_only_the_rollouts_where_a_criterion_applied() -> None:
    """What vf-eval's dashboard shows as 0.08 (2 rollouts of 24 passed a criterion that applied to 2) is 1.00."""
    import importlib.util
    import sys

    # The module alone (it needs no verifiers): the package's __init__ imports verifiers, which has a venv of its own.
    spec = importlib.util.spec_from_file_location("toolgym_verifiers_criteria", REPO / "integrations/verifiers/toolgym_verifiers/criteria.py")
    criteria = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = criteria  # type: ignore[union-attr]
    try:
        spec.loader.exec_module(criteria)  # type: ignore[union-attr]
    finally:
        del sys.modules[spec.name]  # type: ignore[union-attr]
    rollouts = [{"passed": 1.0, "criterion/answer": 1.0}] * 22 + [{"passed": 1.0, "criterion/answer": 1.0, "criterion/wire held": 1.0}] * 2
    assert criteria.criteria_means(rollouts) == {"criterion/answer": (1.0, 24), "criterion/wire held": (1.0, 2)}
    dashboard = sum(r.get("criterion/wire held", 0.0) for r in rollouts) / len(rollouts)
    assert round(dashboard, 2) == 0.08


@pytest.mark.slow
async def test_vf_eval_without_a_token_is_one_line(verifiers_venv: Venv, tmp_path: Path) -> None:
    async with running_http(load_environment("finance")) as server:
        argv = [
            verifiers_venv.bin("vf-eval"), "toolgym-verifiers", "--env.taskset.server", server.url, "-m", "m",
            "--client.base-url", "http://127.0.0.1:9/v1", "--client.api-key-var", "SCRIPTED_API_KEY", "--no-push", "--no-rich",
            "-o", str(tmp_path / "outputs"),
        ]
        env = {k: v for k, v in verifiers_venv.env(SCRIPTED_API_KEY="unused").items() if k != "TOOLGYM_TOKEN"}
        with anyio.fail_after(300):
            done = await anyio.run_process(argv, env=env, cwd=tmp_path, check=False)
        wrong = await anyio.run_process(argv, env={**env, "TOOLGYM_TOKEN": "wrong"}, cwd=tmp_path, check=False)
    err = done.stderr.decode()
    assert done.returncode == 1 and "Traceback" not in err, err[-3000:]
    assert err.strip().splitlines()[-1] == (
        f"toolgym-verifiers: error: the toolgym server at {server.url} needs a control token: set $TOOLGYM_TOKEN to it "
        "(its startup banner prints it)"
    )
    err = wrong.stderr.decode()
    assert wrong.returncode == 1 and "Traceback" not in err and "refused the control token in $TOOLGYM_TOKEN" in err.strip().splitlines()[-1]
