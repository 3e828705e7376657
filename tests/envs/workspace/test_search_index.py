"""Workspace searches through trigram indexes (people, issues, pages, messages) answer exactly what reading the table
answers: same rows, same order, same totals, for every kind of text an agent may send."""

from __future__ import annotations

import random
from typing import Any

import pytest

from envs.workspace.tools import chat, docs, people, tracker
from servers.dispatch import call_tool
from servers.episodes import EpisodeManager
from servers.registry import load_environment

SEARCHES = {  # tool → (its module, the texts its query is matched against)
    "search_people": (people, "SELECT u.name, u.handle, u.email, u.title, t.name FROM users u JOIN teams t USING (team_id)"),
    "search_issues": (tracker, "SELECT title, description FROM issues"),
    "search_pages": (docs, "SELECT title, body FROM pages"),
    "search_messages": (chat, "SELECT body FROM messages"),
}
ODD = ["%", "_a", "\\x", "''", '"q"', "Ⅻ", "ÉT", "é", "  ", "a b", "@", "zzzz", "İ", "--", ".co", "ISS-", "x" * 100]


def _texts(world: Any, sql: str, rng: random.Random) -> list[str]:
    sources = [str(v) for row in world.execute(sql).fetchall() for v in row if v]
    texts = list(ODD)
    for _ in range(60):  # substrings of real texts, their case shuffled
        source = rng.choice(sources)
        start = rng.randrange(len(source))
        piece = source[start : start + rng.randint(2, 12)]
        texts.append("".join(c.upper() if rng.random() < 0.5 else c.lower() for c in piece))
    return [t for t in texts if len(t.strip()) >= 2]


@pytest.mark.parametrize("tool", sorted(SEARCHES))
async def test_indexed_search_equals_reading_the_table(tool: str, monkeypatch: pytest.MonkeyPatch) -> None:
    environment = load_environment("workspace")
    manager = EpisodeManager(environment, history=0)
    episode = manager.create(None, 0)
    module, sql = SEARCHES[tool]
    indexed, scanned = [], []
    texts = _texts(episode.world, sql, random.Random(tool))
    for text in texts:
        indexed.append(await call_tool(episode, tool, {"query": text, "limit": 50}))
    monkeypatch.setattr(module, "match", lambda *args: None)  # the same tool, reading the whole table
    for text in texts:
        scanned.append(await call_tool(episode, tool, {"query": text, "limit": 50}))
    for text, a, b in zip(texts, indexed, scanned, strict=True):
        assert (a.result, a.error) == (b.result, b.error), text
    assert sum(1 for e in indexed if e.result and e.result.get("total")) >= len(texts) // 3  # the texts do find rows
    manager.close_all()
