"""A toolgym environment as an OpenEnv ``Environment``: one WebSocket session = one toolgym episode at a time.

Actions are OpenEnv's own MCP actions, so any OpenEnv client (``GenericEnvClient``, verifiers' OpenEnv
taskset) drives it: ``{"type": "list_tools"}`` and ``{"type": "call_tool", "tool_name", "arguments"}``.

- ``reset(seed=, task=, task_seed=, split=, tag=)`` opens a toolgym episode (the previous one of the session
  is released) and returns a :class:`ToolgymObservation`: prompt, instructions, tools. Unless given, the task
  and its seed are drawn with ``random.Random(seed)`` from the selection.
- ``step(call_tool)`` is one MCP call on the episode; the observation's ``result`` holds the text the model
  sees, ``is_error`` and the structured ``data``. A successful call of the answer tool ends the episode:
  ``done``, ``reward`` = the grade's score, ``metadata["grade"]`` every criterion with evidence. So does the
  step limit (``metadata["truncated"]``).
- ``state``: episode id, step count, task, seed, done, reward, passed.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
from openenv.core.env_server import (
    CallToolAction,
    CallToolObservation,
    Environment,
    ListToolsAction,
    ListToolsObservation,
    Observation,
    State,
    Tool,
    ToolError,
    ToolErrorType,
)
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import Field
from toolgym_remote import ControlClient, CreatedEpisode, EpisodeSession, RemoteError, select_tasks

__all__ = ["ToolgymEnvironment", "ToolgymObservation", "ToolgymState", "DEFAULT_MAX_STEPS"]

DEFAULT_MAX_STEPS = 50
"""Tool calls per episode before it ends (graded) as truncated."""


class ToolgymObservation(Observation):
    """What ``reset`` returns: the task as the agent is given it."""

    prompt: str = Field(default="", description="The task's prompt")
    instructions: str = Field(default="", description="Who the agent is and how to answer (the MCP server's instructions)")
    tools: list[Tool] = Field(default_factory=list, description="The episode's tools with their input schemas")
    task: str | None = Field(default=None, description="Task template id")
    seed: int = Field(default=0, description="Task seed")


class ToolgymState(State):
    """The session's current episode."""

    task: str | None = None
    seed: int = 0
    done: bool = False
    reward: float | None = None
    passed: bool | None = None


