"""The environment actor: one environment's episodes (worlds, records, grading) in one Ray actor process.

Its methods are coarse — one call per episode step, never per row — and its state is private:

- for runs: :meth:`EnvironmentActor.attempt` plays a whole attempt beside the worlds with the runner's own
  code (:class:`clients.attempts.Attempts`): the built-in agents on in-memory MCP, ``cmd:`` agents on the
  node against the actor's own MCP server over HTTP (sealed by a control token only the actor holds). It
  returns the result line with the record (and the command's log), which the driver writes;
- for trainers: :meth:`create`, :meth:`call_tool`, :meth:`grade`, :meth:`finish`, :meth:`release` and
  :meth:`record`, each a plain method call; with ``mcp=True`` a created episode also gets an ``mcp_url`` on
  this actor's node, for an agent that speaks MCP itself.

The actor is an async actor: its episodes share one event loop (one core), as they do in a local run. The
in-memory MCP client and the HTTP server must be opened and closed by one task (the SDK's task groups), so
a host task owns them for the actor's lifetime and every other call asks it to open what it needs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import ray

from clients.agents import AgentOptions, make_agent
from clients.agents._provider import invalid_arguments_text
from clients.agents.base import Agent, Limits, openai_tool
from clients.attempts import Attempts, EpisodeItem
from clients.backends import Connector, Handle, HttpBackend, LocalBackend, merge_messages
from clients.results import ResultLine
from clients.selection import resolve_environment
from fixtures.errors import TaskError
from servers.direct import call_direct
from servers.record import MessageEvent
from servers.tool_cache import ToolCache

__all__ = ["EnvironmentActor", "RunSpec", "AttemptOutcome", "node_host"]

log = logging.getLogger("toolgym.ray")

T = TypeVar("T")

_Request = tuple[Callable[[AsyncExitStack], Awaitable[Any]], "asyncio.Future[Any]"]
"""Something to open in the host task, and where its result goes."""

LOG_CAP = 1 << 20
"""Bytes of an external agent's log sent back to the driver (its tail, when longer)."""


@dataclass(frozen=True)
class RunSpec:
    """What an actor needs to play a run's attempts: sent with each attempt, so a restarted actor can too."""

    run_id: str
    agent: str | Agent
    """A spec string, built again on the actor, or an agent object sent as it is (e.g. a replay)."""
    options: AgentOptions = field(default_factory=AgentOptions)
    """Settings of the LLM and external agents (``log_dir`` is the actor's own)."""
    limits: Limits = field(default_factory=Limits)


@dataclass(frozen=True)
class AttemptOutcome:
    """One attempt as an actor played it."""

    line: ResultLine
    rerun: bool
    """Whether running the episode again may help (an infrastructure error that retrying can fix)."""
    record: str | None
    """The episode's record (JSONL), when one was written."""
    log: str | None
    """An external agent's output, when it wrote any (at most :data:`LOG_CAP` bytes)."""
    log_dir: str
    """The actor's folder of agent logs (paths in ``line.stop_detail`` point there)."""


def node_host(host: str) -> str:
    """``node``: this node's IP address (reachable from the rest of the cluster); else ``host`` as given."""
    return ray.util.get_node_ip_address() if host == "node" else host


