"""The workspace fixture: deterministic across processes, small, believable, with every situation the tasks need."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio

from envs.workspace import FIXTURE, rules
from envs.workspace.catalog import TODAY
from fixtures.world import World

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = "import sys; from envs.workspace import FIXTURE; print(*(FIXTURE.template(int(s)).hash for s in sys.argv[1:]))"


def _world() -> World:
    return FIXTURE.world(0)


def _n(world: World, sql: str, params: tuple[object, ...] = ()) -> int:
    return int(next(iter(world.query(sql, params)[0].values())))


async def test_same_seed_same_world_in_fresh_processes_and_seeds_differ() -> None:
    results: dict[str, list[str]] = {}

    async def run(name: str, hash_seed: str, *seeds: int) -> None:
        env = {**os.environ, "TOOLGYM_CACHE_DIR": "off", "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
        done = await anyio.run_process([sys.executable, "-c", SCRIPT, *map(str, seeds)], env=env, cwd=ROOT, check=False)
        assert done.returncode == 0, done.stderr.decode()
        results[name] = done.stdout.decode().split()

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            group.start_soon(run, "a", "0", 0)
            group.start_soon(run, "b", "4242", 0, 1)
    assert results["a"][0] == results["b"][0] == FIXTURE.template(0).hash
    assert results["b"][1] != results["b"][0]


def test_build_is_fast_and_the_template_small() -> None:
    import random

    import sqlite_utils

    from envs.workspace.generator import generate
    from envs.workspace.schema import SCHEMA

    db = sqlite_utils.Database(memory=True)
    db.conn.executescript(SCHEMA)
    started = time.process_time()  # CPU time: a busy machine stretches the wall clock, not this
    generate(db, random.Random(7), 1)
    assert time.process_time() - started < 5
    size = db.conn.execute("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()").fetchone()[0]
    assert size < 8_000_000


def test_row_counts_and_the_mess_tasks_need() -> None:
    world = _world()
    assert _n(world, "SELECT count(*) FROM users") == 150 and _n(world, "SELECT count(*) FROM teams") == 11
    assert 2500 <= _n(world, "SELECT count(*) FROM messages") <= 6000
    assert 900 <= _n(world, "SELECT count(*) FROM issues") <= 1300
    assert _n(world, "SELECT count(*) FROM pages") >= 130 and _n(world, "SELECT count(*) FROM events") >= 500
    assert _n(world, "SELECT count(DISTINCT tz) FROM users") >= 4
    assert _n(world, "SELECT count(*) FROM leaves WHERE starts_on <= ? AND ends_on >= ?", (TODAY.isoformat(), TODAY.isoformat())) >= 3
    assert _n(world, "SELECT count(*) FROM messages WHERE thread_of IS NOT NULL") > 200
    assert _n(world, "SELECT count(*) FROM issue_relations WHERE kind = 'blocks'") > 30
    assert _n(world, "SELECT count(*) FROM issues WHERE parent_id IS NOT NULL") > 5
    assert _n(world, "SELECT count(*) FROM pages WHERE restricted = 1") > 10
    assert _n(world, "SELECT count(*) FROM pages WHERE updated_at < '2025-06-01'") > 10, "stale pages"
    bodies = [r["body"] for r in world.query("SELECT body FROM messages")]
    assert sum(rules.find_secret(b) is not None for b in bodies) >= 2, "live credentials pasted in chat"
    assert sum("XXXXXXXX" in b or "<your-key" in b for b in bodies) >= 1, "placeholders that are not secrets"
    assert any("assistant" in b.lower() or "bot" in b.lower() for b in bodies), "instructions aimed at an assistant"
    titles = [r["title"] for r in world.query("SELECT title FROM issues")]
    assert len(titles) - len(set(titles)) > 50, "duplicate issue titles"
    overlaps = _n(world, "SELECT count(*) FROM attendees a JOIN events e USING (event_id) JOIN attendees b ON b.user_id = a.user_id AND "
                         "b.event_id > a.event_id JOIN events f ON f.event_id = b.event_id WHERE e.starts_at < f.ends_at AND f.starts_at < e.ends_at")
    assert overlaps > 0, "conflicting meetings"
    assert _n(world, "SELECT count(*) FROM channel_members WHERE user_id = ?", (rules.AGENT,)) >= 15
    assert _n(world, "SELECT count(*) FROM project_members WHERE user_id = ?", (rules.AGENT,)) == 5
