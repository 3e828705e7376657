"""The data half: task instances as verifiers tasks, and the grade as their reward and metrics."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf
from pydantic import Field
from toolgym_remote import ControlClient, RemoteError, check_server, select_tasks

__all__ = ["ToolgymData", "ToolgymTask", "ToolgymTaskset", "ToolgymTasksetConfig", "TASKSET_ID", "SetupError"]

TASKSET_ID = "toolgym-verifiers"
"""This package's taskset id (``vf-eval toolgym-verifiers``)."""


class ToolgymData(vf.TaskData):
    """One task instance of a toolgym server: a template and a seed (traced with every rollout)."""

    task: str
    """Task template id."""
    seed: int = 0
    """Task seed."""
    server: str
    """Base URL of the toolgym server (``http://127.0.0.1:8000``)."""
    token_variable: str = "TOOLGYM_TOKEN"
    """Environment variable holding the control token (the token itself is never stored or traced)."""
    episode_id: str | None = None
    """The rollout's toolgym episode, set when the rollout opens it."""


class ToolgymTask(vf.Task[ToolgymData]):
    """A toolgym task instance; scored by the server's grade of the rollout's episode."""

    async def _grade(self, task: ToolgymData) -> dict[str, Any]:
        """The episode's grade, fetched once per rollout (finish = close, grade, release)."""
        cache = self.__dict__
        lock = cache.setdefault("_toolgym_lock", asyncio.Lock())
        async with lock:
            if "_toolgym_grade" not in cache:
                if task.episode_id is None:
                    raise vf.TaskError(f"task {task.task}#{task.seed} was scored before its toolgym episode was opened")
                async with ControlClient(task.server, token_variable=task.token_variable) as control:
                    done = await control.finish(task.episode_id, record=False)
                if done.get("grade") is None:
                    error = done.get("grade_error") or {}
                    raise vf.TaskError(f"toolgym could not grade episode {task.episode_id}: {error.get('message', done)}")
                cache["_toolgym_grade"] = done["grade"]
        return cache["_toolgym_grade"]

    @vf.metric
    async def toolgym_criteria(self, task: ToolgymData) -> dict[str, float]:
        """``passed`` and the score of each criterion of this rollout's rubric (``criterion/<name>``): a criterion
        that does not apply is absent, so its mean is over the rollouts where it applied (``criteria.py``)."""
        grade = await self._grade(task)
        metrics = {"passed": 1.0 if grade["passed"] else 0.0}
        metrics.update({f"criterion/{c['name']}": float(c["score"]) for c in grade.get("criteria", [])})
        return metrics

    @vf.reward
    async def toolgym_grade(self, task: ToolgymData) -> float:
        """The grade's score in [0, 1] (gates zero it; see toolgym's graders)."""
        return float((await self._grade(task))["score"])


class ToolgymTasksetConfig(vf.TasksetConfig):
    """Which server and which of its tasks (``--env.taskset.*``)."""

    id: str = TASKSET_ID
    server: str = Field(default_factory=lambda: os.environ.get("TOOLGYM_URL", "http://127.0.0.1:8000"))
    """Base URL of the running toolgym server (default ``$TOOLGYM_URL``, else ``http://127.0.0.1:8000``)."""
    token_variable: str = "TOOLGYM_TOKEN"
    """Environment variable holding the control token."""
    tasks: str | None = None
    """Task selector: template ids, ``split:X``, ``tag:Y``, comma-separated (default: every task)."""
    seeds: list[int] = Field(default_factory=lambda: [0])
    """Task seeds: each selected template gives one task per seed."""


class SetupError(SystemExit):
    """The toolgym server cannot be used as configured: one line on stderr, exit status 1, no traceback.

    A ``SystemExit`` on purpose: vf-eval loads the taskset before anything runs, and a server that is down or
    a token that is missing is the user's to fix, not a bug to trace.
    """

    def __init__(self, message: str) -> None:
        super().__init__(f"toolgym-verifiers: error: {message}")


class ToolgymTaskset(vf.Taskset[ToolgymTask, ToolgymTasksetConfig]):
    """Every (template, seed) of the selection, in the server's order, seeds inner."""

    def load(self) -> Iterator[ToolgymTask]:
        config = self.config
        try:
            rows = check_server(config.server, token_variable=config.token_variable).tasks
            templates = select_tasks(rows, config.tasks)
        except (RemoteError, ValueError) as exc:
            raise SetupError(str(exc)) from None
        by_id = {str(row["id"]): row for row in rows}
        for template in templates:
            row = by_id[template]
            for seed in config.seeds:
                data = ToolgymData(
                    id=f"{template}#{seed}",
                    name=template,
                    description=row.get("description") or None,
                    task=template,
                    seed=seed,
                    server=config.server,
                    token_variable=config.token_variable,
                )
                yield ToolgymTask(data, config.task)
