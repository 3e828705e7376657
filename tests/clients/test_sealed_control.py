"""A ``cmd:`` agent cannot reach the control API, shown over a real process boundary.

The agent below is a separate process written to do everything a malicious agent could with what it is
given: it reads its environment, argv, MCP config file, prompt file and its parent's /proc entries,
collects every token-looking value, derives the server from its MCP URL and tries the control API with
and without each value, and with spoofed Host / Origin / forwarding headers. It writes what it found and
got into a report; the test checks every attempt was refused, no control token reached it, and the run
still graded every episode.
"""

from __future__ import annotations

import json
import secrets
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

import servers.http
from clients.agents.external import GIVEN_VARIABLES
from clients.runner import RunConfig, RunOutcome, run
from servers.http import running_http
from servers.registry import load_environment

TASKS = "duplicate_charge,large_wire"
REFUSED = {401, 403, 421}

ATTACKER = r'''
import json, os, re, sys
from pathlib import Path

import anyio
import httpx

report_dir, mcp_url, mcp_config, prompt_file, episode_id, prompt = sys.argv[1:7]


def read(path):
    try:
        return Path(path).read_bytes().decode("utf-8", "replace")
    except OSError as exc:
        return f"<unreadable: {exc}>"


parent = os.getppid()
folder = Path(prompt_file).parent
seen = {
    "environ": dict(os.environ),
    "argv": sys.argv,
    "mcp_config": read(mcp_config),
    "prompt_file": read(prompt_file),
    "folder": {p.name: read(p) for p in folder.iterdir() if p.is_file()},
    "parent_environ": read(f"/proc/{parent}/environ").replace("\0", "\n"),
    "parent_cmdline": read(f"/proc/{parent}/cmdline").replace("\0", " "),
}
named = [v for k, v in os.environ.items() if re.search("TOKEN|SECRET|KEY|PASS|TOOLGYM", k, re.I)]
found = re.findall(r"[A-Za-z0-9_\-]{20,}", json.dumps(seen))
candidates = list(dict.fromkeys(c for c in named + found if c))[:40]

base = mcp_url.split("/episodes/")[0]
port = base.rsplit(":", 1)[1]
targets = [
    ("GET", "/control/health", None),
    ("GET", "/control/episodes", None),
    ("POST", "/control/episodes", {}),
    ("POST", "/control/episodes", {"task": None, "seed": 0}),
    ("GET", f"/control/episodes/{episode_id}", None),
    ("GET", f"/control/episodes/{episode_id}/record", None),
    ("POST", f"/control/episodes/{episode_id}/grade", None),
    ("POST", f"/control/episodes/{episode_id}/close", None),
    ("GET", "/control//episodes", None),
    ("GET", "/control/./episodes", None),
]
disguises = [
    {},
    {"Host": f"127.0.0.1:{port}"},
    {"Host": f"localhost:{port}"},
    {"Host": "evil.example"},
    {"Origin": f"http://127.0.0.1:{port}"},
    {"Origin": "null"},
    {"Origin": "http://evil.example", "Content-Type": "text/plain"},
    {"X-Forwarded-For": "127.0.0.1", "X-Real-IP": "127.0.0.1", "X-Forwarded-Host": f"127.0.0.1:{port}"},
]
auths = [None, "Bearer", "Bearer x", *(f"Bearer {c}" for c in candidates), *(f"Basic {c}" for c in candidates[:5])]


async def attack(http):
    attempts = []

    async def send(method, path, body, auth, disguise):
        headers = dict(disguise)
        if auth is not None:
            headers["Authorization"] = auth
        if body is not None and "Content-Type" not in headers:
            content, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        else:
            content = json.dumps(body).encode() if body is not None else None
        response = await http.request(method, base + path, content=content, headers=headers)
        attempts.append({"method": method, "path": path, "auth": auth is not None, "disguise": disguise, "status": response.status_code})

    for auth in auths:
        for method, path, body in targets:
            await send(method, path, body, auth, {})
    for disguise in disguises:
        for auth in [None, *auths[3:4]]:
            for method, path, body in targets:
                await send(method, path, body, auth, disguise)
    return attempts


async def play():
    from mcp import Client

    async with Client(mcp_url) as client:
        tools = (await client.list_tools()).tools
        reader = next(
            t for t in tools
            if t.annotations and t.annotations.read_only_hint and not t.input_schema.get("required")
        )
        result = await client.call_tool(reader.name, {})
        return [t.name for t in tools], reader.name, result.is_error


async def main():
    async with httpx.AsyncClient(timeout=30) as http:
        attempts = await attack(http)
    tools, called, is_error = await play()
    report = {
        "episode_id": episode_id,
        "token_in_env": "TOOLGYM_TOKEN" in os.environ,
        "toolgym_vars": sorted(k for k in os.environ if k.upper().startswith("TOOLGYM_")),
        "candidates": candidates,
        "seen": seen,
        "attempts": attempts,
        "tools": tools,
        "called": called,
        "call_is_error": is_error,
    }
    Path(report_dir, f"{episode_id}.json").write_text(json.dumps(report))


anyio.run(main)
'''


