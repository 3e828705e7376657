"""The control API over HTTP: episode lifecycle, records, errors as JSON (its seal: test_control_security.py)."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

from fixtures import World
from graders.criteria import state
from graders.tasks import TaskDraft, TaskTemplate, call
from servers import EpisodeManager, read_record
from servers.http import HttpServer, running_http
from tests.toy_env import environment


def control_client(server: HttpServer) -> httpx.AsyncClient:
    """A control API client of ``server`` that carries its token (as a runner's does)."""
    return httpx.AsyncClient(base_url=server.control_url, headers=server.control_headers)


async def test_health_and_environment() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, control_client(server) as http:
            health = await http.get("/health")
            assert health.status_code == 200
            body = health.json()
            loop = body.pop("loop")
            assert loop["stalled"] is False and loop["lag_ms"] >= 0  # the event loop's heartbeat (servers/health.py)
            connections = body["limits"].pop("connections")  # within the open-files limit (servers/accept.py)
            assert connections["open"] >= 1 and connections["max"] > connections["open"] and connections["overflow"] == 0
            # Requests dropped for a vanished client or session: process-wide counts (servers/dropped.py)
            assert set(body.pop("dropped")) == {"client_left", "session_ended", "late_answers"}
            assert body == {
                "status": "ok",
                "env": "toy",
                "episodes": 0,
                "limits": {
                    "episodes": {"open": 0, "max": 1024},
                    "mcp_sessions": {"open": 0, "max": 64},
                    "episode_sessions": {"open": 0, "max_per_episode": 4},
                    "sessions_evicted": 0,
                },
                "released": {"records": 0, "bytes": 0, "max_records": 4096, "max_bytes": 16 * 2**20},
                "creates": {"in_progress": 0, "abandoned": 0},
            }
            env = (await http.get("/environment")).json()
            assert env["name"] == "toy" and env["tasks"] == 1
            assert [t["name"] for t in env["tools"]] == ["list_accounts", "get_account", "transfer", "submit_answer"]
            assert {t["name"]: t["read_only"] for t in env["tools"]}["transfer"] is False
            assert env["answer_tools"] == ["submit_answer"] and env["resources"] == ["toy://policy"]


async def test_episode_lifecycle() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, control_client(server) as http:
            created = await http.post("/episodes", json={"task": "pay_back", "seed": 2})
            assert created.status_code == 201
            body = created.json()
            ident = body["id"]
            assert set(body) == {"id", "mcp_url", "prompt", "task", "seed", "start_hash"}
            assert body["mcp_url"] == server.episode_url(ident)
            assert body["task"] == "pay_back" and body["seed"] == 2 and "owes" in body["prompt"]
            assert body["start_hash"] == server.manager.get(ident).world.hash()

            async with Client(body["mcp_url"]) as client:
                await client.call_tool("transfer", {"from_account": "acc-001", "to_account": "acc-002", "amount": "4.00"})

            listing = (await http.get("/episodes")).json()["episodes"]
            assert [(e["id"], e["state"], e["tool_calls"], e["mcp_url"]) for e in listing] == [(ident, "live", 1, body["mcp_url"])]
            shown = (await http.get(f"/episodes/{ident}")).json()
            assert shown["state"] == "live" and shown["end_hash"] is None and shown["task"] == "pay_back"

            closed = await http.post(f"/episodes/{ident}/close")
            assert closed.status_code == 200
            assert closed.json()["state"] == "closed"
            assert closed.json()["end_hash"] == server.manager.get(ident).world.hash()

            record = (await http.get(f"/episodes/{ident}/record")).json()
            assert record["header"]["episode_id"] == ident
            assert [e["type"] for e in record["events"]] == ["tool_call", "closed"]
            assert record["events"][0]["changes"][0]["table"] == "accounts"

            jsonl = await http.get(f"/episodes/{ident}/record", params={"format": "jsonl"})
            assert jsonl.status_code == 200 and jsonl.headers["content-type"].startswith("application/jsonl")
            lines = [json.loads(line) for line in jsonl.text.splitlines()]
            assert [line["type"] for line in lines] == ["episode", "tool_call", "closed"]

            released = await http.delete(f"/episodes/{ident}")
            assert released.status_code == 200 and released.json() == {"id": ident, "released": True}
            assert (await http.get("/episodes")).json()["episodes"] == []
            assert (await http.get(f"/episodes/{ident}")).status_code == 404
            # The record outlives the world.
            after = await http.get(f"/episodes/{ident}/record", params={"format": "jsonl"})
            assert after.status_code == 200 and after.text == jsonl.text


async def test_free_play_defaults_and_record_file(tmp_path: Path) -> None:
    record_dir = tmp_path
    with anyio.fail_after(20):
        manager = EpisodeManager(environment, record_dir=record_dir)
        async with running_http(environment, manager=manager) as server, control_client(server) as http:
            body = (await http.post("/episodes")).json()
            assert body["task"] is None and body["seed"] == 0 and body["prompt"] is None
            assert body["start_hash"] == environment.fixture.template(0).hash
            await http.post(f"/episodes/{body['id']}/close")
        record = read_record(record_dir / f"{body['id']}.jsonl", require_closed=True)
        assert record.header.episode_id == body["id"]


async def test_unknown_episode_is_404_everywhere() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, control_client(server) as http:
            for method, path in (
                ("GET", "/episodes/ep-ghost"),
                ("GET", "/episodes/ep-ghost/record"),
                ("POST", "/episodes/ep-ghost/close"),
                ("POST", "/episodes/ep-ghost/grade"),
                ("DELETE", "/episodes/ep-ghost"),
            ):
                response = await http.request(method, path)
                assert response.status_code == 404, (method, path)
                assert response.json()["error"] == "episode_not_found"
                assert "ep-ghost" in response.json()["message"]
            missing = await http.get("/nothing-here")
            assert missing.status_code == 404 and missing.json()["error"] == "not_found"
            wrong_method = await http.put("/episodes")
            assert wrong_method.status_code == 405


@pytest.mark.parametrize(
    ("content", "code", "fragment"),
    [
        (b"{not json", "invalid_json", "not valid JSON"),
        (b"[1, 2]", "invalid_body", "must be a JSON object"),
        (b'{"seed": "3"}', "invalid_body", "seed: Input should be a valid integer"),
        (b'{"seed": -1}', "invalid_body", "seed: Input should be greater than or equal to 0"),
        (b'{"seed": 1.5}', "invalid_body", "seed: Input should be a valid integer"),
        (b'{"task": 7}', "invalid_body", "task: Input should be a valid string"),
        (b'{"tsak": "pay_back"}', "invalid_body", "tsak: unknown argument"),
    ],
)
async def test_bad_body_is_400_and_creates_nothing(content: bytes, code: str, fragment: str) -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, control_client(server) as http:
            response = await http.post("/episodes", content=content, headers={"content-type": "application/json"})
            assert response.status_code == 400
            assert response.json()["error"] == code
            assert fragment in response.json()["message"]
            assert server.manager.list() == []


async def test_unknown_task_is_400_naming_the_task() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, control_client(server) as http:
            response = await http.post("/episodes", json={"task": "rob_the_bank"})
            assert response.status_code == 400
            assert response.json()["error"] == "unknown_task"
            assert "'rob_the_bank'" in response.json()["message"] and "pay_back" in response.json()["message"]
            assert server.manager.list() == []


async def test_episode_limit_is_503() -> None:
    with anyio.fail_after(20):
        manager = EpisodeManager(environment, max_live=1)
        async with running_http(environment, manager=manager) as server, control_client(server) as http:
            assert (await http.post("/episodes", json={})).status_code == 201
            full = await http.post("/episodes", json={})
            assert full.status_code == 503 and full.json()["error"] == "episode_limit"
            assert len(server.manager.list()) == 1


async def test_bad_record_format_is_400() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, control_client(server) as http:
            ident = (await http.post("/episodes", json={})).json()["id"]
            response = await http.get(f"/episodes/{ident}/record", params={"format": "xml"})
            assert response.status_code == 400 and response.json()["error"] == "invalid_format"


async def test_free_play_episode_cannot_be_graded() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, control_client(server) as http:
            ident = (await http.post("/episodes", json={})).json()["id"]
            response = await http.post(f"/episodes/{ident}/grade")
            assert response.status_code == 409 and response.json()["error"] == "not_gradable"
            assert server.manager.get(ident).state == "live"


async def test_grading_a_task_episode() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, control_client(server) as http:
            good = (await http.post("/episodes", json={"task": "pay_back", "seed": 5})).json()
            idle = (await http.post("/episodes", json={"task": "pay_back", "seed": 5})).json()
            instance = server.manager.get(good["id"]).task
            assert instance is not None
            async with Client(good["mcp_url"]) as client:  # play the oracle as an agent would
                for step in instance.oracle:
                    result = await client.call_tool(step.tool, step.arguments)
                    assert not result.is_error, result.content
            passed = await http.post(f"/episodes/{good['id']}/grade")
            assert passed.status_code == 200, passed.text
            grade = passed.json()
            assert grade["passed"] is True and grade["score"] == 1.0
            assert grade["episode_id"] == good["id"] and grade["template_id"] == "pay_back"
            assert {"debt paid once", "answered"} <= {c["name"] for c in grade["criteria"]}  # graders may add generic ones
            assert server.manager.get(good["id"]).state == "closed"  # grading closes the episode first

            failed = (await http.post(f"/episodes/{idle['id']}/grade")).json()
            assert failed["passed"] is False and failed["score"] == 0.0 and failed["failed_gates"] == ["debt paid once"]


async def test_grading_without_graders_installed_is_501(monkeypatch: pytest.MonkeyPatch) -> None:
    # An installation without the graders package: the import system refuses graders.grading.
    monkeypatch.setitem(sys.modules, "graders.grading", None)
    with anyio.fail_after(20):
        async with running_http(environment) as server, control_client(server) as http:
            ident = (await http.post("/episodes", json={"task": "pay_back"})).json()["id"]
            response = await http.post(f"/episodes/{ident}/grade")
            assert response.status_code == 501 and response.json()["error"] == "grading_unavailable"
            assert "graders.grading" in response.json()["message"]
            assert server.manager.get(ident).state == "live"  # nothing happened to the episode


def broken_rubric(world: World, rng: random.Random) -> TaskDraft:
    """A task whose rubric queries a table the world does not have (a rubric bug, not an agent failure)."""
    return TaskDraft(
        prompt="List the accounts.",
        oracle=[call("list_accounts")],
        rubric=[state("SELECT count(*) FROM ledgers", expect=1, name="ledger exists")],
    )


async def test_a_rubric_that_cannot_be_evaluated_is_422() -> None:
    broken = environment.with_templates([TaskTemplate(broken_rubric)], name="toy-broken")
    with anyio.fail_after(20):
        async with running_http(broken) as server, control_client(server) as http:
            ident = (await http.post("/episodes", json={"task": "broken_rubric"})).json()["id"]
            response = await http.post(f"/episodes/{ident}/grade")
            assert response.status_code == 422 and response.json()["error"] == "grading_error"
            assert "ledger exists" in response.json()["message"] and "no such table: ledgers" in response.json()["message"]
