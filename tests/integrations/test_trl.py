"""TRL: ``toolgym-trl-example`` (TRL 1.16 and torch's CPU build, their own virtual environment) trains a tiny model
made at run time for 3 GRPO steps against a running toolgym server, through TRL's environment interface; the
rewards the trainer logged — per step, and per rollout in its completions log — equal toolgym's grades of the
rollouts' own records (``toolgym grade``), and the tool calls the model made are the ones the records hold.

About a minute and a half of CPU on 2 cores (nothing downloaded: HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from servers.http import running_http
from servers.mcp_server import mcp_tools
from servers.registry import load_environment
from tests.integrations.scripted import oracle_of
from tests.integrations.venvs import Venv

pytestmark = pytest.mark.slow(reason="TRL and torch's CPU build in their own virtual environment; the example trains 3 GRPO steps")

READER = Path(__file__).with_name("trl_completions_reader.py")
PLAYER = Path(__file__).with_name("trl_player.py")
TOOLGYM = str(Path(sys.executable).with_name("toolgym"))
STEPS, BATCH = 3, 4


def _present(value: Any) -> Any:
    """``value`` without the None entries of its mappings, at every depth."""
    if isinstance(value, dict):
        return {k: _present(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_present(v) for v in value]
    return value


async def test_the_example_trains_and_its_logged_rewards_are_toolgyms_grades(trl_venv: Venv, tmp_path: Path) -> None:
    out = tmp_path / "run"
    async with running_http(load_environment("finance")) as server:
        env = trl_venv.env(TOOLGYM_TOKEN=server.token or "", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
        argv = [trl_venv.bin("toolgym-trl-example"), "--server", server.url, "--steps", str(STEPS), "--out", str(out)]
        with anyio.fail_after(600):
            done = await anyio.run_process(argv, env=env, cwd=tmp_path, check=False)
        log = done.stdout.decode()[-3000:] + done.stderr.decode()[-6000:]
        assert done.returncode == 0, log
        assert server.manager.capped_count == 0, "every rollout's episode is released"

    summary = json.loads((out / "summary.json").read_text())
    assert summary["agree"] and len(summary["steps"]) == STEPS, summary
    rollouts = [json.loads(line) for line in (out / "rollouts.jsonl").read_text().splitlines()]
    assert len(rollouts) == STEPS * BATCH, "every rollout was scored (none lost to infrastructure)"

    regraded = subprocess.run([TOOLGYM, "grade", "--json", str(out)], capture_output=True, text=True, timeout=300, check=False)
    assert regraded.returncode in (0, 1) and not regraded.stderr, regraded.stderr[-3000:]  # 1: some record did not pass
    grades = {g["episode_id"]: g for g in map(json.loads, regraded.stdout.splitlines())}
    assert set(grades) == {r["episode_id"] for r in rollouts}
    scores = [grades[r["episode_id"]]["score"] for r in rollouts]
    assert scores == [r["score"] for r in rollouts]

    # per step: the trainer's logged mean is the mean of toolgym's grades of that step's rollouts
    for index, step in enumerate(summary["steps"]):
        batch = scores[index * BATCH : (index + 1) * BATCH]
        assert step["logged_mean"] == pytest.approx(sum(batch) / len(batch), abs=1e-6), (step, batch)

    # per rollout: the completions TRL logged, in order, carry toolgym's grade as their reward and the calls the record holds
    read = subprocess.run([trl_venv.python, str(READER), str(out / "trainer" / "completions")], capture_output=True, text=True,
                          timeout=300, check=False)
    assert read.returncode == 0, read.stderr[-3000:]
    rows = [json.loads(line) for line in read.stdout.splitlines()]
    assert len(rows) == len(rollouts)
    reward = f"{summary['env']}"
    for row, rollout, score in zip(rows, rollouts, scores, strict=True):
        assert row["rewards"][reward] == pytest.approx(score, abs=1e-6)
        # (the log is a parquet table: every row's arguments carry every key any row used, None where it did not)
        made = [{"tool": c["name"], "arguments": _present(c["arguments"])} for m in row["messages"] for c in m["tool_calls"]]
        events = [json.loads(line) for line in Path(rollout["record"]).read_text().splitlines()]
        recorded = [{"tool": e["tool"], "arguments": e["arguments"]} for e in events if e.get("type") == "tool_call"]
        assert made[: len(recorded)] == recorded, (made, recorded)
        refused = [m["content"] for m in row["messages"] if m["role"] == "tool"][len(recorded) :]
        assert all(text.startswith("Error: the episode is over") for text in refused), refused
    assert any(row["messages"][0]["tool_calls"] for row in rows), "the model made tool calls"
    assert any(score > 0 for score in scores), "some rollout earned a reward: the comparison is not all zeros"


async def test_the_environment_class_as_grpo_trainer_drives_it(trl_venv: Venv, tmp_path: Path) -> None:
    """The server's tools as methods whose schemas transformers renders like the MCP ones; a rollout's calls after
    its answer never reach the world; a rollout whose episode was lost is not scored (``None``), never a zero."""
    async with running_http(load_environment("finance")) as server:
        async with httpx.AsyncClient() as client:
            _, oracle = await oracle_of(server, client, "duplicate_charge")
        job = json.dumps({"url": server.url, "out": str(tmp_path), "task": "duplicate_charge", "oracle": oracle}).encode()
        with anyio.fail_after(300):
            done = await anyio.run_process([trl_venv.python, str(PLAYER)], input=job, env=trl_venv.env(TOOLGYM_TOKEN=server.token or ""), check=False)
        assert done.returncode == 0, done.stderr.decode()[-3000:]
        played = json.loads(done.stdout.decode().splitlines()[-1])
        assert server.manager.capped_count == 0
        tools = {t.name: t for t in mcp_tools(load_environment("finance"))}

    assert played["class"] == "toolgym_finance" and set(played["schemas"]) == set(tools)
    for name, rendered in played["schemas"].items():
        schema, declared = rendered["function"], tools[name].input_schema
        assert schema["name"] == name and schema["description"] == " ".join((tools[name].description or name).split())
        assert set(schema["parameters"]["properties"]) == set(declared.get("properties") or {})
        assert set(schema["parameters"].get("required") or []) == set(declared.get("required") or [])
    assert played["answered"]["reward"] == 1.0
    assert played["answered"]["last"] == "Error: the episode is over: the answer was already submitted"
    assert played["lost"]["reward"] is None and played["lost"]["call"] == "Error: the tool could not be reached"
    (line,) = (tmp_path / "rollouts.jsonl").read_text().splitlines()  # only the scored rollout
    assert json.loads(line)["score"] == 1.0