@ray.remote
class EnvironmentActor:
    """One environment's episodes in a Ray actor. Create it through :class:`clients.ray.EnvPool`.

    Args:
        env: the environment, as ``toolgym run`` takes it: a name under ``envs/`` or ``module:attribute``.
        mcp_host: where the actor's MCP server listens when an episode asks for an ``mcp_url``: ``127.0.0.1``
            (agents on the same node), ``node`` (this node's IP, for agents elsewhere in the cluster: the
            MCP endpoints are then open to that network; the control API stays sealed by the actor's token).
    """

    def __init__(self, env: str, mcp_host: str = "127.0.0.1") -> None:
        logging.basicConfig(level=logging.WARNING)
        self._env = env
        self._environment = resolve_environment(env)
        self._mcp_host = mcp_host
        self._folder = Path(tempfile.mkdtemp(prefix="toolgym-actor-"))
        self._requests: asyncio.Queue[_Request] | None = None
        self._host_task: asyncio.Task[None] | None = None
        self._opened: dict[str, Any] = {}
        self._opening = asyncio.Lock()
        self._runs_lock = asyncio.Lock()
        self._runs: dict[str, Attempts] = {}
        self._episodes: dict[str, Handle] = {}

    # -- the host task: owns every client and server the actor opens ---------------------------------------

    async def _in_host(self, fn: Callable[[AsyncExitStack], Awaitable[T]]) -> T:
        if self._requests is None:
            self._requests = asyncio.Queue()
            self._host_task = asyncio.get_running_loop().create_task(self._host(self._requests))
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        await self._requests.put((fn, future))
        return await future

    @staticmethod
    async def _host(requests: asyncio.Queue[_Request]) -> None:
        async with AsyncExitStack() as stack:  # everything opened here lives until the actor process ends
            while True:
                fn, future = await requests.get()
                try:
                    future.set_result(await fn(stack))
                except Exception as exc:  # noqa: BLE001 - handed to the caller, who raises it
                    future.set_exception(exc)

    async def _open(self, key: str, fn: Callable[[AsyncExitStack], Awaitable[T]]) -> T:
        async with self._opening:
            if key not in self._opened:
                self._opened[key] = await self._in_host(fn)
            return self._opened[key]  # type: ignore[no-any-return]

    async def _local(self) -> tuple[LocalBackend, Connector]:
        """The actor's episode manager and in-memory MCP client (records of run attempts go to its folder)."""

        async def open_local(stack: AsyncExitStack) -> tuple[LocalBackend, Connector]:
            backend = LocalBackend(self._environment, self._folder / "records")
            await backend.start(stack)
            return backend, await stack.enter_async_context(backend.worker())

        return await self._open("local", open_local)

    async def _http(self) -> HttpBackend:
        """The actor's MCP server over HTTP (on its manager, sealed by a token of its own) and a control client."""
        backend, _ = await self._local()

        async def open_http(stack: AsyncExitStack) -> HttpBackend:
            from servers.http import new_token, running_http

            server = await stack.enter_async_context(
                running_http(
                    self._environment, host=node_host(self._mcp_host), manager=backend.manager, token=new_token()
                )
            )
            http = HttpBackend(server.url, self._environment, token=server.token, records_dir=self._folder / "records")
            stack.push_async_callback(http.aclose)
            return http

        return await self._open("http", open_http)

    # -- runs ------------------------------------------------------------------------------------------------

    async def _attempts(self, spec: RunSpec) -> Attempts:
        """The run's agent and backend on this actor, made at its first attempt here."""
        async with self._runs_lock:
            attempts = self._runs.get(spec.run_id)
            if attempts is None:
                if isinstance(spec.agent, str):
                    agent = make_agent(spec.agent, replace(spec.options, log_dir=self._folder / "logs"))
                else:
                    agent = spec.agent
                backend = await self._http() if agent.transport == "http" else (await self._local())[0]
                attempts = self._runs[spec.run_id] = Attempts(self._environment, agent, backend, spec.limits)
            return attempts

    async def attempt(self, spec: RunSpec, item: EpisodeItem, attempt: int) -> AttemptOutcome:
        """Play attempt ``attempt`` of ``item`` here, exactly as a local run would, and return what it left.

        Raises:
            RunError: the run cannot go on (as in a local run: an unknown task, an unusable agent).
        """
        attempts = await self._attempts(spec)
        async with attempts.worker() as connector:
            line, rerun = await attempts.attempt(item, attempt, connector)
        record = _take(self._folder / "records" / f"{item.name}.jsonl")
        log_text = _take(self._folder / "logs" / f"{item.name}.log", tail=LOG_CAP)
        return AttemptOutcome(line, rerun, record, log_text, str(self._folder / "logs"))

    async def end_run(self, run_id: str) -> None:
        """Release what the run's agent holds (HTTP clients of an LLM agent)."""
        attempts = self._runs.pop(run_id, None)
        if attempts is not None:
            await attempts.agent.aclose()

    # -- episodes for trainers, one plain call per step ----------------------------------------------------

    async def create(self, task: str | None, seed: int = 0, mcp: bool = False) -> dict[str, Any]:
        """Open an episode (free play when ``task`` is None): its id, prompt and, with ``mcp``, its MCP URL.

        Raises:
            TaskError: ``task`` names no template of the environment.
        """
        backend, _ = await self._local()
        ident = f"ep-{secrets.token_hex(6)}"
        episode = backend.manager.create(task, seed, episode_id=ident)
        prompt = episode.task.prompt if episode.task is not None else ""
        self._episodes[ident] = Handle(name=ident, id=ident, prompt=prompt, instance=episode.task, episode=episode)
        url = None
        if mcp:
            try:
                url = f"{(await self._http()).url}/episodes/{ident}/mcp"
            except BaseException:
                await self.release(ident)
                raise
        return {"id": ident, "prompt": prompt, "mcp_url": url}

    def _handle(self, episode_id: str) -> Handle:
        handle = self._episodes.get(episode_id)
        if handle is None:
            raise KeyError(
                f"no episode {episode_id!r} on this environment actor (finished, released or never created here)"
            )
        return handle

    async def call_tool(
        self, episode_id: str, name: str, arguments: dict[str, Any] | str | None = None
    ) -> tuple[str, bool, Any, int]:
        """One tool call, answered in process as an MCP client would receive it (``servers/direct.py``):
        ``(text, is_error, structured, tool calls so far)``.

        Arguments given as text (a model's raw output) that are not a JSON object come back as an
        ``invalid_arguments`` observation, never an exception.
        """
        handle = self._handle(episode_id)
        episode = handle.episode
        assert episode is not None  # a trainer's episode is made here, with its episode
        if isinstance(arguments, str):
            parsed, problem = _parse_arguments(arguments)
            if problem is not None:
                return invalid_arguments_text(problem), True, None, episode.seq
            arguments = parsed
        answer = await call_direct(episode, name, arguments or {})
        return answer.text, answer.is_error, answer.structured, episode.seq

    async def grade(self, episode_id: str) -> dict[str, Any]:
        """Close the episode and grade it: the grade as JSON (score, passed, criteria with evidence).

        Raises:
            TaskError: the episode is free play (no rubric).
            GradingError: the rubric cannot be evaluated.
        """
        handle = self._handle(episode_id)
        if handle.instance is None:
            raise TaskError(f"episode {episode_id} is free play: there is no rubric to compute a reward from")
        backend, _ = await self._local()
        await backend.finish(handle, "closed")
        return await backend.grade(handle)

    async def record(self, episode_id: str) -> str:
        """The episode's record (JSONL) so far; a released episode's stays readable for a while."""
        backend, _ = await self._local()
        return backend.manager.record(episode_id).to_jsonl()

    async def finish(
        self, episode_id: str, messages: list[tuple[int, MessageEvent]] | None = None, with_record: bool = False
    ) -> dict[str, Any]:
        """Close, grade and release in one call: ``{"grade": ..., "record": JSONL or None}``.

        ``messages`` (position among the tool calls, message) are merged into the returned record.

        Raises:
            TaskError, GradingError: as :meth:`grade` (the episode is released all the same).
        """
        try:
            grade = await self.grade(episode_id)
            text = None
            if with_record:
                backend, _ = await self._local()
                text = merge_messages(backend.manager.record(episode_id), messages or []).to_jsonl()
            return {"grade": grade, "record": text}
        finally:
            await self.release(episode_id)

    async def release(self, episode_id: str) -> None:
        """Free the episode's world; idempotent."""
        handle = self._episodes.pop(episode_id, None)
        if handle is not None:
            backend, _ = await self._local()
            await backend.release(handle)

    async def tools(self) -> dict[str, Any]:
        """The environment's tools as OpenAI function schemas, and its instructions."""
        listing = ToolCache.local(self._environment).tools or []
        return {"tools": [openai_tool(t) for t in listing], "instructions": self._environment.instructions or None}

    # -- health -----------------------------------------------------------------------------------------------

    async def ping(self) -> dict[str, Any]:
        """Who answers: environment, node, pid, live episodes (the pool waits on this after a start or restart)."""
        return {
            "env": self._environment.name,
            "node": ray.util.get_node_ip_address(),
            "pid": os.getpid(),
            "episodes": len(self._episodes),
        }

    async def memory(self) -> dict[str, int]:
        """This process's resident memory: ``rss`` and ``pss`` (shared pages counted in proportion), in bytes."""
        found = {"rss": 0, "pss": 0}
        try:
            for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
                key, _, value = line.partition(":")
                if key.lower() in found:
                    found[key.lower()] = int(value.split()[0]) * 1024
        except OSError:  # not Linux: leave zeros
            pass
        return found

    def __del__(self) -> None:
        shutil.rmtree(getattr(self, "_folder", ""), ignore_errors=True)


def _parse_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    import json

    try:
        parsed = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        return {}, f"arguments are not valid JSON ({exc})"
    if not isinstance(parsed, dict):
        return {}, f"arguments must be a JSON object, not {type(parsed).__name__}"
    return parsed, None


def _take(path: Path, *, tail: int | None = None) -> str | None:
    """The text of ``path`` (its last ``tail`` bytes), removing the file; None when there is none."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    path.unlink(missing_ok=True)
    if tail is not None and len(data) > tail:
        data = data[-tail:]
    return data.decode("utf-8", errors="replace")
