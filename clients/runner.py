"""The runner: episodes (task × seed × trial) of one agent, run concurrently, graded, written as they finish.

A run writes into its folder (``runs/latest`` unless ``out`` is given)::

    results.jsonl           one line per finished episode (appended + flushed as episodes finish)
    records/<name>.jsonl    each episode's full record, agent messages included
    logs/<name>.log         output of external agents
    summary.json            the summary (rebuilt from results.jsonl at the end)

Episodes run in this process (``EpisodeManager`` + in-memory MCP) unless a server URL is given, or the
agent is an external command — then they are created through a server's control API (one started here on
127.0.0.1 when no server is given, sealed by a fresh token only the runner holds). The control token, the
given one of ``--server`` or the fresh one, goes to the runner's control client and nowhere else: never to
an agent, its arguments, files or environment.

Every episode ends graded or errored, never both, as :mod:`clients.blame` decides: an attempt that fails
for an infrastructure reason (provider, provider budget, dropped connection, a kit bug, the grader) is run
again after a jittered backoff up to ``retries`` times when that can help, then kept as an *errored* line:
excluded from scores, counted apart. ``resume`` skips the episodes already graded.
"""

from __future__ import annotations

import hashlib
import logging
import random
import re
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from clients import blame
from clients.agents import AgentOptions, make_agent
from clients.agents.base import Agent, AgentResult, AgentSession, Limits
from clients.agents.replay import ReplayAgent
from clients.agents.timing import Backoff, Sleep
from clients.backends import Backend, Connector, Handle, HttpBackend, LocalBackend
from clients.blame import Failure, classify_exception
from clients.errors import RunError
from clients.progress import Reporter, SilentReporter
from clients.results import ResultLine, ResultsWriter, Tokens, check_run_folder, clear_run_folder, latest_by_key
from clients.selection import parse_seeds, resolve_environment, select_tasks
from clients.summary import Summary, summarize
from fixtures.errors import EnvironmentNotFound, GradingError, TaskError
from servers.environment import Environment
from servers.episodes import EpisodeManager
from servers.record import MessageEvent, Record, RejectedCallEvent

__all__ = ["RunConfig", "RunOutcome", "run", "DEFAULT_OUT", "episode_name", "classify_exception"]

log = logging.getLogger("toolgym.runner")

DEFAULT_OUT = Path("runs") / "latest"
"""Where a run goes without ``out``: replaced by every such run (pass ``out`` to keep one)."""

_EXTERNAL_SLACK = 10.0
"""Seconds the runner waits past the episode timeout for an external agent to be killed and reaped."""


@dataclass
class RunConfig:
    """Everything a run needs. Strings are parsed like the CLI flags (``tasks="tag:x"``, ``seeds="0-4"``)."""

    env: str | Environment
    agent: str | Agent
    tasks: str | Sequence[str] | None = None
    """None: every task template (or, for a replay agent, every task of its records)."""
    seeds: str | Sequence[int] | None = None
    """None: seed 0 (or the replay agent's seeds)."""
    trials: int = 1
    concurrency: int = 8
    out: Path | None = None
    resume: bool = False
    overwrite: bool = False
    """Replace an existing run in ``out`` (the default folder is always replaced unless resuming)."""
    server: str | None = None
    """Base URL of a running ``toolgym serve`` (None: episodes in this process, or a server started here)."""
    token: str | None = None
    """Control token of ``server``; it goes to the runner's control client only, never to an agent."""
    limits: Limits = field(default_factory=Limits)
    retries: int = 2
    """Extra attempts for an episode after an infrastructure error (when running it again can help)."""
    rerun_backoff: Backoff = field(default_factory=lambda: Backoff(base=2.0, factor=2.0, cap=60.0))
    """Pause (jittered) before each re-run of an errored episode, so an outage is not hammered."""
    sleep: Sleep | None = None
    """How to pause before a re-run (default ``anyio.sleep``; tests record the pauses instead)."""
    agent_options: AgentOptions = field(default_factory=AgentOptions)


@dataclass
class RunOutcome:
    """What a run produced."""

    out: Path
    summary: Summary
    lines: list[ResultLine]
    """The latest line of every episode of the run folder, sorted by (agent, task, seed, trial)."""
    ran: int
    """Episodes run by this call (resumed ones not counted)."""
    skipped: int


