"""Where a run's episodes live: in this process (default) or on a ``toolgym serve`` server over HTTP.

Both backends give the runner the same five steps — create, connect, log a message, finish (close and
read the record), grade, release — so the runner does not care which one it drives:

- :class:`LocalBackend`: an ``EpisodeManager`` in this process and one in-memory ``mcp.Client`` for all;
  records stream to the run folder as they happen, agent messages go straight into them.
- :class:`HttpBackend`: the control API (``/control/...``) of a running server and an MCP client on the
  episode's URL. The server keeps the authoritative record; the agent's messages are merged into it after
  the episode by their position among the tool calls.

Over HTTP an episode costs its tool calls plus two control requests: the create (which also returns the
oracle when the agent needs it: no local rebuild of the task) and one ``finish`` (close, grade, record,
release). Its MCP client sends nothing before the first tool call: the server's tools and instructions are
fetched once per backend (:class:`servers.server_client.ServerClient`), and against an ``http://`` server
every request — control and MCP — goes through one small keep-alive HTTP client, each episode's MCP client
being a lean 2026-07-28 client (:class:`servers.episode_client.EpisodeClient`); elsewhere it is the SDK's.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import mcp_types as types
from mcp import Client
from pydantic import BaseModel, ValidationError

from clients.errors import InfrastructureError, RunError
from clients.run_files import folder_error, write_file
from fixtures.errors import GradingError, RecordUnwritable
from servers.environment import Environment
from servers.episodes import Episode, EpisodeManager
from servers.memory import SharedClient
from servers.record import MessageEvent, Record
from servers.secrecy import forbid_dumps
from servers.server_client import ControlResponse, ServerClient, TransportError
from servers.tool_cache import ToolCache

if TYPE_CHECKING:
    from graders.tasks import TaskInstance

__all__ = ["Backend", "Connector", "Handle", "LocalBackend", "HttpBackend", "merge_messages", "grade_json"]


@dataclass
class Handle:
    """One episode as a backend tracks it."""

    name: str
    """The run's name for the episode (the record file's stem)."""
    id: str
    """The episode id on its server (equal to ``name`` in process)."""
    prompt: str
    mcp_url: str | None = None
    instance: TaskInstance | None = None
    episode: Episode | None = None
    messages: list[tuple[int, MessageEvent]] = field(default_factory=list)
    grade: dict[str, Any] | None = None
    """The grade a combined ``finish`` already returned (HTTP)."""
    grade_error: str | None = None
    """Why that ``finish`` could not grade (HTTP)."""
    released: bool = False
    """The server already released the episode (HTTP ``finish``)."""


class Connector(Protocol):
    """Opens MCP clients for the episodes of one worker."""

    def connect(self, handle: Handle) -> AbstractAsyncContextManager[Client]:
        """A connected ``mcp.Client`` bound to ``handle``'s episode for the duration of the block."""
        ...


class Backend(Protocol):
    """What the runner needs from wherever episodes live."""

    async def create(self, task: str, seed: int, name: str, *, need_instance: bool) -> Handle:
        """Open an episode of ``task`` with ``seed``."""
        ...

    def worker(self) -> AbstractAsyncContextManager[Connector]:
        """What one runner worker (one task, one episode at a time) connects its episodes with."""
        ...

    def log(self, handle: Handle, event: MessageEvent, position: int) -> None:
        """Keep one agent message; ``position`` = tool calls completed when it was logged."""
        ...

    async def finish(self, handle: Handle, reason: str) -> Record:
        """Close the episode and return its full record (agent messages included)."""
        ...

    async def grade(self, handle: Handle) -> dict[str, Any]:
        """The closed episode's grade as JSON."""
        ...

    async def release(self, handle: Handle) -> None:
        """Free the episode's world; idempotent, never raises for a vanished episode."""
        ...


def grade_json(grade: Any) -> dict[str, Any]:
    """A grade (pydantic model or already JSON) as a plain dict."""
    if isinstance(grade, BaseModel):
        return grade.model_dump(mode="json")
    if isinstance(grade, dict):
        return grade
    raise GradingError(f"grader returned {type(grade).__name__}, not a Grade")


def merge_messages(record: Record, messages: list[tuple[int, MessageEvent]]) -> Record:
    """The record with ``messages`` placed after the tool calls that preceded them (stable order)."""
    if not messages:
        return record
    merged: list[Any] = []
    pending = sorted(enumerate(messages), key=lambda item: (item[1][0], item[0]))
    index = 0
    calls = 0
    footer = [e for e in record.events if e.type == "closed"]
    for event in record.events:
        if event.type == "closed":
            continue
        while index < len(pending) and pending[index][1][0] <= calls:
            merged.append(pending[index][1][1])
            index += 1
        merged.append(event)
        if event.type == "tool_call":
            calls += 1
    merged.extend(item[1][1] for item in pending[index:])
    return Record(header=record.header, events=merged + footer)


