"""One task instance played by hand: its episode in this process, a real MCP client on it, and the run it leaves.

The player reaches the world exactly as an agent does — tools listed, resources read and tools called through
``mcp.Client`` over the in-memory transport — so what is graded went through the same validation, dispatch and
record as any agent's calls, and the player sees what an agent sees: the server's instructions, the prompt,
the tools' descriptions and schemas, the policy. Never the oracle, the rubric or expected values: the task
instance stays inside the episode until :meth:`Game.finish` grades it.

When the episode ends, :func:`save_run` writes a run folder like ``toolgym run``'s (``records/``,
``results.jsonl``, ``summary.json``), so ``toolgym show``, ``view``, ``grade`` and ``export`` read it as any run.
"""

from __future__ import annotations

import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from mcp import Client
from mcp_types import TextResourceContents, Tool

from clients.backends import grade_json
from clients.blame import Failure, grading_failure, verdict
from clients.results import ResultLine, ResultsWriter, prepare_run_folder, read_results
from clients.run_files import folder_error, write_file
from clients.runner import episode_name
from clients.summary import summarize
from servers.environment import Environment
from servers.episodes import Episode, EpisodeManager
from servers.memory import connect_in_memory
from servers.record import CallError, Record, ToolCallEvent

__all__ = ["CallOutcome", "Finished", "Game", "PLAY_AGENT", "save_run"]

PLAY_AGENT = "play"
"""The ``agent`` of a played episode in its run's results (``toolgym show`` and ``view`` list it so)."""


@dataclass(frozen=True)
class CallOutcome:
    """One call that reached the world, as recorded: a result, or an error with its class, code and message."""

    seq: int
    tool: str
    arguments: dict[str, Any]
    result: Any
    error: CallError | None
    ended: bool
    """The call was a successful final answer: the episode is over."""

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return self.error is None

    def as_json(self) -> dict[str, Any]:
        """The outcome as one JSON object (``--json`` output and session files)."""
        data: dict[str, Any] = {"seq": self.seq, "tool": self.tool, "arguments": self.arguments, "ok": self.ok}
        if self.error is None:
            data["result"] = self.result
        else:
            data["error"] = {"class": self.error.error_class, "code": self.error.code, "message": self.error.message}
        return data


@dataclass(frozen=True)
class Finished:
    """An ended episode: its record and its grade (or why grading failed)."""

    record: Record
    grade: dict[str, Any] | None
    failure: Failure | None
    """Why the episode could not be graded (a kit or grader failure), when it could not."""
    reason: str
    """How it ended: ``submitted`` (a final answer) or ``quit``."""

    @property
    def error(self) -> str | None:
        """The grading failure in words, if any."""
        return self.failure.message if self.failure is not None else None


