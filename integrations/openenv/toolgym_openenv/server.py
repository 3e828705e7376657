"""Serve a running toolgym server's environment the way OpenEnv clients expect (HTTP + WebSocket).

::

    toolgym-openenv --server http://127.0.0.1:8000 --port 8001        # token: $TOOLGYM_TOKEN
    # then, from any OpenEnv client:
    async with GenericEnvClient(base_url="http://127.0.0.1:8001") as env:
        result = await env.reset(task="duplicate_charge", task_seed=0)
        result = await env.step({"type": "call_tool", "tool_name": "search_customers", "arguments": {"query": "Ng"}})
        state = await env.state()
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from openenv.core.env_server import CallToolAction, CallToolObservation, create_fastapi_app

from toolgym_openenv.environment import DEFAULT_MAX_STEPS, ToolgymEnvironment, ToolgymObservation, ToolgymState

__all__ = ["create_toolgym_app", "main"]


def create_toolgym_app(
    server: str,
    tasks: str | None = None,
    seeds: Sequence[int] = (0,),
    *,
    max_concurrent_envs: int = 64,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> Any:
    """The OpenEnv FastAPI app bridging to the toolgym server at ``server`` (one episode per WebSocket session)."""
    seed_list = list(seeds)

    def factory() -> ToolgymEnvironment:
        return ToolgymEnvironment(server, tasks, seed_list, max_steps=max_steps)

    return create_fastapi_app(
        factory,
        CallToolAction,
        CallToolObservation,
        max_concurrent_envs=max_concurrent_envs,
        env_name="toolgym",
        state_cls=ToolgymState,
        reset_observation_cls=ToolgymObservation,
    )


def main(argv: Sequence[str] | None = None) -> None:
    """``toolgym-openenv --server URL [--host H] [--port P] [--tasks SEL] [--seeds 0,1]``."""
    import uvicorn

    parser = argparse.ArgumentParser(prog="toolgym-openenv", description=__doc__.split("::")[0].strip())
    parser.add_argument("--server", default=os.environ.get("TOOLGYM_URL", "http://127.0.0.1:8000"),
                        help="the running toolgym server (default $TOOLGYM_URL); its control token is read from $TOOLGYM_TOKEN")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--tasks", default=None, help="task selector: ids, split:X, tag:Y (default all)")
    parser.add_argument("--seeds", default="0", help="task seeds to draw from, comma-separated (default 0)")
    parser.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS, help="tool calls before an episode ends")
    parser.add_argument("--max-sessions", type=int, default=64, help="concurrent WebSocket sessions")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    app = create_toolgym_app(args.server, args.tasks, seeds, max_concurrent_envs=args.max_sessions, max_steps=args.max_steps)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
