"""The training data: one row per task instance (template × seed), its prompt supplied by the episode itself.

A row is ``{"prompt": [system: the environment's instructions, user: ""], "task", "seed"}``; TRL passes ``task``
and ``seed`` to the environment's ``reset``, which opens that instance's episode and returns its prompt (TRL
appends it to the user message). So no prompt is read twice, and a row is only ever played on its own episode.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from datasets import Dataset
from toolgym_remote import ControlClient, EpisodeSession, check_server, parse_seeds, select_tasks

from toolgym_trl import portal

__all__ = ["toolgym_dataset", "instructions_of"]


def instructions_of(server: str, token_variable: str = "TOOLGYM_TOKEN") -> str:
    """The environment's instructions (its MCP server's): who the agent is and how to answer."""
    info = check_server(server, token_variable=token_variable)

    async def read() -> str:
        async with ControlClient(info.url, token_variable=token_variable) as control:
            created = await control.create(str(info.tasks[0]["id"]), 0)
            try:
                async with EpisodeSession(created.mcp_url) as session:
                    return session.instructions
            finally:
                await control.release(created.id)

    return portal.run(read())


def toolgym_dataset(
    server: str, tasks: str | Sequence[str] | None = None, seeds: str | int | Sequence[int] = 0, *,
    token_variable: str = "TOOLGYM_TOKEN", system_prompt: str | None = None, shuffle_seed: int | None = None,
) -> Dataset:
    """A ``datasets.Dataset`` of the selected instances (``tasks``: ids, ``split:X``, ``tag:Y``; ``seeds``: ``0-99``).

    Args:
        system_prompt: the system message (default: the environment's instructions).
        shuffle_seed: shuffle the rows with this seed (default: the server's order, seeds inner).

    Raises:
        RemoteError: the server cannot be used. ValueError: the selection names nothing.
    """
    info = check_server(server, token_variable=token_variable)
    templates = select_tasks(info.tasks, tasks)
    chosen = parse_seeds(seeds)
    system = system_prompt if system_prompt is not None else instructions_of(info.url, token_variable)
    rows: list[dict[str, Any]] = [
        {"prompt": [{"role": "system", "content": system}, {"role": "user", "content": ""}], "task": t, "seed": s}
        for t in templates for s in chosen
    ]
    data = Dataset.from_list(rows)
    return data.shuffle(seed=shuffle_seed) if shuffle_seed is not None else data


