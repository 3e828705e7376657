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
import sys
from collections.abc import Sequence
from typing import Any

from openenv.core.env_server import CallToolAction, CallToolObservation, create_fastapi_app
from toolgym_remote import RemoteError, check_server, select_tasks

from toolgym_openenv.environment import DEFAULT_MAX_STEPS, ToolgymEnvironment, ToolgymObservation, ToolgymState

__all__ = ["create_toolgym_app", "startup_check", "main"]


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


def startup_check(server: str, tasks: str | None, seeds: Sequence[int]) -> str:
    """The line ``toolgym-openenv`` prints when it starts, once the toolgym server proved usable.

    Raises:
        SystemExit: (one line, status 2) the server is unreachable, needs a token none is set for, refuses
            the token, is not a toolgym server, or serves no task the selection names.
    """
    try:
        info = check_server(server)
        selected = select_tasks(info.tasks, tasks)
    except (RemoteError, ValueError) as exc:
        print(f"toolgym-openenv: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if not selected:
        print(f"toolgym-openenv: error: --tasks {tasks!r} selects no task of {info.env!r}", file=sys.stderr)
        raise SystemExit(2)
    seed_text = ",".join(str(s) for s in seeds)
    return f"toolgym {info.env} at {info.url}: {len(selected)} task(s), seeds {seed_text}"


def main(argv: Sequence[str] | None = None) -> None:
    """``toolgym-openenv --server URL [--host H] [--port P] [--tasks SEL] [--seeds 0,1]``.

    Checks the toolgym server first (reachable, token accepted, tasks selected) and says what it serves on
    stderr before listening; a server it cannot use is one line and exit status 2, never a silent start.
    """
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
    serving = startup_check(args.server, args.tasks, seeds)
    app = create_toolgym_app(args.server, args.tasks, seeds, max_concurrent_envs=args.max_sessions, max_steps=args.max_steps)
    print(f"toolgym-openenv: {serving}; OpenEnv HTTP + WebSocket on http://{args.host}:{args.port}", file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