class ToolgymEnvironment(Environment[Any, Observation, ToolgymState]):
    """Bridge of one OpenEnv session to episodes of a running toolgym server (see the module docstring).

    Args:
        server: the toolgym server's base URL.
        tasks: task selector (ids, ``split:X``, ``tag:Y``; default all).
        seeds: task seeds drawn from when ``reset`` names none.
        token: the control token (default ``$TOOLGYM_TOKEN``); stays on this side, never in an observation.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(
        self,
        server: str,
        tasks: str | None = None,
        seeds: list[int] | None = None,
        *,
        token: str | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> None:
        super().__init__()
        self.server = server.rstrip("/")
        self.selector = tasks
        self.seeds = list(seeds) if seeds else [0]
        self.max_steps = max_steps
        self._token = token
        self._http: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._control: ControlClient | None = None
        self._session: EpisodeSession | None = None
        self._episode: CreatedEpisode | None = None
        self._answer_tools: set[str] = set()
        self._tools: list[Tool] = []
        self._state = ToolgymState()

    async def _open_clients(self) -> ControlClient:
        if self._control is None:
            self._loop = asyncio.get_running_loop()
            self._http = httpx.AsyncClient(timeout=120.0)
            self._control = ControlClient(self.server, self._token, client=self._http)
            described = await self._control.environment()
            self._answer_tools = set(described.get("answer_tools") or [])
        return self._control

    async def reset_async(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task: str | None = None,
        task_seed: int | None = None,
        split: str | None = None,
        tag: str | None = None,
        **kwargs: Any,
    ) -> ToolgymObservation:
        """Open a new toolgym episode (see the module docstring)."""
        control = await self._open_clients()
        await self._end_episode()
        rng = random.Random(seed)
        if task is None:
            rows = await control.tasks()
            pool = select_tasks(rows, self.selector)
            for term in (f"split:{split}" if split else None, f"tag:{tag}" if tag else None):
                if term is not None:
                    allowed = set(select_tasks(rows, term))
                    pool = [t for t in pool if t in allowed] or sorted(allowed)
            task = rng.choice(pool)
        chosen_seed = int(task_seed) if task_seed is not None else rng.choice(self.seeds)
        self._episode = await control.create(task, chosen_seed)
        self._session = EpisodeSession(self._episode.mcp_url, client=self._http)
        await self._session.initialize()
        if not self._tools:
            listing = await self._session.list_tools()
            self._tools = [
                Tool(name=t["name"], description=t.get("description") or "", input_schema=t.get("inputSchema") or {})
                for t in listing
            ]
        self._state = ToolgymState(episode_id=self._episode.id, step_count=0, task=task, seed=chosen_seed)
        return ToolgymObservation(
            prompt=self._episode.prompt, instructions=self._session.instructions, tools=list(self._tools),
            task=task, seed=chosen_seed, done=False, reward=None,
            metadata={"episode_id": self._episode.id},
        )

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> ToolgymObservation:
        """Not supported: the bridge is asynchronous (OpenEnv's server calls ``reset_async``).

        Raises:
            NotImplementedError: always.
        """
        raise NotImplementedError("ToolgymEnvironment is asynchronous: await reset_async() (OpenEnv's server does)")

    async def step_async(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        """List the tools, or make one tool call (grading the episode when it ends)."""
        if isinstance(action, ListToolsAction):
            return ListToolsObservation(tools=list(self._tools), done=self._state.done, reward=None)
        if not isinstance(action, CallToolAction):
            return CallToolObservation(
                tool_name=str(getattr(action, "tool_name", "")), done=self._state.done,
                error=ToolError(error_type=ToolErrorType.INVALID_ARGS, message="send a call_tool or list_tools action"),
            )
        if self._episode is None or self._session is None or self._state.done:
            return CallToolObservation(
                tool_name=action.tool_name, done=self._state.done, reward=self._state.reward,
                error=ToolError(error_type=ToolErrorType.EXECUTION_ERROR, message="no open episode: call reset() first"),
            )
        self._state.step_count += 1
        try:
            result = await self._session.call_tool(action.tool_name, action.arguments)
        except RemoteError as exc:
            return CallToolObservation(
                tool_name=action.tool_name, reward=0.0,
                error=ToolError(error_type=ToolErrorType.TRANSPORT_ERROR, message=str(exc)),
            )
        observation = CallToolObservation(
            tool_name=action.tool_name, reward=0.0,
            result={"text": result.text, "is_error": result.is_error, "data": result.structured},
        )
        answered = action.tool_name in self._answer_tools and not result.is_error
        if answered or self._state.step_count >= self.max_steps:
            grade = await self._finish()
            observation.done = True
            observation.reward = float(grade["score"]) if grade else 0.0
            observation.metadata = {"grade": grade, "truncated": not answered}
        return observation

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        """Not supported: the bridge is asynchronous (OpenEnv's server calls ``step_async``).

        Raises:
            NotImplementedError: always.
        """
        raise NotImplementedError("ToolgymEnvironment is asynchronous: await step_async() (OpenEnv's server does)")

    @property
    def state(self) -> ToolgymState:
        """The current episode: id, step count, task, seed, done, reward, passed."""
        return self._state.model_copy()

    def get_metadata(self) -> EnvironmentMetadata:
        """Name and description of the bridged environment."""
        return EnvironmentMetadata(
            name="toolgym", description=f"toolgym environment served by {self.server}", version="0.1.0"
        )

    async def _finish(self) -> dict[str, Any] | None:
        """Close, grade and release the episode; the grade (None when it could not be given)."""
        assert self._control is not None and self._episode is not None
        if self._session is not None:
            await self._session.aclose()
            self._session = None
        done = await self._control.finish(self._episode.id)
        self._episode = None
        grade = done.get("grade")
        self._state.done = True
        self._state.reward = float(grade["score"]) if grade else None
        self._state.passed = bool(grade["passed"]) if grade else None
        return grade

    async def _end_episode(self) -> None:
        """Release an episode left open (a reset before its end)."""
        if self._session is not None:
            await self._session.aclose()
            self._session = None
        if self._episode is not None and self._control is not None:
            await self._control.release(self._episode.id)
            self._episode = None

    async def _aclose(self) -> None:
        await self._end_episode()
        if self._http is not None:
            await self._http.aclose()
            self._http = None
            self._control = None

    def close(self) -> None:
        """Release the open episode and the HTTP client (OpenEnv calls this from a worker thread)."""
        loop = self._loop
        if loop is None or loop.is_closed() or self._http is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            loop.create_task(self._aclose())
        elif loop.is_running():
            asyncio.run_coroutine_threadsafe(self._aclose(), loop).result(timeout=30)