@dataclass(frozen=True)
class _Item:
    task: str
    seed: int
    trial: int
    name: str


def _agent_slug(spec: str) -> str:
    kind, _, argument = spec.partition(":")
    if not argument:
        return kind
    if kind in ("cmd", "replay"):
        return f"{kind}-{hashlib.sha1(argument.encode()).hexdigest()[:8]}"
    return f"{kind}-{re.sub(r'[^A-Za-z0-9_.-]+', '-', argument)[:48]}"


def episode_name(agent_spec: str, task: str, seed: int, trial: int) -> str:
    """The run's file-safe name of an episode (also its id in process): ``<agent>.<task>.s<seed>.t<trial>``."""
    safe_task = re.sub(r"[^A-Za-z0-9_.-]+", "-", task)
    return f"{_agent_slug(agent_spec)}.{safe_task}.s{seed}.t{trial}"


def _find_run_error(exc: BaseException) -> RunError | None:
    if isinstance(exc, RunError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _find_run_error(inner)
            if found is not None:
                return found
    return None


async def _open_backend(stack: AsyncExitStack, config: RunConfig, environment: Environment, agent: Agent, out: Path) -> Backend:
    """The backend the run's episodes live on (a server is checked before anything is written)."""
    if config.server is not None:
        http = HttpBackend(config.server, environment, token=config.token, records_dir=out / "records")
        stack.push_async_callback(http.aclose)
        await http.check()
        return http
    if agent.transport == "http":
        from servers.http import new_token, running_http

        manager = EpisodeManager(environment, max_live=max(64, config.concurrency * 2), history=8)
        # A token of this run's own: the agents it starts share the machine, and must not reach /control.
        server = await stack.enter_async_context(running_http(environment, manager=manager, token=new_token()))
        http = HttpBackend(server.url, environment, token=server.token, records_dir=out / "records")
        stack.push_async_callback(http.aclose)
        return http
    local = LocalBackend(environment, out / "records")
    await local.start(stack)
    return local


async def _run_items(state: _Run, todo: list[_Item], concurrency: int) -> None:
    """Feed the items to ``concurrency`` workers; a RunError from any of them stops the run as itself."""
    send, receive = anyio.create_memory_object_stream[_Item](len(todo) or 1)
    for item in todo:
        send.send_nowait(item)
    send.close()
    try:
        async with anyio.create_task_group() as group:
            for _ in range(min(concurrency, len(todo))):
                group.start_soon(state.worker, receive.clone())
    except BaseExceptionGroup as group_error:
        found = _find_run_error(group_error)
        if found is not None:
            raise found from None
        raise
    finally:
        receive.close()


def _plan(environment: Environment, agent: Agent, config: RunConfig) -> list[_Item]:
    if config.trials < 1:
        raise RunError(f"--trials must be >= 1, got {config.trials}")
    if config.concurrency < 1:
        raise RunError(f"--concurrency must be >= 1, got {config.concurrency}")
    if isinstance(agent, ReplayAgent) and config.tasks is None and config.seeds is None:
        pairs = sorted({(task, seed) for task, seed, _ in agent.available if task is not None})
        known = environment.task_templates()
        missing = sorted({task for task, _ in pairs if task not in known})
        if missing:
            raise RunError(f"replay: records name tasks {', '.join(missing)} that {environment.name!r} does not have")
    else:
        tasks = select_tasks(environment, config.tasks)
        seeds = parse_seeds(config.seeds if config.seeds is not None else [0])
        pairs = [(task, seed) for task in tasks for seed in seeds]
    items = [
        _Item(task, seed, trial, episode_name(agent.spec, task, seed, trial))
        for task, seed in pairs
        for trial in range(config.trials)
    ]
    if isinstance(agent, ReplayAgent):
        for item in items:
            agent.check(item.task, item.seed, item.trial)
    return items


class _Run:
    """One run's state: backend, agent, writer, reporter."""

    def __init__(self, environment: Environment, agent: Agent, backend: Backend, config: RunConfig, writer: ResultsWriter, reporter: Reporter, out: Path) -> None:
        self.environment = environment
        self.agent = agent
        self.backend = backend
        self.config = config
        self.writer = writer
        self.reporter = reporter
        self.out = out
        self.lines: list[ResultLine] = []
        self.sleep: Sleep = config.sleep or anyio.sleep
        self.rng = random.Random()

    async def worker(self, receive: anyio.abc.ObjectReceiveStream[_Item]) -> None:
        """Run items from ``receive`` one at a time, writing each finished episode's line."""
        async with receive, self.backend.worker() as connector:
            async for item in receive:
                line = await self.episode(item, connector)
                self.writer.write(line)
                self.lines.append(line)
                self.reporter.finished(line)

    async def episode(self, item: _Item, connector: Connector) -> ResultLine:
        """One episode, run again after infrastructure errors (with backoff) while that can help."""
        attempt = 0
        failed_tokens = Tokens()
        while True:
            attempt += 1
            line, rerun = await self.attempt(item, attempt, connector)
            if not rerun or attempt > self.config.retries:
                return line.model_copy(update={"failed_attempt_tokens": failed_tokens}) if attempt > 1 else line
            failed_tokens = failed_tokens + line.tokens
            log.info("episode %s errored (%s: %s); running it again", item.name, line.error_class, line.error)
            self.reporter.retrying(line)
            await self.sleep(self.config.rerun_backoff.pause(attempt - 1, rng=self.rng))

    async def _play(self, handle: Handle, session: AgentSession, connector: Connector) -> AgentResult:
        """Let the agent play; the episode's limits end it graded, the provider's budget errored (clients.blame)."""
        limits = self.config.limits
        if self.agent.transport == "http":
            with anyio.fail_after(limits.episode_timeout + _EXTERNAL_SLACK):
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

    async def attempt(self, item: _Item, attempt: int, connector: Connector) -> tuple[ResultLine, bool]:
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
                limits=self.config.limits,
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
                grade = await self.backend.grade(handle)
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


def _write_summary(out: Path, env: str, lines: list[ResultLine], k: int) -> Summary:
    summary = summarize(env, lines, k=k)
    (out / "summary.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return summary


async def run(config: RunConfig, reporter: Reporter | None = None) -> RunOutcome:
    """Run ``config``'s episodes and return the summary (also written to the run folder).

    Raises:
        RunError: unknown environment / task / agent spec, bad seeds, an unreachable or mismatched server,
            a corrupt results file on resume, or an existing run folder that would be overwritten.
    """
    reporter = reporter or SilentReporter()
    environment = resolve_environment(config.env)
    out = config.out or DEFAULT_OUT
    options = config.agent_options
    if options.log_dir is None:
        options = AgentOptions(**{**options.__dict__, "log_dir": out / "logs"})
    agent = make_agent(config.agent, options) if isinstance(config.agent, str) else config.agent
    state: _Run | None = None
    summary: Summary | None = None
    try:
        items = _plan(environment, agent, config)
        previous, cut = check_run_folder(out, default=config.out is None, resume=config.resume, overwrite=config.overwrite, env=environment.name)
        done = {line.key for line in latest_by_key(previous).values() if line.status == "graded"}
        todo = [item for item in items if (item.task, item.seed, item.trial, agent.spec) not in done]
        async with AsyncExitStack() as stack:
            backend = await _open_backend(stack, config, environment, agent, out)
            if not config.resume:
                clear_run_folder(out)
            writer = ResultsWriter(out / "results.jsonl", truncate_to=cut)
            stack.callback(writer.close)
            state = _Run(environment, agent, backend, config, writer, reporter, out)
            reporter.start(total=len(items), done=len(items) - len(todo))
            try:
                await _run_items(state, todo, config.concurrency)
            finally:
                reporter.stop()
                # Even an interrupted run leaves a summary of what finished.
                summary = _write_summary(out, environment.name, list(previous) + state.lines, config.trials)
    finally:
        await agent.aclose()
    assert state is not None and summary is not None
    lines = list(previous) + state.lines
    latest = sorted(latest_by_key(lines).values(), key=lambda r: (r.agent, r.task, r.seed, r.trial))
    return RunOutcome(out=out, summary=summary, lines=latest, ran=len(state.lines), skipped=len(items) - len(todo))
