"""One attempt at one episode: create, play, close, grade unless something failed, release — as a result line.

The runner (``clients/runner.py``) decides which episodes to run, re-runs those whose attempt errored and
writes the lines; this module runs one attempt. :class:`Attempts` runs them on a
:class:`~clients.backends.Backend`: the runner's own workers do, in this process, and so does an environment
actor on Ray (``clients/ray/``), which runs this very code beside its worlds — so an episode is played,
classified (:mod:`clients.blame`) and graded the same wherever it ran.
"""

from __future__ import annotations

import logging
import time
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from clients import blame
from clients.agents.base import Agent, AgentResult, AgentSession, Limits
from clients.backends import Backend, Connector, Handle
from clients.blame import Failure, classify_exception
from clients.errors import RunError
from clients.results import ResultLine, Tokens
from fixtures.errors import EnvironmentNotFound, TaskError
from servers.environment import Environment
from servers.record import MessageEvent, Record, RejectedCallEvent

__all__ = ["EpisodeItem", "AttemptRunner", "Attempts", "EXTERNAL_SLACK"]

log = logging.getLogger("toolgym.runner")

EXTERNAL_SLACK = 10.0
"""Seconds the runner waits past the episode timeout for an external agent to be killed and reaped."""


@dataclass(frozen=True)
class EpisodeItem:
    """One episode of a run: task × seed × trial, and its file-safe name (records, logs, id in process)."""

    task: str
    seed: int
    trial: int
    name: str


class AttemptRunner(Protocol):
    """Where a run's attempts run: :class:`Attempts` in this process, or environment actors (``clients.ray``)."""

    concurrency: int
    """Episodes at once when the run does not say (``RunConfig.concurrency`` is None)."""

    def worker(self) -> AbstractAsyncContextManager[Any]:
        """What one runner worker holds while it runs attempts one at a time (e.g. a backend connector)."""
        ...

    async def attempt(self, item: EpisodeItem, attempt: int, connector: Any) -> tuple[ResultLine, bool]:
        """Run attempt number ``attempt`` of ``item``: its line, and whether running it again may help.

        Raises:
            RunError: the run cannot go on (unknown task, unusable server...); anything else is a line.
        """
        ...


class Attempts:
    """Runs attempts on a backend, with one agent: what a runner worker (or an environment actor) does.

    Args:
        environment: the run's environment.
        agent: plays every episode (one object, concurrently).
        backend: where the episodes live.
        limits: each episode's bounds.
    """

    concurrency = 8

    def __init__(self, environment: Environment, agent: Agent, backend: Backend, limits: Limits) -> None:
        self.environment = environment
        self.agent = agent
        self.backend = backend
        self.limits = limits

    def worker(self) -> AbstractAsyncContextManager[Connector]:
        """The backend's connector for one worker's episodes."""
        return self.backend.worker()

    async def _play(self, handle: Handle, session: AgentSession, connector: Connector) -> AgentResult:
        """Let the agent play; the episode's limits end it graded, the provider's budget errored (clients.blame)."""
        limits = self.limits
        if self.agent.transport == "http":
            with anyio.fail_after(limits.episode_timeout + EXTERNAL_SLACK):
                return await self.agent.run(session)
        result: AgentResult | None = None
        with anyio.CancelScope() as scope:
            session.clock.start(scope)
            async with connector.connect(handle) as client:
                session.client = client
                session.instructions = client.instructions
                try:
                    if self.agent.needs_tools:
                        session.tools = list((await client.list_tools()).tools)
                    result = await self.agent.run(session)
                except Exception as exc:
                    result = blame.agent_stop(exc)
                    if result is None:
                        raise
                finally:
                    session.client = None
        return result or blame.out_of_time(session)

    async def attempt(self, item: EpisodeItem, attempt: int, connector: Connector) -> tuple[ResultLine, bool]:
        """One try: create, play, close, grade unless something failed, release; and whether to run it again.

        Never raises but RunError: whatever fails is data, classified by :mod:`clients.blame`.
        """
        started = time.perf_counter()
        env = self.environment.name
        handle: Handle | None = None
        session: AgentSession | None = None
        record: Record | None = None
        grade: dict[str, object] | None = None
        failure: Failure | None = None
        result: AgentResult | None = None
        try:
            handle = await self.backend.create(item.task, item.seed, item.name, need_instance=self.agent.needs_instance)
            current = handle

            def sink(event: MessageEvent | RejectedCallEvent, position: int) -> None:
                self.backend.log(current, event, position)  # type: ignore[arg-type]

            session = AgentSession(
                episode_id=handle.id,
                env=env,
                task=item.task,
                seed=item.seed,
                trial=item.trial,
                name=item.name,
                prompt=handle.prompt,
                limits=self.limits,
                mcp_url=handle.mcp_url,
                instance=handle.instance if self.agent.needs_instance else None,
                sink=sink,
            )
            try:
                result = await self._play(handle, session, connector)
            except RunError:
                raise
            except Exception as exc:  # an episode's failure is data; the run goes on
                failure = classify_exception(exc)
                if failure.error_class == "kit":
                    log.exception("agent %s crashed in episode %s", self.agent.spec, item.name)
            record = await self.backend.finish(handle, "closed" if failure is None else "errored")
            failure = failure or blame.record_failure(record)
            if failure is None:
                try:
                    grade = await self.backend.grade(handle)
                except RunError:
                    raise
                except Exception as exc:  # the kit could not grade what the agent did: errored, never dropped
                    failure = blame.grading_failure(exc)
                    log.warning("episode %s could not be graded: %s", item.name, failure.message)
        except RunError:
            raise
        except (TaskError, EnvironmentNotFound) as exc:
            raise RunError(str(exc)) from None
        except Exception as exc:
            failure = failure or classify_exception(exc)
        finally:
            if handle is not None:
                with anyio.CancelScope(shield=True):
                    try:
                        await self.backend.release(handle)
                    except Exception:  # releasing is best effort; the server reaps what we could not
                        log.warning("could not release episode %s", handle.id, exc_info=True)
        verdict = blame.verdict(failure, grade)
        calls = record.tool_calls if record is not None else []
        rejected = record.rejected_calls if record is not None else []
        graded = verdict.grade
        line = ResultLine(
            env=env,
            task=item.task,
            seed=item.seed,
            trial=item.trial,
            agent=self.agent.spec,
            episode_id=handle.id if handle is not None else "",
            record=f"records/{item.name}.jsonl" if record is not None else None,
            status=verdict.status,
            score=float(graded["score"]) if graded is not None and graded.get("score") is not None else None,  # type: ignore[arg-type]
            passed=bool(graded["passed"]) if graded is not None and "passed" in graded else None,
            grade=graded,
            error_class=verdict.failure.error_class if verdict.failure is not None else None,
            error=verdict.failure.message if verdict.failure is not None else None,
            stop_reason=result.stop_reason if result is not None else None,
            stop_detail=result.detail if result is not None else None,
            tool_calls=len(calls) + len(rejected),
            tool_errors=sum(1 for c in calls if c.error is not None) + len(rejected),
            rejected_calls=len(rejected),
            turns=session.turns if session is not None else 0,
            tokens=session.tokens if session is not None else Tokens(),
            wall_ms=round((time.perf_counter() - started) * 1000, 3),
            provider_wait_ms=round(session.clock.provider_seconds * 1000, 3) if session is not None else 0.0,
            attempts=attempt,
        )
        return line, verdict.rerun
