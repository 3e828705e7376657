"""The control API's lean paths: create with the oracle, one ``finish`` after play, bounded bodies and errors."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

import graders.grading
import servers.control
from servers import EpisodeManager
from servers.control import MAX_BODY_BYTES
from servers.http import HttpServer, running_http
from tests.toy_env import environment


def control_client(server: HttpServer) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=server.control_url, headers=server.control_headers)


async def test_create_returns_the_oracle_only_when_asked() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, control_client(server) as http:
            plain = (await http.post("/episodes", json={"task": "pay_back", "seed": 1})).json()
            assert "oracle" not in plain
            body = (await http.post("/episodes", json={"task": "pay_back", "seed": 1, "oracle": True})).json()
            instance = server.manager.get(body["id"]).task
            assert instance is not None
            assert body["oracle"] == [step.model_dump(mode="json") for step in instance.oracle]
            free = (await http.post("/episodes", json={"oracle": True})).json()
            assert free["oracle"] is None
            async with httpx.AsyncClient(base_url=server.control_url) as anonymous:  # never without the token
                assert (await anonymous.post("/episodes", json={"task": "pay_back", "oracle": True})).status_code == 401


async def test_finish_closes_grades_returns_the_record_and_releases() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, control_client(server) as http:
            body = (await http.post("/episodes", json={"task": "pay_back", "seed": 3, "oracle": True})).json()
            async with Client(body["mcp_url"]) as client:
                for step in body["oracle"]:
                    assert not (await client.call_tool(step["tool"], step["arguments"])).is_error
            finished = await http.post(f"/episodes/{body['id']}/finish", json={"reason": "done"})
            assert finished.status_code == 200, finished.text
            result = finished.json()
            assert result["grade"]["passed"] is True and result["grade"]["score"] == 1.0
            assert "grade_error" not in result and result["released"] is True and result["state"] == "closed"
            events = result["record"]["events"]
            assert [e["type"] for e in events] == ["tool_call"] * len(body["oracle"]) + ["closed"]
            assert events[-1]["reason"] == "done" and events[-1]["end_hash"] == result["end_hash"]
            assert server.manager.list() == []
            assert (await http.get(f"/episodes/{body['id']}/record")).json()["events"] == events  # still readable


async def test_finish_options_and_free_play() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, control_client(server) as http:
            free = (await http.post("/episodes", json={})).json()
            result = (await http.post(f"/episodes/{free['id']}/finish", json={"record": False, "release": False})).json()
            assert result["grade"] is None and result["grade_error"]["error"] == "not_gradable"
            assert "record" not in result and result["released"] is False
            assert server.manager.get(free["id"]).state == "closed"
            bad = await http.post(f"/episodes/{free['id']}/finish", json={"reason": "x" * 100})
            assert bad.status_code == 400 and bad.json()["error"] == "invalid_body"
            assert (await http.post("/episodes/ep-ghost/finish", json={})).status_code == 404


async def test_a_large_diff_is_graded_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[threading.Thread] = []
    original = graders.grading.grade_episode

    async def spy(episode, **options):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread())
        return await original(episode, **options)

    monkeypatch.setattr(graders.grading, "grade_episode", spy)
    monkeypatch.setattr(servers.control, "GRADE_IN_THREAD_CHANGES", 0)  # every diff counts as large here
    with anyio.fail_after(20):
        async with running_http(environment) as server, control_client(server) as http:
            body = (await http.post("/episodes", json={"task": "pay_back", "seed": 2, "oracle": True})).json()
            async with Client(body["mcp_url"]) as client:
                for step in body["oracle"]:
                    await client.call_tool(step["tool"], step["arguments"])
            result = (await http.post(f"/episodes/{body['id']}/finish", json={})).json()
    assert result["grade"]["passed"] is True
    assert threads and threads[0] is not threading.main_thread()


async def test_episodes_are_created_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[threading.Thread] = []
    original = environment.new_world

    def spy(seed: int):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread())
        return original(seed)

    monkeypatch.setattr(environment, "new_world", spy)
    with anyio.fail_after(20):
        async with running_http(environment) as server, control_client(server) as http:
            assert (await http.post("/episodes", json={"seed": 0})).status_code == 201
            async with Client(server.mcp_url) as client:  # a /mcp session's episode too
                await client.call_tool("list_accounts", {})
    assert len(threads) == 2 and all(t is not threading.main_thread() for t in threads)


async def test_a_body_past_the_limit_is_413_and_creates_nothing() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, control_client(server) as http:
            huge = b'{"task": "' + b"x" * (MAX_BODY_BYTES + 10) + b'"}'
            declared = await http.post("/episodes", content=huge, headers={"content-type": "application/json"})
            assert declared.status_code == 413 and declared.json()["error"] == "body_too_large"

            async def chunks():  # no content-length: the limit holds while the body is read
                for _ in range(40):
                    yield b" " * 4096

            streamed = await http.post("/episodes", content=chunks(), headers={"content-type": "application/json"})
            assert streamed.status_code == 413
            assert server.manager.list() == []


async def test_an_unknown_task_id_is_never_echoed_in_full() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, control_client(server) as http:
            task = "t" * 150  # at the body model's limit of 200
            response = await http.post("/episodes", json={"task": task})
            assert response.status_code == 400 and response.json()["error"] == "unknown_task"
            assert task not in response.json()["message"] and "150 characters" in response.json()["message"]
            too_long = await http.post("/episodes", json={"task": "t" * 5000})
            assert too_long.status_code == 400 and len(too_long.text) < 1000


async def test_an_unwritable_record_is_a_500_not_a_crash(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    manager = EpisodeManager(environment, record_dir=blocker / "records")
    with anyio.fail_after(20):
        async with running_http(environment, manager=manager) as server, control_client(server) as http:
            response = await http.post("/episodes", json={})
            assert response.status_code == 500 and response.json()["error"] == "record_unwritable"
            assert "cannot write the record" in response.json()["message"]
            assert server.manager.list() == []
            assert (await http.get("/health")).status_code == 200


async def test_a_grader_that_raises_is_a_json_error_and_finish_keeps_the_episode() -> None:
    """Issue 17: a grader that raised made /grade and /finish answer a bare 500, and finish released anyway."""
    from tests.graders.fragile import environment as fragile

    hostile = {"answer": "x", "amount": "1e999999999"}
    with anyio.fail_after(30):
        async with running_http(fragile) as server, control_client(server) as http:
            ids = []
            for _ in range(2):
                body = (await http.post("/episodes", json={"task": "fragile_lookup", "seed": 0, "oracle": True})).json()
                async with Client(body["mcp_url"]) as client:
                    await client.call_tool(body["oracle"][0]["tool"], body["oracle"][0]["arguments"])
                    assert not (await client.call_tool("submit_answer", hostile)).is_error
                ids.append(body["id"])
            graded = await http.post(f"/episodes/{ids[0]}/grade")
            assert graded.status_code == 422, graded.text
            assert graded.json()["error"] == "grading_error"
            assert "careless_amount' crashed: Overflow" in graded.json()["message"]
            finished = await http.post(f"/episodes/{ids[1]}/finish", json={})
            assert finished.status_code == 200, finished.text
            result = finished.json()
            assert result["grade"] is None and result["grade_error"]["error"] == "grading_error"
            assert "crashed: Overflow" in result["grade_error"]["message"]
            assert result["released"] is False and result["record"]["events"][-1]["type"] == "closed"
            assert server.manager.get(ids[1]).state == "closed"  # its world is kept, to grade it again once fixed
            assert (await http.delete(f"/episodes/{ids[1]}")).status_code == 200
