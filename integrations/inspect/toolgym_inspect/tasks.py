"""The inspect tasks: ``toolgym`` (whatever environment the server serves) and one per built-in environment.

::

    toolgym serve finance --transport http --port 8000 &        # toolgym's own environment; $TOOLGYM_TOKEN
    inspect eval toolgym_inspect/finance --model openai/gpt-4.1-mini -T seeds=0-4 -T tasks=split:test

Task arguments (``-T``): ``server`` (default ``$TOOLGYM_URL``, else ``http://127.0.0.1:8000``), ``tasks``
(template ids, ``split:X``, ``tag:Y``; default all), ``seeds`` (``0,1,2`` or ``0-4``; default 0),
``token_variable`` (default ``TOOLGYM_TOKEN``), ``max_turns`` (default 30).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from inspect_ai import Task, task
from toolgym_remote import RemoteError

from toolgym_inspect.dataset import load_server
from toolgym_inspect.scorer import release_episode, toolgym_grade
from toolgym_inspect.solvers import DEFAULT_MAX_TURNS, toolgym_agent, toolgym_episode

__all__ = ["toolgym", "finance", "support", "workspace", "toolgym_task", "SetupError"]

try:  # inspect prints this one as its message alone, without a traceback
    from inspect_ai._util.error import PrerequisiteError as _Prerequisite
except ImportError:  # pragma: no cover - a later inspect moved it: a plain error still says what to fix
    _Prerequisite = RuntimeError  # type: ignore[assignment,misc]


class SetupError(_Prerequisite):  # type: ignore[misc,valid-type]
    """The toolgym server cannot be used as configured (one line: what to fix)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"toolgym-inspect: error: {message}")
        self.args = (f"toolgym-inspect: error: {message}",)


def toolgym_task(
    env: str | None = None,
    server: str | None = None,
    tasks: str | Sequence[str] | None = None,
    seeds: str | int | Sequence[int] = 0,
    token_variable: str = "TOOLGYM_TOKEN",
    max_turns: int = DEFAULT_MAX_TURNS,
) -> Task:
    """An inspect ``Task`` over the toolgym server at ``server`` (which must serve ``env`` when given).

    Raises:
        SetupError: the server cannot be used, or the selection names no task (one line, no traceback).
    """
    url = server or os.environ.get("TOOLGYM_URL") or "http://127.0.0.1:8000"
    try:
        served = load_server(url, tasks=tasks, seeds=seeds, token_variable=token_variable, env=env)
    except (RemoteError, ValueError) as exc:
        raise SetupError(str(exc)) from None
    return Task(
        dataset=served.samples,
        setup=toolgym_episode(served.url, token_variable),
        solver=toolgym_agent(served.answer_tools, max_turns),
        scorer=toolgym_grade(served.url, token_variable, served.answer_tools),
        cleanup=release_episode(served.url, token_variable),
        metadata={"toolgym_env": served.env, "toolgym_server": served.url},
    )


@task
def toolgym(
    server: str | None = None, tasks: str | None = None, seeds: str | int = 0, token_variable: str = "TOOLGYM_TOKEN",
    max_turns: int = DEFAULT_MAX_TURNS,
) -> Task:
    """Every task instance of the environment the toolgym server at ``server`` serves (any environment,
    ``toolgym new`` ones included)."""
    return toolgym_task(None, server, tasks, seeds, token_variable, max_turns)


@task
def finance(
    server: str | None = None, tasks: str | None = None, seeds: str | int = 0, token_variable: str = "TOOLGYM_TOKEN",
    max_turns: int = DEFAULT_MAX_TURNS,
) -> Task:
    """The finance environment (a bank's back office), served by ``toolgym serve finance --transport http``."""
    return toolgym_task("finance", server, tasks, seeds, token_variable, max_turns)


@task
def support(
    server: str | None = None, tasks: str | None = None, seeds: str | int = 0, token_variable: str = "TOOLGYM_TOKEN",
    max_turns: int = DEFAULT_MAX_TURNS,
) -> Task:
    """The customer-support environment, served by ``toolgym serve support --transport http``."""
    return toolgym_task("support", server, tasks, seeds, token_variable, max_turns)


@task
def workspace(
    server: str | None = None, tasks: str | None = None, seeds: str | int = 0, token_variable: str = "TOOLGYM_TOKEN",
    max_turns: int = DEFAULT_MAX_TURNS,
) -> Task:
    """The enterprise-workspace environment, served by ``toolgym serve workspace --transport http``."""
    return toolgym_task("workspace", server, tasks, seeds, token_variable, max_turns)
