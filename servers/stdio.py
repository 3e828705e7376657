"""The stdio transport: one episode per process, for MCP clients that launch their server as a command.

``python -m envs.finance serve`` (the default transport) runs :func:`run_stdio`: the episode is created at
start, served over stdin/stdout in either protocol era, and closed when stdin closes, which writes the
record's footer. Nothing but MCP goes to stdout; logs go to stderr.
"""

from __future__ import annotations

import logging
from pathlib import Path

from mcp.server.stdio import stdio_server

from servers.environment import Environment
from servers.episodes import Episode, EpisodeManager
from servers.mcp_server import build_mcp_server, fixed_episode

__all__ = ["run_stdio"]

log = logging.getLogger("toolgym.stdio")


async def run_stdio(
    environment: Environment,
    task: str | None = None,
    seed: int = 0,
    record: Path | None = None,
    *,
    record_dir: Path | None = None,
) -> Episode:
    """Serve one episode of ``environment`` over this process's stdin/stdout until stdin closes.

    Args:
        task: task template id, or None for free play.
        seed: task seed (fixture seed in free play).
        record: JSONL file to write the record to as the episode runs.
        record_dir: directory for the record instead, named after the episode id.

    Returns:
        The closed episode (its world is still open, so a caller may inspect or grade it).

    Raises:
        TaskError: ``task`` names no template of the environment (raised before anything is served).
    """
    manager = EpisodeManager(environment, max_live=1, record_dir=record_dir)
    episode = manager.create(task, seed, record_path=record)
    log.info("serving episode %s of %s over stdio (task=%s, seed=%d)", episode.id, environment.name, task, seed)
    server = build_mcp_server(environment, fixed_episode(episode))
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        manager.close(episode.id, reason="stdin closed")
        log.info("episode %s closed after %d tool calls", episode.id, episode.seq)
    return episode