def check_reports(reports: Path, outcome: RunOutcome, secrets_: list[str]) -> None:
    """Every /control attempt was refused, no secret reached the agent, and the run graded normally."""
    assert [(line.task, line.status, line.stop_reason) for line in outcome.lines] == [
        ("duplicate_charge", "graded", "exit:0"),
        ("large_wire", "graded", "exit:0"),
    ]
    assert all(line.grade is not None and 0.0 <= line.score <= 1.0 for line in outcome.lines)  # type: ignore[operator]
    files = sorted(reports.glob("*.json"))
    assert {p.stem for p in files} == {line.episode_id for line in outcome.lines}
    for path in files:
        report = json.loads(path.read_text())
        assert report["token_in_env"] is False
        assert report["toolgym_vars"] == sorted(GIVEN_VARIABLES)
        everything = json.dumps([report["seen"], report["candidates"]])
        for secret in secrets_:
            assert secret not in everything, "a control token reached the agent"
        statuses = {attempt["status"] for attempt in report["attempts"]}
        assert statuses <= REFUSED, [a for a in report["attempts"] if a["status"] not in REFUSED][:5]
        assert {401, 403, 421} <= statuses  # the token, Origin and Host checks each refused something
        assert len(report["attempts"]) > 100 and any(a["auth"] for a in report["attempts"])
        # Its MCP surface is its episode's tools, and they work; nothing there controls episodes.
        assert report["call_is_error"] is False
        assert not {name for name in report["tools"] if any(w in name for w in ("grade", "episode", "control", "reset"))}
    for line in outcome.lines:
        record = (outcome.out / line.record).read_text()  # type: ignore[operator]
        assert json.loads(record.splitlines()[1])["type"] == "tool_call"  # the agent's read reached its world


def record_tokens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The list every control token ``servers.http.new_token`` makes from now on is appended to."""
    issued: list[str] = []
    real: Callable[[], str] = servers.http.new_token

    def recording() -> str:
        token = real()
        issued.append(token)
        return token

    monkeypatch.setattr(servers.http, "new_token", recording)
    return issued


def attacker_spec(tmp_path: Path) -> tuple[str, Path]:
    script = tmp_path / "attacker.py"
    script.write_text(ATTACKER, encoding="utf-8")
    reports = tmp_path / "reports"
    reports.mkdir()
    words = [sys.executable, str(script), str(reports)]
    command = " ".join(shlex.quote(w) for w in words)
    return f"cmd:{command} {{mcp_url}} {{mcp_config}} {{prompt_file}} {{episode_id}} {{prompt}}", reports


async def test_a_cmd_agent_cannot_reach_the_control_api_of_the_runners_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoy = f"decoy-{secrets.token_urlsafe(24)}"
    monkeypatch.setenv("TOOLGYM_TOKEN", decoy)  # exported by the user, for some other server: never passed on
    spec, reports = attacker_spec(tmp_path)
    issued = record_tokens(monkeypatch)
    with anyio.fail_after(300):
        outcome = await run(RunConfig(env="finance", agent=spec, tasks=TASKS, out=tmp_path / "run", concurrency=2))
    assert len(issued) == 1  # the runner sealed its own server with a fresh token
    check_reports(reports, outcome, [*issued, decoy])


async def test_a_cmd_agent_cannot_reach_the_control_api_of_a_given_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = f"given-{secrets.token_urlsafe(32)}"
    monkeypatch.setenv("TOOLGYM_TOKEN", token)  # how `toolgym run --server URL` reads it
    spec, reports = attacker_spec(tmp_path)
    environment = load_environment("finance")
    released: list[str] = []
    with anyio.fail_after(300):
        async with running_http(environment, token=token) as server:
            server.manager.on_release.append(lambda episode: released.append(episode.id))
            config: dict[str, Any] = {"server": server.url, "token": token, "concurrency": 2}
            outcome = await run(RunConfig(env="finance", agent=spec, tasks=TASKS, out=tmp_path / "run", **config))
            assert len(server.manager) == 0  # the agent created no episode of its own
    assert sorted(released) == sorted(line.episode_id for line in outcome.lines)
    check_reports(reports, outcome, [token])