class LocalClient:
    """The run's shared in-memory client as an agent sees it: every request goes through the SDK client, except
    ``list_tools``, answered from the environment's listing (what the server lists; no request).

    Why: as over HTTP (``servers/episode_client.py``), the runner lists the tools once per server, not once per
    episode (the SDK server validates and dumps finance's 75 KB listing each time), and a listing through the
    session would give it back the output schemas the runner's client leaves out (see :class:`LocalBackend`).
    """

    def __init__(self, client: Client, tools: list[types.Tool]) -> None:
        self._client = client
        self._tools = tools

    async def list_tools(self, *_: Any, **__: Any) -> types.ListToolsResult:
        """The environment's tools, as its server lists them (no request)."""
        return types.ListToolsResult(tools=list(self._tools))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class _LocalConnector:
    """Binds the run's shared in-memory client to one worker's current episode."""

    def __init__(self, shared: SharedClient, tools: list[types.Tool]) -> None:
        self.shared = shared
        self.tools = tools

    @asynccontextmanager
    async def connect(self, handle: Handle) -> AsyncIterator[Any]:
        """The shared client; requests made from this task (and tasks it starts) go to ``handle``'s episode."""
        assert handle.episode is not None
        with self.shared.bind(handle.episode) as client:
            yield LocalClient(client, self.tools)


class LocalBackend:
    """Episodes in this process: an ``EpisodeManager`` plus one in-memory MCP client shared by every worker.

    Why one client: see :class:`servers.memory.SharedClient` (validators compiled once, tools listed once);
    a worker plays one episode at a time and binds the shared client to it. The client does not re-validate tool
    results against their output schemas, as the runner's HTTP client does not either: the results are the
    kit's own dispatcher's pydantic models, and ``toolgym check`` plays every instance through an SDK client that
    does validate them. Measured: an in-process oracle episode 8.4 -> 6.3 ms of CPU (finance), a third of it was
    jsonschema.

    Args:
        environment: the environment of the run.
        records_dir: where each episode's record streams to (``<name>.jsonl``); None keeps records in memory.
    """

    def __init__(self, environment: Environment, records_dir: Path | None, *, max_live: int = 4096) -> None:
        self.environment = environment
        self.records_dir = records_dir
        # Released records are already on disk (or in results); keep almost none in memory.
        # Records stream to the run folder; results.jsonl (fsynced at the end) is what --resume trusts.
        self.manager = EpisodeManager(
            environment, max_live=max_live, history=8, idle_timeout=1e9, closed_ttl=1e9, sync_records=False
        )
        self._shared: SharedClient | None = None

    async def start(self, stack: AsyncExitStack) -> None:
        """Open the shared client on ``stack`` (from the task that will close it)."""
        self._shared = await stack.enter_async_context(SharedClient(self.environment, validate_results=False))

    async def create(self, task: str, seed: int, name: str, *, need_instance: bool) -> Handle:
        """Clone the world, apply the task's setup, start the record file.

        Raises:
            RunError: the record file cannot be written (the run folder's disk: every episode would fail alike).
        """
        path = self.records_dir / f"{name}.jsonl" if self.records_dir is not None else None
        try:
            episode = self.manager.create(task, seed, episode_id=name, record_path=path)
        except RecordUnwritable as exc:
            raise RunError(f"{exc}; free space (or choose a writable --out), then run again with --resume") from None
        prompt = episode.task.prompt if episode.task is not None else ""
        return Handle(name=name, id=episode.id, prompt=prompt, instance=episode.task, episode=episode)

    @asynccontextmanager
    async def _worker(self) -> AsyncIterator[Connector]:
        if self._shared is None:
            raise RuntimeError("LocalBackend.start() was not called")
        yield _LocalConnector(self._shared, ToolCache.local(self.environment).tools or [])

    def worker(self) -> AbstractAsyncContextManager[Connector]:
        """A connector binding the shared client to the worker's episodes."""
        return self._worker()

    def log(self, handle: Handle, event: MessageEvent, position: int) -> None:
        """Append the message to the episode's record (it interleaves with tool calls as they happen); once the
        record file has failed, messages are dropped here and :meth:`finish` stops the run."""
        assert handle.episode is not None
        try:
            handle.episode.append(event)
        except RecordUnwritable:
            pass

    async def finish(self, handle: Handle, reason: str) -> Record:
        """Close the episode (writes the record's footer).

        Raises:
            RunError: the record file could not be written: the run folder's disk is full or read-only, so the
                run stops here (its line could not be kept either); ``--resume`` completes it.
        """
        episode = self.manager.close(handle.id, reason=reason)
        if episode.record_failure is not None:
            raise RunError(f"{episode.record_failure}; the run stopped: free space, then run again with --resume")
        return episode.record

    async def grade(self, handle: Handle) -> dict[str, Any]:
        """Grade the closed episode with ``graders.grading.grade_episode``."""
        from graders.grading import grade_episode

        assert handle.episode is not None
        grade = grade_episode(handle.episode)
        if inspect.isawaitable(grade):
            grade = await grade
        return grade_json(grade)

    async def release(self, handle: Handle) -> None:
        """Free the world."""
        self.manager.release(handle.id)


