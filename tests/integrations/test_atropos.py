"""Atropos: ``toolgym-atropos process`` (atroposlib 0.4, its own virtual environment) writes scored groups for
every environment without Atropos's API server, its rollouts played by a scripted OpenAI-compatible server
(each group's rollouts play different scripts derived from the task's oracle); every score equals
``toolgym grade`` of the rollout's own record, and toolgym's grade of the same calls played in-process."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from servers.http import running_http
from servers.registry import load_environment
from tests.clients.fake_provider import validate_openai
from tests.integrations.oracle_provider import Alternatives, ReleasingProvider, running_oracle_provider
from tests.integrations.scripted import oracle_of, toolgym_grade, variant
from tests.integrations.venvs import Venv

pytestmark = pytest.mark.slow(reason="Atropos in its own virtual environment, built once from the registry")

PLAYS = ("oracle", "skip_first", "noop")
"""The scripts a group's rollouts play, one each (group size 3)."""
TOOLGYM = str(Path(sys.executable).with_name("toolgym"))
TOKENIZER = "toolgym-tiny"
"""The adapter's tokenizer made at run time (nothing downloaded), in $TOOLGYM_CACHE_DIR (the test session's)."""


async def _process(venv: Venv, args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    with anyio.fail_after(300):
        done = await anyio.run_process([venv.bin("toolgym-atropos"), "process", *args], env=env, cwd=cwd, check=False)
    return done.returncode, done.stdout.decode()[-4000:] + done.stderr.decode()[-8000:]


@pytest.mark.parametrize("env_name", ["finance", "support", "workspace"])
async def test_process_writes_groups_scored_by_toolgym(atropos_venv: Venv, env_name: str, tmp_path: Path) -> None:
    templates = list(load_environment(env_name).task_templates())[:2]
    plays: dict[str, dict[str, list[dict[str, Any]]]] = {}
    async with running_http(load_environment(env_name)) as server:
        scripts = {}
        async with httpx.AsyncClient() as client:
            for template in templates:
                prompt, oracle = await oracle_of(server, client, template)
                plays[template] = {kind: variant(oracle, kind) for kind in PLAYS}
                scripts[prompt] = Alternatives(plays[template].values())
        async with running_oracle_provider(scripts, validate=validate_openai) as provider:
            args = [
                "--env.server", server.url, "--env.tasks", ",".join(templates), "--env.seeds", "0",
                "--env.group_size", str(len(PLAYS)), "--env.total_steps", str(len(templates)), "--env.use_wandb", "false",
                "--env.tokenizer_name", TOKENIZER, "--env.data_path_to_save_groups", str(tmp_path / "groups.jsonl"),
                "--env.records_dir", str(tmp_path / "records"),
                "--openai.base_url", provider.url, "--openai.model_name", provider.model, "--openai.api_key", "unused",
                "--openai.health_check", "false",
            ]
            env = atropos_venv.env(TOOLGYM_TOKEN=server.token or "", HF_HUB_OFFLINE="1", WANDB_MODE="disabled")
            code, out = await _process(atropos_venv, args, env, tmp_path)
            assert code == 0, out
            assert (Path(env["TOOLGYM_CACHE_DIR"]) / "tokenizers" / "toolgym-tiny-1" / "tokenizer.json").exists()
            assert not provider.unknown_prompts and not provider.refused, (provider.unknown_prompts, provider.refused)
        assert server.manager.capped_count == 0, "every rollout's episode is released"

    groups = [json.loads(line) for line in (tmp_path / "groups.jsonl").read_text().splitlines()]
    assert len(groups) == len(templates), out
    records = sorted((tmp_path / "records").glob("*.jsonl"))
    assert len(records) == len(templates) * len(PLAYS)
    regraded = subprocess.run([TOOLGYM, "grade", "--json", *map(str, records)], capture_output=True, text=True, timeout=300, check=False)
    assert regraded.returncode in (0, 1) and not regraded.stderr, regraded.stderr[-3000:]  # 1: some record did not pass
    by_episode = {g["episode_id"]: g for g in map(json.loads, regraded.stdout.splitlines())}

    for group, template in zip(groups, templates, strict=True):
        assert len(group["scores"]) == len(group["tokens"]) == len(group["masks"]) == len(PLAYS)
        infos = [o["toolgym"] for o in group["overrides"]]
        assert {(i["task"], i["seed"]) for i in infos} == {(template, 0)}
        for score, info in zip(group["scores"], infos, strict=True):
            grade = by_episode[info["episode_id"]]  # `toolgym grade` of this rollout's record
            assert score == grade["score"] and info["passed"] == grade["passed"]
            assert info["record"] and Path(info["record"]).name == f"{info['episode_id']}.jsonl"
        expected = [await toolgym_grade(env_name, template, 0, calls) for calls in plays[template].values()]
        assert Counter(group["scores"]) == Counter(g.score for g in expected)
        assert max(group["scores"]) == 1.0  # the rollout that played the oracle
        for tokens, masks, messages in zip(group["tokens"], group["masks"], group["messages"], strict=True):
            assert len(tokens) == len(masks) and any(m != -100 for m in masks)
            assert all(m in (-100, t) for t, m in zip(tokens, masks, strict=True))
            assert [m["role"] for m in messages[:2]] == ["system", "user"] and messages[-1]["role"] in ("assistant", "tool")


async def test_process_refuses_a_server_it_cannot_use(atropos_venv: Venv, tmp_path: Path) -> None:
    async with running_http(load_environment("finance")) as server:
        base = ["--env.server", server.url, "--env.use_wandb", "false", "--env.tokenizer_name", TOKENIZER,
                "--env.data_path_to_save_groups", str(tmp_path / "groups.jsonl"), "--openai.base_url", "http://127.0.0.1:9/v1",
                "--openai.health_check", "false"]
        env = {k: v for k, v in atropos_venv.env(HF_HUB_OFFLINE="1", WANDB_MODE="disabled").items() if k != "TOOLGYM_TOKEN"}
        code, out = await _process(atropos_venv, base, env, tmp_path)
        assert code == 1 and "Traceback" not in out, out
        assert out.strip().splitlines()[-1] == (
            f"toolgym-atropos: error: the toolgym server at {server.url} needs a control token: set $TOOLGYM_TOKEN to it "
            "(its startup banner prints it)"
        )
        code, out = await _process(atropos_venv, base + ["--env.tasks", "tag:no-such-tag"], {**env, "TOOLGYM_TOKEN": server.token or ""}, tmp_path)
        assert code == 1 and "Traceback" not in out and out.strip().splitlines()[-1].startswith("toolgym-atropos: error: task selector"), out


async def test_rollouts_lost_to_infrastructure_are_never_scored(atropos_venv: Venv, tmp_path: Path) -> None:
    """Every episode is released behind the environment's back before the model answers: no grade can be given, so
    each group is dropped; after ``max_failed_groups`` in a row the run stops with the reason, having written nothing."""
    async with running_http(load_environment("finance")) as server:
        provider = ReleasingProvider(server.control_url, server.control_headers)
        async with running_oracle_provider({}, provider=provider):
            args = [
                "--env.server", server.url, "--env.tasks", "duplicate_charge", "--env.group_size", "2", "--env.total_steps", "2",
                "--env.max_failed_groups", "2", "--env.use_wandb", "false", "--env.tokenizer_name", TOKENIZER,
                "--env.data_path_to_save_groups", str(tmp_path / "groups.jsonl"), "--openai.base_url", provider.url,
                "--openai.model_name", provider.model, "--openai.health_check", "false",
            ]
            env = atropos_venv.env(TOOLGYM_TOKEN=server.token or "", HF_HUB_OFFLINE="1", WANDB_MODE="disabled")
            code, out = await _process(atropos_venv, args, env, tmp_path)
        assert server.manager.capped_count == 0
    assert code != 0 and "2 groups in a row lost to infrastructure" in out and "could not be finished" in out, out
    assert not (tmp_path / "groups.jsonl").exists() or not (tmp_path / "groups.jsonl").read_text().strip()

