"""The dataset half: one inspect ``Sample`` per task instance (template × seed) of a running toolgym server.

A sample's input is the conversation the agent starts from — the environment's instructions as the system
message and the instance's prompt as the user message — read from the server when the dataset is built: the
prompt of (template, seed) exists only once its world is drawn, so each instance's episode is opened, read
and released (a world clone each, milliseconds). toolgym instances are deterministic, so the episode each
sample later plays shows the same prompt; :mod:`toolgym_inspect.solvers` checks that it does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from toolgym_remote import ControlClient, EpisodeSession, RemoteError, check_server, parse_seeds, select_tasks

__all__ = ["ServerTasks", "load_server", "sample_id", "METADATA_KEY"]

METADATA_KEY = "toolgym"
"""Sample metadata key holding what identifies the instance (env, template, seed)."""

READ_AT_ONCE = 8
"""Episodes opened at once while reading prompts (the server clones a world for each)."""


@dataclass(frozen=True)
class ServerTasks:
    """What one toolgym server serves, as inspect needs it."""

    url: str
    env: str
    answer_tools: list[str]
    """Tools whose successful call ends the episode (``submit_answer``)."""
    samples: list[Sample]


def sample_id(template: str, seed: int) -> str:
    """The sample id of an instance: ``<template>-<seed>`` (unique, and safe in file names and URLs)."""
    return f"{template}-{seed}"


def load_server(
    server: str, *, tasks: str | Sequence[str] | None, seeds: str | int | Sequence[int], token_variable: str, env: str | None
) -> ServerTasks:
    """Check the server (and that it serves ``env``, when given) and build a sample per selected (template, seed).

    Raises:
        RemoteError: the server cannot be used (unreachable, token missing or refused, another environment).
        ValueError: the task or seed selection names nothing.
    """
    info = check_server(server, token_variable=token_variable)
    if env is not None and info.env != env:
        raise RemoteError(
            f"the toolgym server at {info.url} serves {info.env!r}, not {env!r}: start `toolgym serve {env} --transport http` "
            f"and point -T server= at it, or run the task {info.env!r}"
        )
    templates = select_tasks(info.tasks, tasks)
    chosen = parse_seeds(seeds)
    rows = {str(row["id"]): row for row in info.tasks}
    pairs = [(template, seed) for template in templates for seed in chosen]
    answer_tools, instructions, prompts = _in_thread(_read(info.url, token_variable, pairs))
    samples = []
    for (template, seed), prompt in zip(pairs, prompts, strict=True):
        row = rows[template]
        metadata: dict[str, Any] = {k: v for k, v in row.items() if k != "id"}
        metadata[METADATA_KEY] = {"env": info.env, "template": template, "seed": seed}
        messages = ([ChatMessageSystem(content=instructions)] if instructions else []) + [ChatMessageUser(content=prompt)]
        samples.append(Sample(id=sample_id(template, seed), input=messages, metadata=metadata))
    return ServerTasks(url=info.url, env=info.env, answer_tools=answer_tools, samples=samples)


async def _read(url: str, token_variable: str, pairs: list[tuple[str, int]]) -> tuple[list[str], str, list[str]]:
    """The answer tools, the environment's instructions and each instance's prompt."""
    limiter = asyncio.Semaphore(READ_AT_ONCE)
    async with ControlClient(url, token_variable=token_variable) as control:
        described = await control.environment()

        async def prompt(template: str, seed: int) -> str:
            async with limiter:
                created = await control.create(template, seed)
                await control.release(created.id)
                return created.prompt

        prompts = await asyncio.gather(*(prompt(t, s) for t, s in pairs))
        first = await control.create(pairs[0][0], pairs[0][1])
        try:
            async with EpisodeSession(first.mcp_url) as session:
                instructions = session.instructions
        finally:
            await control.release(first.id)
    return list(described.get("answer_tools") or []), instructions, list(prompts)


def _in_thread(coroutine: Any) -> Any:
    """Run ``coroutine`` to completion on a fresh event loop in a worker thread: inspect may call a task function
    from inside its own running loop, where ``asyncio.run`` is refused."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