class HttpBackend:
    """Episodes on a running toolgym server, through its control API and per-episode MCP URLs.

    Args:
        url: the server's base URL (``http://127.0.0.1:8765``; a trailing ``/control`` or ``/mcp`` is accepted).
        environment: the run's environment, loaded here too (task selection; the oracle's instance).
        token: bearer token of the control API (servers require one unless started with ``--no-token``);
            it goes into this client's headers only, never to an agent.
        records_dir: where each episode's merged record is written (``<name>.jsonl``).
    """

    def __init__(self, url: str, environment: Environment, *, token: str | None = None, records_dir: Path | None = None) -> None:
        base = url.rstrip("/")
        for suffix in ("/control", "/mcp"):
            if base.endswith(suffix):
                base = base[: -len(suffix)]
        self.url = base
        self.environment = environment
        self.records_dir = records_dir
        self.token_given = bool(token)
        """Whether a control token was given (a 401 then means it was refused, not missing)."""
        self.server = ServerClient(base, token=token)
        if token is not None:
            forbid_dumps()  # the token is in this process's memory now: keep same-user processes out of it
        """Control requests and the episodes' MCP clients (one set of connections, the token on control only)."""
        self._finish_endpoint = True
        """False once the server turned out to predate ``POST /control/episodes/ID/finish``."""

    async def aclose(self) -> None:
        """Close every connection to the server."""
        await self.server.aclose()

    async def _request(self, method: str, path: str, **kwargs: Any) -> ControlResponse:
        try:
            response = await self.server.control(method, path, **kwargs)
        except TransportError as exc:
            raise InfrastructureError("connection", f"control API {self.url}/control{path}: {exc}") from exc
        if response.status_code >= 400:
            try:
                body = response.json()
                message = f"{body.get('error')}: {body.get('message')}"
            except (ValueError, AttributeError):
                message = response.text[:300]
            if response.status_code == 422:
                raise GradingError(message)
            if response.status_code in (400, 401, 409, 501):
                raise RunError(f"server {self.url} refused {method} /control{path}: HTTP {response.status_code} {message}")
            raise InfrastructureError("connection", f"server {self.url}: {method} /control{path}: HTTP {response.status_code} {message}")
        return response

    async def check(self) -> None:
        """Make sure the server answers and serves this run's environment.

        Raises:
            RunError: unreachable, not a toolgym server, wrong environment, or a wrong token.
        """
        try:
            response = await self.server.control("GET", "/health")
        except TransportError as exc:
            raise RunError(
                f"cannot reach a toolgym server at {self.url} ({type(exc).__name__}: {exc}); "
                f"start one with `toolgym serve {self.environment.name}` or fix --server"
            ) from None
        if response.status_code == 401:
            if self.token_given:
                raise RunError(
                    f"server {self.url} refused the control token given (--token or TOOLGYM_TOKEN): it is not the "
                    "server's; use the one its startup banner printed, or the --token / TOOLGYM_TOKEN it was started with"
                )
            raise RunError(
                f"server {self.url} needs a control token (its startup banner prints it): pass --token or set TOOLGYM_TOKEN"
            )
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code != 200 or not isinstance(body, dict) or "env" not in body:
            raise RunError(f"{self.url} is not a toolgym server (GET /control/health answered {response.status_code})")
        if body["env"] != self.environment.name:
            raise RunError(f"server {self.url} serves environment {body['env']!r}, not {self.environment.name!r}")

    async def create(self, task: str, seed: int, name: str, *, need_instance: bool) -> Handle:
        """Create the episode on the server; when the agent needs the instance, the server sends its oracle."""
        payload: dict[str, Any] = {"task": task, "seed": seed}
        if need_instance:
            payload["oracle"] = True
        response = await self._request("POST", "/episodes", json=payload)
        body = response.json()
        instance = None
        if need_instance:
            instance = self._instance(task, seed, body)
        return Handle(name=name, id=body["id"], prompt=body.get("prompt") or "", mcp_url=body["mcp_url"], instance=instance)

    def _instance(self, task: str, seed: int, body: dict[str, Any]) -> TaskInstance:
        """The task instance as far as an agent may need it: prompt and oracle (the rubric stays on the server)."""
        from graders.tasks import TaskInstance, ToolCall

        oracle = body.get("oracle")
        if not isinstance(oracle, list):  # a server from before the oracle was served: rebuild it here
            world, instance = self.environment.instantiate_task(task, seed)
            world.release()
            return instance
        return TaskInstance.model_construct(
            template_id=task,
            seed=seed,
            prompt=body.get("prompt") or "",
            oracle=[ToolCall.model_validate(step) for step in oracle],
            rubric=[],
            negatives=[],
            # every field with a default factory given: pydantic reads a builtin factory's signature from its text
            # on each construct (~0.2 ms a field, per episode)
            allowed_changes=[],
            metadata={},
        )

    @asynccontextmanager
    async def _worker(self) -> AsyncIterator[Connector]:
        yield self

    def worker(self) -> AbstractAsyncContextManager[Connector]:
        """Each episode has its own URL, so the connector is the backend itself (a client per episode)."""
        return self._worker()

    @asynccontextmanager
    async def connect(self, handle: Handle) -> AsyncIterator[Client]:
        """An MCP client on the episode's URL (``call_tool``, ``list_tools``, ``instructions``), sharing the
        backend's connections and the server's listing."""
        assert handle.mcp_url is not None
        async with self.server.connect(handle.mcp_url) as client:
            yield client

    def log(self, handle: Handle, event: MessageEvent, position: int) -> None:
        """Keep the message for merging into the server's record."""
        handle.messages.append((position, event))

    async def finish(self, handle: Handle, reason: str) -> Record:
        """Close on the server and fetch its record (graded and released in the same request when the episode
        ended normally), merge the agent's messages, write the record file."""
        body = await self._finish(handle, reason) if self._finish_endpoint else None
        if body is None:
            await self._request("POST", f"/episodes/{handle.id}/close")
            body = {"record": (await self._request("GET", f"/episodes/{handle.id}/record")).json()}
        try:
            record = Record.model_validate(body["record"])
        except (ValidationError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise InfrastructureError("connection", f"server {self.url} sent an unreadable record for {handle.id}: {exc}") from exc
        record = merge_messages(record, handle.messages)
        if self.records_dir is not None:
            try:
                self.records_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise folder_error(self.records_dir, exc, "create") from None
            # whole, or a RunError; not fsynced, as the in-process runner's records (see write_file)
            write_file(self.records_dir / f"{handle.name}.jsonl", record.to_jsonl(), sync=False)
        return record

    async def _finish(self, handle: Handle, reason: str) -> dict[str, Any] | None:
        """``POST /control/episodes/{id}/finish``: None when the server has no such endpoint (an older one)."""
        graded = reason == "closed"  # an errored episode is not graded (the runner retries it)
        options = {"reason": reason if reason.replace("_", "").isalnum() else "closed", "grade": graded, "record": True, "release": True}
        try:
            response = await self.server.control("POST", f"/episodes/{handle.id}/finish", json=options)
        except TransportError as exc:
            raise InfrastructureError("connection", f"control API {self.url}/control: {exc}") from exc
        if response.status_code in (404, 405) and _error_code(response) in ("not_found", "http_error"):
            self._finish_endpoint = False
            return None
        if response.status_code >= 400:
            response = await self._request("POST", f"/episodes/{handle.id}/finish", json=options)  # raises the mapped error
        body = response.json()
        handle.released = bool(body.get("released"))
        if graded:
            handle.grade = body.get("grade")
            error = body.get("grade_error")
            handle.grade_error = f"{error.get('error')}: {error.get('message')}" if isinstance(error, dict) else None
        return body

    async def grade(self, handle: Handle) -> dict[str, Any]:
        """The grade ``finish`` returned, else ``POST /control/episodes/{id}/grade``."""
        if handle.grade_error is not None:
            if handle.grade_error.startswith(("grading_unavailable", "not_gradable")):
                raise RunError(f"server {self.url} cannot grade {handle.id}: {handle.grade_error}")
            raise GradingError(handle.grade_error)
        if handle.grade is not None:
            return grade_json(handle.grade)
        response = await self._request("POST", f"/episodes/{handle.id}/grade")
        return grade_json(response.json())

    async def release(self, handle: Handle) -> None:
        """``DELETE /control/episodes/{id}`` unless ``finish`` released it; a vanished episode is fine."""
        if handle.released:
            return
        try:
            await self.server.control("DELETE", f"/episodes/{handle.id}")
        except TransportError:
            pass


def _error_code(response: ControlResponse) -> str | None:
    """The control API's ``error`` code of a response, or None when the body is not one."""
    try:
        body = response.json()
    except ValueError:
        return None
    return body.get("error") if isinstance(body, dict) else None
