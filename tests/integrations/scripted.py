"""What the framework tests script and compare against: a task instance's oracle, the plays derived from it, and
toolgym's own grade of the same calls (in-process, no framework in between)."""

from __future__ import annotations

from typing import Any

import httpx

from clients.rl import open_episode
from servers.http import HttpServer

__all__ = ["oracle_of", "variant", "toolgym_grade", "VARIANTS"]

VARIANTS = ("oracle", "skip_first", "answer_only", "noop")
"""Plays derived from an oracle: the whole of it, without its first step, its last call alone, nothing."""


async def oracle_of(server: HttpServer, client: httpx.AsyncClient, task: str, seed: int = 0) -> tuple[str, list[dict[str, Any]]]:
    """The prompt and oracle tool calls of (task, seed) on ``server`` (the episode is released at once)."""
    response = await client.post(
        f"{server.control_url}/episodes", json={"task": task, "seed": seed, "oracle": True}, headers=server.control_headers
    )
    created = response.json()
    await client.delete(f"{server.control_url}/episodes/{created['id']}", headers=server.control_headers)
    return created["prompt"], created["oracle"]


def variant(oracle: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """One of :data:`VARIANTS` of ``oracle``."""
    return {"oracle": oracle, "skip_first": oracle[1:], "answer_only": oracle[-1:], "noop": []}[kind]


async def toolgym_grade(env: str, task: str, seed: int, calls: list[dict[str, Any]]) -> Any:
    """toolgym's grade of ``calls`` played on (task, seed) in-process."""
    async with open_episode(env, task=task, seed=seed) as episode:
        for call in calls:
            await episode.step(call["tool"], call.get("arguments") or {})
        return (await episode.finish()).grade
