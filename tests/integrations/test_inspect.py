"""inspect-ai: ``inspect eval toolgym_inspect/<env>`` (inspect 0.3, its own virtual environment) against a running
toolgym server, with inspect's mock model and with a scripted OpenAI-compatible provider that plays tool calls
derived from each task's oracle. inspect's own log API reads the log back: every sample's score is toolgym's
grade of the same calls, with every criterion and its evidence in the score's metadata; infrastructure
failures are sample errors, never scores; a server it cannot use is one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from servers.http import HttpServer, running_http
from servers.registry import load_environment
from tests.clients.fake_provider import validate_openai
from tests.integrations.oracle_provider import ReleasingProvider, running_oracle_provider
from tests.integrations.scripted import oracle_of, toolgym_grade, variant
from tests.integrations.venvs import Venv

pytestmark = pytest.mark.slow(reason="inspect-ai in its own virtual environment, built once from the registry")

READER = Path(__file__).with_name("inspect_log_reader.py")
KINDS = ("oracle", "skip_first", "answer_only")
"""What the scripted model plays on each env's first three templates (in that order)."""


@pytest.fixture(scope="module")
def tiktoken_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiktoken cache of the tests' own, empty at first: toolgym_inspect fills it (its offline extra), nothing is fetched."""
    return tmp_path_factory.mktemp("tiktoken")


def _env(venv: Venv, server: HttpServer, cache: Path, **extra: str) -> dict[str, str]:
    return venv.env(
        TOOLGYM_TOKEN=server.token or "", TIKTOKEN_CACHE_DIR=str(cache), INSPECT_LOG_LEVEL="warning", SCRIPTED_API_KEY="unused", **extra,
    )


