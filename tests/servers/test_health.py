"""Health off the event loop (servers/health.py): its listener process and the loop's heartbeat. Its latency
under load is measured by ``bench/health.py``, not here."""

from __future__ import annotations

import time

import anyio
import httpx

from servers.health import HealthProcess, Heartbeat


def test_the_listener_answers_the_latest_snapshot_to_the_token_only() -> None:
    listener = HealthProcess("127.0.0.1", 0, token="t0ken", allowed_hosts=["127.0.0.1:*"], stall_after=1.0)
    try:
        listener.publish({"status": "ok", "env": "toy", "loop": {"lag_ms": 0.0, "stalled": False}})
        auth = {"Authorization": "Bearer t0ken"}
        deadline = time.monotonic() + 60  # its child process starts and takes the snapshot: slow on a busy machine
        while (answer := httpx.get(listener.url, headers=auth)).json().get("env") != "toy" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert answer.status_code == 200 and answer.json()["loop"]["stalled"] is False
        assert httpx.get(listener.url.replace("/health", "/control/health"), headers=auth).status_code == 200
        assert httpx.get(listener.url).status_code == 401
        assert httpx.get(listener.url, headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert httpx.get(listener.url.replace("/health", "/episodes"), headers=auth).status_code == 404
        assert httpx.get(listener.url, headers={**auth, "Host": "evil.example"}).status_code == 421
        time.sleep(1.2)  # no snapshot for longer than stall_after: the loop has stopped beating
        stalled = httpx.get(listener.url, headers=auth)
        assert stalled.status_code == 503 and stalled.json()["status"] == "stalled"
        assert stalled.json()["loop"]["lag_ms"] >= 1000
    finally:
        listener.stop()
    assert listener._child.returncode is not None  # the child is gone with its pipe


async def test_the_heartbeat_tells_a_busy_loop_from_a_stuck_one() -> None:
    beats: list[float] = []
    heartbeat = Heartbeat(on_beat=lambda: beats.append(time.monotonic()))
    async with anyio.create_task_group() as tg:
        tg.start_soon(heartbeat.run)
        await anyio.sleep(0.25)
        assert heartbeat.state()["stalled"] is False and beats
        time.sleep(0.3)  # noqa: ASYNC251 - the loop blocked on purpose: it shows as late, not yet stalled
        assert heartbeat.state()["lag_ms"] >= 150
        tg.cancel_scope.cancel()
    heartbeat.last -= 3600
    assert heartbeat.state()["stalled"] is True
