"""An LLM agent's key is the run's: checked before the first episode, and a refused key stops the run with one line.

Scripted providers over HTTP (``tests/clients/fake_provider.py``) and the real ``toolgym`` command in a
subprocess, so what a user sees — exit status, stderr, what was written, what was requested — is checked.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import httpx
import pytest

from clients.agents.keys import KeyRefused
from clients.cli import main
from clients.errors import RunError
from clients.runner import RunConfig, run
from tests.clients.fake_provider import Reply, anthropic_error, openai_error, running_provider
from tests.clients.llm_scenarios import QUICK, no_wait, solution
from tests.clients.toyenv import environment

REPO = Path(__file__).resolve().parents[2]
TOY = "tests.clients.toyenv:environment"


async def _toolgym(*argv: str, env: dict[str, str] | None = None, timeout: float = 60) -> tuple[int, str, str]:
    """``toolgym ARGV`` in a subprocess (the repository importable): exit status, stdout, stderr."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "TOOLGYM_MODEL"))}
    with anyio.fail_after(timeout):
        done = await anyio.run_process([sys.executable, "-m", "clients.cli", *argv], cwd=REPO, env={**base, **(env or {})}, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


@pytest.mark.parametrize(("spec", "variable"), [("openai:gpt-4.1", "OPENAI_API_KEY"), ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY")])
def test_no_key_for_the_public_endpoint_stops_before_any_request(
    spec: str, variable: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    sent: list[str] = []

    async def refuse(self: httpx.AsyncClient, request: httpx.Request, **kwargs: object) -> httpx.Response:
        sent.append(str(request.url))
        raise AssertionError(f"no request may be sent without a key: {request.url}")

    monkeypatch.setattr(httpx.AsyncClient, "send", refuse)
    with pytest.raises(SystemExit) as exited:
        main(["run", TOY, "--agent", spec, "--seeds", "0-3", "--out", str(tmp_path / "run"), "--quiet"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and sent == []
    assert len(err.strip().splitlines()) == 1, err
    assert f"{spec} needs an API key" in err and variable in err and "--api-key" in err
    assert not (tmp_path / "run" / "results.jsonl").exists()


async def test_a_key_refused_before_the_first_episode_is_one_line_and_no_episode(tmp_path: Path) -> None:
    refusal = Reply(openai_error("Incorrect API key provided: sk-revoked", code="invalid_api_key"), status=401)
    async with running_provider([], models=refusal) as provider:
        status, out, err = await _toolgym(
            "run", TOY, "--agent", "openai:scripted", "--base-url", f"{provider.url}/v1", "--seeds", "0-9",
            "--out", str(tmp_path / "run"), "--quiet", env={"OPENAI_API_KEY": "sk-revoked"},
        )
    assert status == 2, (out, err)
    assert err.strip().splitlines() == [err.strip()], err
    assert "refused the API key of openai:scripted (HTTP 401: Incorrect API key provided" in err and "OPENAI_API_KEY" in err
    assert provider.model_listings == 1 and provider.requests == []  # one probe, no completion requested
    assert not (tmp_path / "run" / "results.jsonl").exists()


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
async def test_a_key_refused_mid_run_stops_the_run_instead_of_erroring_every_episode(tmp_path: Path, protocol: str) -> None:
    """The endpoint lists models without a key (404 here) but refuses every completion: the first refusal ends the run."""
    if protocol == "openai":
        refused = Reply(openai_error("Incorrect API key provided", code="invalid_api_key"), status=401)
        spec, base, variable = "openai:scripted", "/v1", "OPENAI_API_KEY"
    else:
        refused = Reply(anthropic_error("invalid x-api-key", kind="authentication_error"), status=401)
        spec, base, variable = "anthropic:scripted", "", "ANTHROPIC_API_KEY"
    async with running_provider([refused] * 40) as provider:
        status, out, err = await _toolgym(
            "run", TOY, "--agent", spec, "--base-url", provider.url + base, "--tasks", "report_balance", "--seeds", "0-19",
            "--concurrency", "4", "--retries", "2", "--out", str(tmp_path / "run"), env={variable: "revoked"},
        )
    assert status == 2, (out, err)
    assert err.strip().splitlines() == [err.strip()], err
    assert f"refused the API key of {spec} (HTTP 401" in err
    assert len(provider.requests) <= 4  # at most one per episode in flight; none retried, none re-run
    results = tmp_path / "run" / "results.jsonl"
    assert not results.exists() or results.read_text() == ""  # not 20 identical errored lines


async def test_403_stops_the_run_too_and_a_local_endpoint_needs_no_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from clients.agents.openai import OpenAIAgent

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    forbidden = Reply(openai_error("Project does not have access to model scripted"), status=403)
    async with running_provider([forbidden]) as provider:
        agent = OpenAIAgent("scripted", base_url=f"{provider.url}/v1", api_key="k", sleep=no_wait, backoff=QUICK)
        with pytest.raises(KeyRefused, match="HTTP 403: Project does not have access"):
            await run(RunConfig(env=environment, agent=agent, tasks="report_balance", out=tmp_path / "a"))
    # No key at all against a local endpoint is fine: it is asked, and it answers.
    async with running_provider(solution("openai"), models=Reply({"data": [{"id": "scripted"}]})) as provider:
        agent = OpenAIAgent("scripted", base_url=f"{provider.url}/v1", sleep=no_wait, backoff=QUICK)
        outcome = await run(RunConfig(env=environment, agent=agent, tasks="report_balance", out=tmp_path / "b"))
    assert provider.model_listings == 1 and outcome.lines[0].passed
    assert "authorization" not in provider.requests[0].headers


async def test_an_unreachable_endpoint_is_one_line_before_any_episode(tmp_path: Path) -> None:
    from clients.agents.openai import OpenAIAgent

    with anyio.fail_after(20):
        agent = OpenAIAgent("scripted", base_url="http://127.0.0.1:9/v1", api_key="k")  # the discard port: refused
        with pytest.raises(RunError, match=r"cannot reach http://127.0.0.1:9/v1 \(ConnectError"):
            await run(RunConfig(env=environment, agent=agent, tasks="report_balance", out=tmp_path / "run"))
    assert not (tmp_path / "run" / "results.jsonl").exists()
