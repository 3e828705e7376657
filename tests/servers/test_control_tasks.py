"""``GET /control/tasks``: the task templates' metadata for remote runners, sealed like the rest of /control."""

from __future__ import annotations

import httpx

from servers.http import running_http
from servers.registry import load_environment


async def test_tasks_lists_metadata_in_order_and_nothing_gradable() -> None:
    environment = load_environment("finance")
    async with running_http(environment) as server, httpx.AsyncClient() as http:
        refused = await http.get(f"{server.control_url}/tasks")
        assert refused.status_code == 401
        listed = await http.get(f"{server.control_url}/tasks", headers=server.control_headers)
    assert listed.status_code == 200
    rows = listed.json()["tasks"]
    assert [row["id"] for row in rows] == list(environment.task_templates())
    for row in rows:
        assert set(row) == {"id", "difficulty", "category", "split", "tags", "tools", "description"}
        assert row["split"] in ("train", "test")
