"""Health off the event loop (servers/health.py): its listener process and the loop's heartbeat. Its latency
under load is measured by ``bench/health.py``, not here."""

from __future__ import annotations

import time

import anyio
import httpx

from servers.health import HealthProcess, Heartbeat, Progress


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


async def test_the_heartbeat_tells_a_slow_loop_from_a_stuck_one() -> None:
    beats: list[float] = []
    progress = Progress()
    heartbeat = Heartbeat(on_beat=lambda: beats.append(time.monotonic()), stall_after=0.5, progress=progress)
    async with anyio.create_task_group() as tg:
        tg.start_soon(heartbeat.run)
        await anyio.sleep(0.25)
        assert heartbeat.state()["stalled"] is False and beats
        # Busy for 1 s without a beat, but serving requests all along (what CPU starvation looks like): late
        # by a second, twice the stall bound, and not stalled.
        for _ in range(10):
            time.sleep(0.1)  # noqa: ASYNC251 - the loop blocked on purpose
            progress.tick()
            heartbeat.idle()  # what the watch thread does every quarter second
        busy = heartbeat.state()
        assert busy["lag_ms"] >= 900 and busy["stalled"] is False and busy["no_progress_ms"] < 500
        time.sleep(0.7)  # noqa: ASYNC251 - now stuck: no beat and no request for longer than stall_after
        stuck = heartbeat.state()
        assert stuck["stalled"] is True and stuck["no_progress_ms"] >= 500
        tg.cancel_scope.cancel()
