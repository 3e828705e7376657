"""``toolgym new`` on the Chinook sample database (from PyPI): the package, its tools over MCP, its proved templates."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from clients.validation import validation_path
from graders.metaeval import check_environment
from servers import Environment, EpisodeManager, connect_in_memory

REPO = Path(__file__).resolve().parents[2]
# one template of each kind, proved on 20 seeds with every attack class (the CLI run checked all of them on 2)
PROVED = ["lookup_customer", "join_track_album_artist", "total_total_invoice_of_customer", "do_reprice_track",
          "do_update_customer_contact", "latest_add_invoice_line"]


def test_package_layout_and_kept_templates(chinook_project: Path) -> None:
    package = chinook_project / "chinook_env"
    assert {p.name for p in package.iterdir()} >= {"__init__.py", "__main__.py", "spec.json", "data.sqlite", "policy.md",
                                                   "tasks.py", "templates.json"}
    assert 'chinook = "chinook_env:environment"' in (chinook_project / "pyproject.toml").read_text()
    kept = json.loads((package / "templates.json").read_text())
    kinds = {t.split("_")[0] for t in kept["kept"]}
    assert len(kept["kept"]) >= 20, kept
    assert kinds >= {"lookup", "join", "count", "total", "latest", "largest", "do"}, kinds
    assert all(reason for reason in kept["dropped"].values())
    policy = (package / "policy.md").read_text()
    for code in ("price_over_limit", "long_track_fixed_price", "quantity_over_limit", "invoice_closed", "identity_not_verified"):
        assert f"`{code}`" in policy


def test_the_validation_file_lives_in_the_package_and_ships_with_it(chinook_project: Path, chinook_env: Environment) -> None:
    assert validation_path(chinook_env) == (chinook_project / "chinook_env" / "validation.jsonl").resolve()
    assert '"validation.jsonl"' in (chinook_project / "pyproject.toml").read_text()  # package data: installs ship it


async def test_check_twenty_seeds(chinook_env: Environment) -> None:
    report = await check_environment(chinook_env, seeds=20, templates=PROVED)
    assert report.ok, report.summary()
    assert all(t.distinct >= 18 for t in report.templates)


async def test_tools_over_mcp(chinook_env: Environment) -> None:
    episode = EpisodeManager(chinook_env).create(seed=0)
    world = episode.world
    start = world.hash()
    async with connect_in_memory(episode) as client:
        found = await client.call_tool("search_customers", {"query": "Gonçalves"})
        customer = found.structured_content["items"][0]
        one = await client.call_tool("get_customer", {"customer_id": customer["customer_id"]})
        page = await client.call_tool("search_invoices", {"customer_id": customer["customer_id"], "limit": 2})
        tracks = await client.call_tool("search_tracks", {"query": "Balls to the Wall"})
        track = tracks.structured_content["items"][0]
        over = await client.call_tool("reprice_track", {"track_id": track["track_id"], "unit_price": "2.50"})
        unverified = await client.call_tool("update_customer_contact", {"customer_id": customer["customer_id"], "city": "Porto"})
        bad = await client.call_tool("get_customer", {"customer_id": "x" * 5})
        assert world.hash() == start  # refusals and bad arguments write nothing
        done = await client.call_tool("reprice_track", {"track_id": track["track_id"], "unit_price": "1.29"})
    assert one.structured_content["email"] and one.structured_content["related"]["invoices"] >= 2
    assert page.structured_content["next_offset"] == 2 and len(page.structured_content["items"]) == 2
    assert customer["first_name"] == "Luís" and "phone" not in customer  # summaries leave details to get_customer
    assert over.is_error and "price_over_limit" in over.content[0].text
    assert unverified.is_error and "identity_not_verified" in unverified.content[0].text
    assert bad.is_error
    assert not done.is_error and done.structured_content["unit_price"] == "1.29"
    assert world.query('SELECT "UnitPrice" FROM "Track" WHERE "TrackId" = ?', (track["track_id"],))[0]["UnitPrice"] == 129


async def test_oracle_passes_and_noop_scores_zero(chinook_env: Environment, toolgym_episode, toolgym_play, toolgym_grade) -> None:
    for template in ("do_reprice_track", "count_invoice_of_customer"):
        for seed in (0, 1):
            episode = await toolgym_episode(chinook_env, task=template, seed=seed)
            await toolgym_play(episode, episode.task.oracle)
            grade = await toolgym_grade(episode)
            assert grade.passed and grade.score == 1.0, grade.summary()
            idle = await toolgym_episode(chinook_env, task=template, seed=seed)
            assert (await toolgym_grade(idle)).score == 0


async def test_serves_over_stdio(chinook_project: Path, chinook_env: Environment, template_cache: str) -> None:
    env = {**os.environ, "TOOLGYM_CACHE_DIR": template_cache, "TOOLGYM_TOKEN": "",
           "PYTHONPATH": os.pathsep.join([str(chinook_project), str(REPO)])}
    params = StdioServerParameters(command=sys.executable, args=["-m", "chinook_env", "serve"], cwd=str(chinook_project), env=env)
    with anyio.fail_after(90):
        async with Client(params) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            artists = await client.call_tool("search_artists", {"query": "AC/DC"})
    assert tools == set(chinook_env.tool_specs)
    assert artists.structured_content["items"][0]["name"] == "AC/DC"


def test_instances_do_not_depend_on_the_hash_seed(chinook_project: Path, template_cache: str) -> None:
    import subprocess

    script = ("import hashlib, sys\nfrom chinook_env import environment as env\ndigest = hashlib.sha256()\n"
              "for t in env.task_templates().values():\n    w = env.fixture.world(0)\n    i = t.instantiate(w, 3)\n"
              "    digest.update((i.model_dump_json() + w.hash()).encode())\nprint(digest.hexdigest())\n")
    outputs = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "TOOLGYM_CACHE_DIR": template_cache,
               "PYTHONPATH": os.pathsep.join([str(chinook_project), str(REPO)])}
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120, check=True)
        outputs.add(done.stdout.strip())
    assert len(outputs) == 1