async def _inspect_eval(venv: Venv, task: str, models: str, args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    argv = [venv.bin("inspect"), "eval", f"toolgym_inspect/{task}", "--model", models, "--log-dir", str(cwd / "logs"),
            "--display", "plain", "--no-log-realtime", *args]
    with anyio.fail_after(300):
        done = await anyio.run_process(argv, env=env, cwd=cwd, check=False)
    return done.returncode, done.stdout.decode()[-4000:] + done.stderr.decode()[-6000:]


async def _logs(venv: Venv, folder: Path) -> dict[str, dict[str, Any]]:
    """Every log in ``folder`` read back with inspect's API, by model."""
    logs = {}
    for path in sorted(folder.glob("*.eval")):
        with anyio.fail_after(120):
            done = await anyio.run_process([venv.python, str(READER), str(path)], env=venv.env(), check=False)
        assert done.returncode == 0, done.stderr.decode()[-3000:]
        log = json.loads(done.stdout.decode())
        logs[log["model"]] = log
    return logs


@pytest.mark.parametrize("env_name", ["finance", "support", "workspace"])
async def test_inspect_eval_scores_are_toolgyms_grades(inspect_venv: Venv, tiktoken_cache: Path, env_name: str, tmp_path: Path) -> None:
    templates = list(load_environment(env_name).task_templates())[: len(KINDS)]
    played: dict[str, list[dict[str, Any]]] = {}
    async with running_http(load_environment(env_name)) as server:
        scripts = {}
        async with httpx.AsyncClient() as client:
            for template, kind in zip(templates, KINDS, strict=True):
                prompt, oracle = await oracle_of(server, client, template)
                scripts[prompt] = played[template] = variant(oracle, kind)
        async with running_oracle_provider(scripts, validate=validate_openai) as provider:
            models = f"mockllm/model,openai-api/scripted/{provider.model}"
            code, out = await _inspect_eval(
                inspect_venv, env_name, models, ["-T", f"server={server.url}", "-T", f"tasks={','.join(templates)}"],
                _env(inspect_venv, server, tiktoken_cache, SCRIPTED_BASE_URL=provider.url), tmp_path,
            )
            assert code == 0, out
            assert not provider.unknown_prompts and not provider.refused, (provider.unknown_prompts, provider.refused)
        assert server.manager.capped_count == 0, "every sample's episode is released"
    logs = await _logs(inspect_venv, tmp_path / "logs")
    assert list(tiktoken_cache.iterdir()), "toolgym_inspect put o200k_base in tiktoken's cache"
    assert set(logs) == {"mockllm/model", f"openai-api/scripted/{provider.model}"}, out

    for model, log in logs.items():
        assert log["status"] == "success" and log["task"] == f"toolgym_inspect/{env_name}", log["error"]
        scripted = model.startswith("openai-api")
        samples = {s["id"]: s for s in log["samples"]}
        assert set(samples) == {f"{t}-0" for t in templates}
        for template in templates:
            sample = samples[f"{template}-0"]
            assert sample["error"] is None
            assert sample["metadata"]["toolgym"] == {"env": env_name, "template": template, "seed": 0}
            assert {"difficulty", "category", "split", "tags", "tools"} <= set(sample["metadata"])
            assert [m["role"] for m in sample["messages"][:2]] == ["system", "user"]
            calls = [{"tool": c["function"], "arguments": c["arguments"]} for m in sample["messages"] for c in m["tool_calls"]]
            assert calls == ([{"tool": c["tool"], "arguments": c.get("arguments") or {}} for c in played[template]] if scripted else [])
            expected = await toolgym_grade(env_name, template, 0, calls)
            score = sample["score"]
            assert score["value"] == {"score": expected.score, "passed": float(expected.passed)}, (template, score["explanation"])
            # the whole grade rides in the score's metadata: every criterion with its evidence, as toolgym gives it
            assert score["metadata"]["criteria"] == [c.model_dump(mode="json") for c in expected.criteria]
            assert all(c["evidence"] for c in score["metadata"]["criteria"])
            assert score["metadata"]["episode_id"].startswith("ep-") and score["metadata"]["template_id"] == template
            failed = [c for c in expected.criteria if c.graded and not c.passed]
            assert all(c.evidence in score["explanation"] for c in failed)
        scores = [samples[f"{t}-0"]["score"]["value"]["score"] for t in templates]
        assert log["scores"]["score"]["mean"] == pytest.approx(sum(scores) / len(scores))
        if scripted:
            assert samples[f"{templates[0]}-0"]["score"]["value"] == {"score": 1.0, "passed": 1.0}
            assert samples[f"{templates[0]}-0"]["score"]["answer"] is not None
        else:
            assert scores == [0.0] * len(templates)  # the mock model makes no call: toolgym's no-op grade


async def test_an_infrastructure_failure_is_an_inspect_error_not_a_score(inspect_venv: Venv, tiktoken_cache: Path, tmp_path: Path) -> None:
    async with running_http(load_environment("finance")) as server:
        provider = ReleasingProvider(server.control_url, server.control_headers)
        async with running_oracle_provider({}, provider=provider):
            _, out = await _inspect_eval(
                inspect_venv, "finance", f"openai-api/scripted/{provider.model}",
                ["-T", f"server={server.url}", "-T", "tasks=duplicate_charge"],
                _env(inspect_venv, server, tiktoken_cache, SCRIPTED_BASE_URL=provider.url), tmp_path,
            )
    (log,) = (await _logs(inspect_venv, tmp_path / "logs")).values()
    assert log["status"] == "error", out  # (inspect eval exits 0 either way)
    (sample,) = log["samples"]
    assert sample["score"] is None and "404" in (sample["error"] or ""), sample["error"]
    assert log["scores"] == {}


async def test_a_server_it_cannot_use_is_one_line(inspect_venv: Venv, tiktoken_cache: Path, tmp_path: Path) -> None:
    async with running_http(load_environment("finance")) as server:
        cases = {
            "no token": ("finance", {}, f"the toolgym server at {server.url} needs a control token: set $TOOLGYM_TOKEN"),
            "another env": ("support", {"TOOLGYM_TOKEN": server.token or ""}, "serves 'finance', not 'support'"),
            "no task": ("finance", {"TOOLGYM_TOKEN": server.token or ""}, "names no task"),
        }
        for case, (task, token, said) in cases.items():
            env = {k: v for k, v in _env(inspect_venv, server, tiktoken_cache).items() if k != "TOOLGYM_TOKEN"} | token
            args = ["-T", f"server={server.url}"] + (["-T", "tasks=tag:no-such-tag"] if case == "no task" else [])
            code, out = await _inspect_eval(inspect_venv, task, "mockllm/model", args, env, tmp_path)
            text = " ".join(out.split())
            assert code != 0 and "Traceback" not in out and "toolgym-inspect: error: " in text, (case, out)
            assert said in text, (case, out)
