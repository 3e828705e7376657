"""OpenEnv: the ``toolgym-openenv`` bridge (OpenEnv 0.10, its own virtual environment) serves a running toolgym
server; OpenEnv's own ``GenericEnvClient`` resets, lists tools, plays an episode, and reads reward and state."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from clients.rl import open_episode
from servers.http import running_http
from servers.registry import load_environment
from tests.integrations.venvs import Venv

pytestmark = pytest.mark.slow(reason="OpenEnv in its own virtual environment, built once from the registry")

PLAYER = Path(__file__).with_name("openenv_player.py")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def _wait_healthy(url: str, process: anyio.abc.Process) -> None:
    async with httpx.AsyncClient() as client:
        with anyio.fail_after(60):
            while True:
                assert process.returncode is None, "the bridge exited at startup"
                try:
                    if (await client.get(f"{url}/health")).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                await anyio.sleep(0.2)


async def _play(openenv_venv: Venv, url: str, task: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    job = json.dumps({"url": url, "task": task, "seed": 0, "calls": calls}).encode()
    with anyio.fail_after(180):
        done = await anyio.run_process([openenv_venv.python, str(PLAYER)], input=job, check=False, env=openenv_venv.env())
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


async def test_an_openenv_client_plays_an_episode(openenv_venv: Venv) -> None:
    async with running_http(load_environment("finance")) as server:
        async with httpx.AsyncClient() as client:
            created = (await client.post(f"{server.control_url}/episodes", json={"task": "duplicate_charge", "seed": 0, "oracle": True},
                                         headers=server.control_headers)).json()
            await client.delete(f"{server.control_url}/episodes/{created['id']}", headers=server.control_headers)
        oracle = created["oracle"]
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        argv = [openenv_venv.bin("toolgym-openenv"), "--server", server.url, "--port", str(port), "--tasks", "split:train"]
        process = await anyio.open_process(argv, env=openenv_venv.env(TOOLGYM_TOKEN=server.token or ""),
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            await _wait_healthy(url, process)
            bad = {"tool": "verify_identity", "arguments": {"customer_id": "nobody"}}
            played = await _play(openenv_venv, url, "duplicate_charge", [bad, *oracle])
            skipped = await _play(openenv_venv, url, "duplicate_charge", oracle[1:])
        finally:
            process.terminate()
            await process.wait()
        assert server.manager.capped_count == 0, "every episode the bridge opened is released"

    assert played["reset_keys"] == ["instructions", "metadata", "prompt", "seed", "task", "tools"]
    assert played["prompt"] == created["prompt"] and "submit_answer" in played["instructions"]
    assert "submit_answer" in played["tool_names"] and played["listed"] == len(played["tool_names"])
    first, *rest = played["steps"]
    assert first == {"reward": 0.0, "done": False, "is_error": True}  # the agent's error is data, the episode goes on
    assert [s["done"] for s in rest] == [False] * (len(oracle) - 1) + [True]
    assert rest[-1]["reward"] == 1.0 and played["metadata"]["grade"]["passed"]
    assert played["state"]["done"] and played["state"]["reward"] == 1.0 and played["state"]["passed"]
    assert played["state"]["step_count"] == len(oracle) + 1 and played["state"]["task"] == "duplicate_charge"

    async with open_episode("finance", task="duplicate_charge", seed=0) as episode:
        for call in oracle[1:]:
            await episode.step(call["tool"], call["arguments"])
        expected = await episode.finish()
    assert skipped["steps"][-1]["reward"] == expected.reward == skipped["metadata"]["grade"]["score"]
    assert skipped["state"]["passed"] == expected.passed


async def test_the_bridge_says_what_it_serves_and_refuses_a_server_it_cannot_use(openenv_venv: Venv) -> None:
    async with running_http(load_environment("finance")) as server:
        port = _free_port()
        argv = [openenv_venv.bin("toolgym-openenv"), "--server", server.url, "--port", str(port), "--tasks", "split:test", "--seeds", "0,1"]
        base = {k: v for k, v in openenv_venv.env().items() if k != "TOOLGYM_TOKEN"}
        process = await anyio.open_process(argv, env={**base, "TOOLGYM_TOKEN": server.token or ""}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            assert process.stderr is not None
            with anyio.fail_after(60):
                first = (await process.stderr.receive()).decode()
            await _wait_healthy(f"http://127.0.0.1:{port}", process)
        finally:
            process.terminate()
            await process.wait()
        tests = sum(1 for t in load_environment("finance").task_templates().values() if t.split == "test")
        assert first.strip() == (
            f"toolgym-openenv: toolgym finance at {server.url}: {tests} task(s), seeds 0,1; "
            f"OpenEnv HTTP + WebSocket on http://127.0.0.1:{port}"
        )
        refusals = {
            "no token": (base, "needs a control token: set $TOOLGYM_TOKEN"),
            "wrong token": ({**base, "TOOLGYM_TOKEN": "wrong"}, "refused the control token in $TOOLGYM_TOKEN"),
            "no task": ({**base, "TOOLGYM_TOKEN": server.token or ""}, "names no task"),
        }
        for case, (env, said) in refusals.items():
            args = argv + (["--tasks", "tag:no-such-tag"] if case == "no task" else [])
            with anyio.fail_after(60):
                done = await anyio.run_process(args, env=env, check=False)
            err = done.stderr.decode().strip()
            assert done.returncode == 2 and len(err.splitlines()) == 1 and err.startswith("toolgym-openenv: error: "), (case, err)
            assert said in err, (case, err)
    with anyio.fail_after(60):
        done = await anyio.run_process(argv, env={**base, "TOOLGYM_TOKEN": "t"}, check=False)  # the server is gone
    err = done.stderr.decode().strip()
    assert done.returncode == 2 and err.startswith(f"toolgym-openenv: error: cannot reach a toolgym server at {server.url}") and len(err.splitlines()) == 1
