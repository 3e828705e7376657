"""The stdio transport: one episode per process, for MCP clients that launch their server as a command.

``python -m envs.finance serve`` (the default transport) runs :func:`run_stdio`: the episode is created at
start, served over stdin/stdout in either protocol era, and closed when stdin closes, which writes the
record's footer. On SIGTERM, SIGHUP or SIGINT (Ctrl-C) the episode is closed the same way (footer
written) and the process then dies by that signal: MCP clients terminate a server that does not exit within a couple of seconds
of closing its stdin, the record must still end with its footer, and the SDK's stdin reader sits in a
blocking read that no cancellation can interrupt. Nothing but MCP goes to stdout; logs go to stderr.
Every request line gets an answer, even one the SDK's own stdio transport would drop (``servers/stdio_streams.py``).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from pathlib import Path

import anyio

from servers.environment import Environment
from servers.episodes import Episode, EpisodeManager
from servers.mcp_server import OutputSchemas, build_mcp_server, fixed_episode
from servers.stdio_streams import stdio_streams

__all__ = ["run_stdio"]

log = logging.getLogger("toolgym.stdio")


async def run_stdio(
    environment: Environment,
    task: str | None = None,
    seed: int = 0,
    record: Path | None = None,
    *,
    record_dir: Path | None = None,
    output_schemas: OutputSchemas = "compact",
) -> Episode:
    """Serve one episode of ``environment`` over this process's stdin/stdout until stdin closes.

    Args:
        task: task template id, or None for free play.
        seed: task seed (fixture seed in free play).
        record: JSONL file to write the record to as the episode runs.
        record_dir: directory for the record instead, named after the episode id.
        output_schemas: how tools/list serves output schemas (``servers/mcp_server.py``).

    Returns:
        The closed episode (its world is still open, so a caller may inspect or grade it).

    Raises:
        TaskError: ``task`` names no template of the environment (raised before anything is served).
        RecordError: the record file cannot be written (raised before anything is served).
    """
    manager = EpisodeManager(environment, max_live=1, record_dir=record_dir)
    episode = manager.create(task, seed, record_path=record)
    log.info("serving episode %s of %s over stdio (task=%s, seed=%d)", episode.id, environment.name, task, seed)
    server = build_mcp_server(environment, fixed_episode(episode), output_schemas=output_schemas)
    try:
        async with anyio.create_task_group() as tg:
            if threading.current_thread() is threading.main_thread():  # signal handlers live on the main thread
                tg.start_soon(_close_on_signal, manager, episode)
            async with stdio_streams() as (read, write):
                await server.run(read, write, server.create_initialization_options())
            tg.cancel_scope.cancel()
    finally:
        manager.close(episode.id, reason="stdin closed")  # idempotent: a signal may have closed it already
        log.info("episode %s closed after %d tool calls", episode.id, episode.seq)
    return episode


async def _close_on_signal(manager: EpisodeManager, episode: Episode) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP, signal.SIGINT) as signals:
        async for signum in signals:
            name = signal.Signals(signum).name
            manager.close(episode.id, reason=name)
            log.info("episode %s closed on %s after %d tool calls", episode.id, name, episode.seq)
            sys.stderr.flush()
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
