"""Running out of memory: a server under ``ulimit -v`` refuses the worlds it cannot hold, and nothing else breaks.

Issue 19: under a 3 GB address-space limit, 400-500 concurrent episodes made the server abort (SIGABRT) or
answer creates with 500 and drop sessions (``MemoryError`` in the socket reader). Now the budget comes from
the limit itself (``--max-memory auto``), a create that would not fit is a clean 503 naming the limit, and
live episodes keep answering.
"""

from __future__ import annotations

import anyio
import httpx
from mcp import Client

from tests.faults.limited import limited_server

ADDRESS_SPACE = 900 * 2**20
"""Room for the finance server's ~300 MB address space and a few dozen 8.5 MB worlds, not for 200."""

CREATES = 200
EXTRA: tuple[str, ...] = ()
"""Extra serve flags (`("--max-memory", "none")` shows the old behaviour: 500s)."""


async def test_creates_past_an_address_space_limit_are_clean_503s() -> None:
    with anyio.fail_after(240):
        async with limited_server("envs.finance", *EXTRA, limits={"RLIMIT_AS": ADDRESS_SPACE}) as server:
            assert EXTRA or "RLIMIT_AS" in server.log()  # the banner names the budget it found
            limits = httpx.Limits(max_connections=32)
            async with httpx.AsyncClient(timeout=60, limits=limits) as http:
                first = await http.post(f"{server.url}/control/episodes", json={}, headers=server.headers)
                assert first.status_code == 201, first.text
                live = first.json()

                statuses: list[int] = []
                bodies: list[dict[str, object]] = []

                async def create() -> None:
                    response = await http.post(f"{server.url}/control/episodes", json={}, headers=server.headers)
                    statuses.append(response.status_code)
                    bodies.append(response.json())

                async with anyio.create_task_group() as tg:
                    for _ in range(CREATES):
                        tg.start_soon(create)
                refused = [b for s, b in zip(statuses, bodies, strict=True) if s == 503]
                assert set(statuses) <= {201, 503}, sorted(set(statuses))
                assert refused and statuses.count(201) >= 3, statuses.count(201)
                assert {b["error"] for b in refused} == {"memory_limit"}
                message = str(refused[0]["message"])
                assert "memory limit reached" in message and "RLIMIT_AS" in message and "MB in use" in message

                # the episodes already running keep working, over MCP
                async with Client(live["mcp_url"]) as client:
                    assert not (await client.call_tool("list_accounts", {"customer_id": "CUS-00001"})).is_error
                health = await server.health(http)
                assert health.status_code == 200
                memory = health.json()["limits"]["memory"]
                assert memory["refused"] == len(refused) and memory["max_bytes"] == ADDRESS_SPACE

                # /mcp sessions are held to the same budget, with the same words
                try:
                    async with Client(f"{server.url}/mcp", mode="legacy") as client:
                        await client.list_tools()
                except BaseException as exc:  # noqa: BLE001 - an exception group from the client's task group
                    assert "memory limit reached" in repr(exc), repr(exc)

                # freeing worlds makes room again
                for body in bodies:
                    if "id" in body:
                        await http.delete(f"{server.url}/control/episodes/{body['id']}", headers=server.headers)
                again = await http.post(f"{server.url}/control/episodes", json={}, headers=server.headers)
                assert again.status_code == 201, again.text
            assert server.process.returncode is None
            assert "Traceback" not in server.log() and "MemoryError" not in server.log(), server.log()[-3000:]