class Game:
    """An instance of ``task`` on ``seed``, open for play: ``async with Game(env, task, seed) as game: ...``.

    Raises (on entering):
        TaskError: no such template (the message lists some), or the instance cannot be built on this seed.
    """

    def __init__(self, environment: Environment, task: str, seed: int) -> None:
        self.environment = environment
        self.task = task
        self.seed = seed
        self.name = episode_name(PLAY_AGENT, task, seed, 0)
        self.manager = EpisodeManager(
            environment, max_live=1, history=0, idle_timeout=float("inf"), closed_ttl=float("inf")
        )
        self._stack = AsyncExitStack()
        self._episode: Episode | None = None
        self._client: Client | None = None
        self.tools: dict[str, Tool] = {}
        """The episode's tools as the MCP server lists them, by name, in the server's order."""
        self.started = time.perf_counter()

    async def __aenter__(self) -> Game:
        environment = self.environment
        environment.task_template(self.task)  # an unknown task: one line naming some that exist, before any world
        try:
            self._episode = await self.manager.create_async(self.task, self.seed, episode_id=self.name)
            self._client = await self._stack.enter_async_context(connect_in_memory(self._episode))
            self.tools = {tool.name: tool for tool in (await self._client.list_tools()).tools}
        except BaseException:
            await self._stack.aclose()
            self.manager.close_all()
            raise
        self.started = time.perf_counter()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            await self._stack.aclose()
        finally:
            self.manager.close_all()

    @property
    def episode(self) -> Episode:
        """The live (or just ended) episode."""
        if self._episode is None:
            raise RuntimeError("the game has not started: use `async with Game(...)`")
        return self._episode

    @property
    def client(self) -> Client:
        """The MCP client connected to the episode (what the player's calls go through)."""
        if self._client is None:
            raise RuntimeError("the game has not started: use `async with Game(...)`")
        return self._client

    @property
    def prompt(self) -> str:
        """The task as the agent gets it."""
        return self.episode.record.header.prompt or ""

    @property
    def instructions(self) -> str:
        """The server's instructions (an agent's system prompt), empty when the server gives none."""
        return self.client.instructions or ""

    @property
    def live(self) -> bool:
        """Whether the episode still takes calls."""
        return self.episode.state == "live"

    @property
    def calls(self) -> list[ToolCallEvent]:
        """The calls made so far, in order."""
        return self.episode.record.tool_calls

    async def policy(self) -> list[tuple[str, str]]:
        """The policy resource(s) as ``(uri, text)``: those named policy, else every resource the server lists."""
        resources = (await self.client.list_resources()).resources
        chosen = [r for r in resources if r.name == "policy" or str(r.uri).endswith("/policy")] or resources
        found: list[tuple[str, str]] = []
        for resource in chosen:
            contents = (await self.client.read_resource(str(resource.uri))).contents
            text = "\n".join(c.text for c in contents if isinstance(c, TextResourceContents))
            found.append((str(resource.uri), text))
        return found

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallOutcome:
        """Call ``tool`` over MCP and return what the record kept of it (the episode must be live)."""
        if not self.live:
            raise RuntimeError("the episode has ended")
        before = self.episode.seq
        await self.client.call_tool(tool, arguments)
        event = self.calls[-1]
        if self.episode.seq != before + 1 or event.tool != tool:
            raise RuntimeError(f"the call to {tool!r} left no record")  # a kit bug, never the player's doing
        ended = event.error is None and tool in self.environment.answer_tools
        return CallOutcome(
            seq=event.seq, tool=tool, arguments=event.arguments, result=event.result, error=event.error, ended=ended
        )

    async def finish(self, reason: str) -> Finished:
        """Close the episode (``submitted`` or ``quit``) and grade it from its record and end world."""
        from graders.grading import grade_episode

        episode = self.manager.close(self.episode.id, reason=reason)
        grade: dict[str, Any] | None = None
        failure: Failure | None = None
        try:
            grade = grade_json(await grade_episode(episode))
        except Exception as exc:  # the kit could not grade what the player did: said so, never scored
            failure = grading_failure(exc)
        return Finished(record=episode.record, grade=grade, failure=failure, reason=reason)


def save_run(out: Path, environment: Environment, finished: Finished, *, wall_ms: float = 0.0) -> Path:
    """Write the ended episode as a run folder (``records/<name>.jsonl``, ``results.jsonl``, ``summary.json``).

    Returns the record file's path.

    Raises:
        RunError: the folder cannot be written (one line naming it and the reason).
    """
    header = finished.record.header
    name = header.episode_id
    prepare_run_folder(out)
    records = out / "records"
    try:
        records.mkdir(exist_ok=True)
    except OSError as exc:
        raise folder_error(records, exc, "create") from None
    path = records / f"{name}.jsonl"
    write_file(path, finished.record.to_jsonl())
    judged = verdict(finished.failure, finished.grade)
    calls = finished.record.tool_calls
    grade = judged.grade
    line = ResultLine(
        env=environment.name,
        task=str(header.task),
        seed=header.seed,
        trial=0,
        agent=PLAY_AGENT,
        episode_id=name,
        record=f"records/{name}.jsonl",
        status=judged.status,
        score=float(grade["score"]) if grade is not None else None,
        passed=bool(grade["passed"]) if grade is not None else None,
        grade=grade,
        error_class=judged.failure.error_class if judged.failure is not None else None,
        error=finished.error,
        stop_reason="done" if finished.reason == "submitted" else finished.reason,
        tool_calls=len(calls),
        tool_errors=sum(1 for c in calls if c.error is not None),
        wall_ms=round(wall_ms, 3),
    )
    writer = ResultsWriter(out / "results.jsonl")
    try:
        writer.write(line)
    finally:
        writer.close()
    summary = summarize(environment.name, read_results(out / "results.jsonl").lines)
    write_file(out / "summary.json", summary.model_dump_json(indent=2) + "\n")
    return path
