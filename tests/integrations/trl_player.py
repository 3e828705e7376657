"""Drives ``toolgym_trl``'s environment class by hand, as GRPOTrainer would (run with the TRL venv's python).

Reads ``{"url", "out", "task", "oracle": [{"tool", "arguments"}]}`` on stdin; prints one JSON object: the tool
schemas transformers renders for TRL (``get_json_schema`` of each method), then a rollout that plays the oracle
and one more call (``answered``), and a rollout whose episode the test releases behind its back (``lost``).
"""

from __future__ import annotations

import json
import os
import sys

import httpx
from transformers.utils import get_json_schema

from toolgym_trl import toolgym_environment


def main() -> None:
    job = json.load(sys.stdin)
    cls = toolgym_environment(job["url"], run_dir=job["out"])
    env = cls()
    schemas = {name: get_json_schema(getattr(env, name)) for name in dir(cls)
               if not name.startswith("_") and name not in ("reset", "get_reward") and callable(getattr(cls, name))}
    out: dict = {"class": cls.__name__, "schemas": schemas}

    prompt = env.reset(task=job["task"], seed=0, prompt=[{"role": "user", "content": ""}])
    results = [getattr(env, step["tool"])(**(step.get("arguments") or {})) for step in job["oracle"]]
    results.append(getattr(env, job["oracle"][0]["tool"])(**(job["oracle"][0].get("arguments") or {})))
    out["answered"] = {"prompt": prompt, "last": results[-1], "reward": env.get_reward()}

    env.reset(task=job["task"], seed=0)
    headers = {"Authorization": f"Bearer {os.environ['TOOLGYM_TOKEN']}"}
    httpx.delete(f"{job['url']}/control/episodes/{env.episode.id}", headers=headers).raise_for_status()
    step = job["oracle"][0]
    out["lost"] = {"call": getattr(env, step["tool"])(**(step.get("arguments") or {})), "reward": env.get_reward()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
