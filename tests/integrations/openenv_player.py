"""Plays one episode with OpenEnv's own client (run with the OpenEnv virtual environment's python).

Reads ``{"url", "task", "seed", "calls": [{"tool", "arguments"}]}`` as JSON on stdin, connects
``openenv.GenericEnvClient`` to the bridge at ``url``, resets to the task, lists the tools, makes the calls
and prints one JSON object: the reset observation's keys, prompt and tool names, each step's reward and
done, the last step's metadata and the final state.
"""

from __future__ import annotations

import asyncio
import json
import sys

from openenv import GenericEnvClient


async def main() -> None:
    job = json.load(sys.stdin)
    out: dict = {"steps": []}
    async with GenericEnvClient(base_url=job["url"]) as env:
        reset = await env.reset(task=job["task"], task_seed=job["seed"])
        out["reset_keys"] = sorted(reset.observation)
        out["prompt"] = reset.observation.get("prompt")
        out["instructions"] = reset.observation.get("instructions")
        out["tool_names"] = [t["name"] for t in reset.observation.get("tools", [])]
        listed = await env.step({"type": "list_tools"})
        out["listed"] = len(listed.observation.get("tools", []))
        last = None
        for call in job["calls"]:
            last = await env.step({"type": "call_tool", "tool_name": call["tool"], "arguments": call.get("arguments") or {}})
            out["steps"].append({"reward": last.reward, "done": last.done, "is_error": last.observation["result"]["is_error"]})
            if last.done:
                break
        out["metadata"] = last.observation.get("metadata") if last is not None else None
        out["state"] = await env.state()
    print(json.dumps(out))


asyncio.run(main())
