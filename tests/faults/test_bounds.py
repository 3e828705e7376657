"""What a long-running server keeps is bounded: the records of released episodes (in bytes, shown in
health) and the shared fixture cache that free-play seeds fill (on disk)."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx

from tests.faults.processes import http_server, tool_call


async def test_released_records_and_the_fixture_cache_are_bounded(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    bound = 3_000
    env = {"TOOLGYM_CACHE_DIR": str(cache), "TOOLGYM_CACHE_MAX_MB": "0.0001"}  # less than one template
    async with http_server("--history-mb", str(bound / 2**20), env=env) as server, httpx.AsyncClient(timeout=30) as http:
        with anyio.fail_after(90):
            for seed in range(12):
                # Free play on a new fixture seed each time: each is built and written to the shared cache.
                episode = (await server.create(http, None, seed % 6 + 1)).json()["id"]
                for ident in range(3):
                    await server.call(http, episode, tool_call(ident, "list_accounts", {}, modern=True))
                finished = await http.post(f"{server.url}/control/episodes/{episode}/finish", json={}, headers=server.headers)
                assert finished.json()["released"] is True
            health = (await http.get(f"{server.url}/control/health", headers=server.headers)).json()
    released = health["released"]
    assert released["max_bytes"] == bound and 0 < released["bytes"] <= bound, released
    assert 0 < released["records"] < 12  # the oldest went first
    templates = sorted(p.name for p in cache.glob("toy-*.sqlite"))
    assert len(templates) == 1, templates  # pruned after every write: only the one just written stays
