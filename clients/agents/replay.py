"""The replay agent: plays a saved record's tool calls back, in order, into a new episode.

``replay:PATH`` takes one record file (every episode replays it; its task and seed must match the
episode's) or a run folder (each episode replays the record of the same task, seed and trial found in the
folder's ``results.jsonl``, or in ``records/`` when there is no results file). Replaying a record of a
deterministic environment reproduces its end state, so its grade reproduces too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from clients.agents.base import AgentResult, AgentSession
from clients.errors import AgentSpecError, RunError
from clients.results import read_results
from fixtures.errors import RecordError
from servers.record import Record, RejectedCallEvent, ToolCallEvent, read_record

__all__ = ["ReplayAgent"]

ReplayKey = tuple[str | None, int, int]


class ReplayAgent:
    """Replays recorded tool calls (arguments exactly as they were sent, failed calls included)."""

    transport: Literal["memory"] = "memory"
    needs_instance = False
    needs_tools = False

    def __init__(self, source: str) -> None:
        if not source:
            raise AgentSpecError("replay needs a record file or a run folder: --agent replay:PATH")
        self.spec = f"replay:{source}"
        self.source = Path(source)
        self._single: Record | None = None
        self._paths: dict[ReplayKey, Path] = {}
        self._load()

    def _load(self) -> None:
        path = self.source
        if path.is_file():
            try:
                self._single = read_record(path)
            except RecordError as exc:
                raise AgentSpecError(f"replay: {exc}") from exc
            return
        if not path.is_dir():
            raise AgentSpecError(f"replay: {path} is neither a record file nor a run folder")
        results = path / "results.jsonl"
        if results.exists():
            for line in read_results(results).lines:
                if line.record is not None:
                    self._paths.setdefault((line.task, line.seed, line.trial), path / line.record)
        else:
            for trial_path in sorted((path / "records").glob("*.jsonl")) if (path / "records").is_dir() else []:
                try:
                    header = read_record(trial_path).header
                except RecordError:
                    continue
                self._paths.setdefault((header.task, header.seed, 0), trial_path)
        if not self._paths:
            raise AgentSpecError(f"replay: run folder {path} holds no records (no results.jsonl or records/*.jsonl)")

    @property
    def available(self) -> list[tuple[str | None, int, int]]:
        """(task, seed, trial) of every record this agent can replay, for a run's default selection."""
        if self._single is not None:
            return [(self._single.header.task, self._single.header.seed, 0)]
        return sorted(self._paths, key=lambda k: (k[0] or "", k[1], k[2]))

    def record_for(self, task: str | None, seed: int, trial: int) -> Record:
        """The record to replay for an episode.

        Raises:
            RunError: no record matches (task, seed[, trial]) or the file is unreadable.
        """
        if self._single is not None:
            header = self._single.header
            if (header.task, header.seed) != (task, seed):
                raise RunError(
                    f"replay: {self.source} is a record of task {header.task!r} seed {header.seed}, "
                    f"not task {task!r} seed {seed}; run with --tasks {header.task} --seeds {header.seed}"
                )
            return self._single
        path = self._paths.get((task, seed, trial)) or self._paths.get((task, seed, 0))
        if path is None:
            raise RunError(f"replay: run folder {self.source} has no record of task {task!r} seed {seed} trial {trial}")
        try:
            return read_record(path)
        except RecordError as exc:
            raise RunError(f"replay: {exc}") from exc

    def check(self, task: str | None, seed: int, trial: int) -> None:
        """Raise RunError now (before any episode runs) if (task, seed, trial) has nothing to replay."""
        if self._single is not None:
            self.record_for(task, seed, trial)
        elif (task, seed, trial) not in self._paths and (task, seed, 0) not in self._paths:
            raise RunError(f"replay: run folder {self.source} has no record of task {task!r} seed {seed} trial {trial}")

    async def run(self, session: AgentSession) -> AgentResult:
        """Call every recorded tool call again, in order; calls the original agent rejected are rejected again."""
        record = self.record_for(session.task, session.seed, session.trial)
        for event in record.events:
            if isinstance(event, ToolCallEvent):
                await session.call_tool(event.tool, dict(event.arguments))
            elif isinstance(event, RejectedCallEvent):
                session.reject_call(event.call_id, event.tool, event.raw_arguments, event.error)
        return AgentResult(stop_reason="done")

    async def aclose(self) -> None:
        """Nothing to release."""
