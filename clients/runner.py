"""The runner: episodes (task × seed × trial) of one agent, run concurrently, graded, written as they finish.

A run writes into its folder (``runs/latest`` unless ``out`` is given)::

    results.jsonl           one line per finished episode (appended + flushed as episodes finish)
    records/<name>.jsonl    each episode's full record, agent messages included
    logs/<name>.log         output of external agents
    summary.json            the summary (rebuilt from results.jsonl at the end)

Episodes run in this process (``EpisodeManager`` + in-memory MCP) unless a server URL is given, or the
agent is an external command — then they are created through a server's control API (one started here on
127.0.0.1 when no server is given, sealed by a fresh token only the runner holds) — or the run asks for Ray
(``ray``): then each attempt runs whole on an environment actor (``clients/ray/``) with the same attempt
code (``clients/attempts.py``), and only its line, record and log come back here to be written. The control
token, the given one of ``--server`` or the fresh one, goes to the runner's control client and nowhere else:
never to an agent, its arguments, files or environment; and ``cmd:`` agents run in a sandbox where neither
the kit, this run's folder nor any process of ours exists (``clients/sandbox.py``).

Every episode ends graded or errored, never both, as :mod:`clients.blame` decides: an attempt that fails
for an infrastructure reason (provider, provider budget, dropped connection, a kit bug, the grader) is run
again after a jittered backoff up to ``retries`` times when that can help, then kept as an *errored* line:
excluded from scores, counted apart. ``resume`` skips the episodes already graded; an episode it runs again
carries the tokens of its errored line into ``failed_attempt_tokens`` (tokens spent are never dropped).
"""

from __future__ import annotations

import hashlib
import logging
import random
import re
from collections.abc import Iterator, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from clients.agents import AgentOptions, make_agent
from clients.agents.base import Agent, Limits
from clients.agents.replay import ReplayAgent
from clients.agents.keys import preflight
from clients.agents.timing import Backoff, Sleep
from clients.attempts import AttemptRunner, Attempts, EpisodeItem
from clients.backends import Backend, HttpBackend, LocalBackend
from clients.blame import classify_exception
from clients.errors import RunError
from clients.plan import Plan
from clients.progress import Reporter, SilentReporter
from clients.results import (
    EpisodeKey,
    ResultLine,
    ResultsWriter,
    Tokens,
    check_run_folder,
    clear_run_folder,
    latest_by_key,
    prepare_run_folder,
)
from clients.run_files import write_file
from clients.sandbox import environment_sources
from clients.selection import parse_seeds, resolve_environment, select_tasks
from clients.summary import Summary, summarize
from fixtures.errors import TaskError
from servers.environment import Environment
from servers.episodes import EpisodeManager
from servers.limits import seconds_problem
from servers.private_tasks import with_private_tasks

if TYPE_CHECKING:
    from clients.ray.options import RayOptions
    from clients.ray.pool import EnvPool

__all__ = ["RunConfig", "RunOutcome", "run", "DEFAULT_OUT", "episode_name", "classify_exception"]

log = logging.getLogger("toolgym.runner")

DEFAULT_OUT = Path("runs") / "latest"
"""Where a run goes without ``out``: replaced by every such run (pass ``out`` to keep one)."""

MAX_TRIALS = 10_000
"""Most trials per (task, seed): pass^k needs a handful; more is a typo."""

MAX_CONCURRENCY = 100_000
"""Most episodes at once (each holds a world: memory, not this bound, is the real limit)."""

MAX_RETRIES = 100
"""Most re-runs of one errored episode (with backoff: more would retry an outage for hours)."""


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
    concurrency: int | None = None
    """Episodes at once (None: 8 in process; on Ray, 4 per environment actor)."""
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
    private_tasks: Sequence[str | Path] = ()
    """Sources of held-out task templates merged into the environment's (``servers.private_tasks``)."""
    ray: RayOptions | EnvPool | None = None
    """Run the episodes on environment actors of a Ray cluster (``clients.ray``; needs ``toolgym[ray]``): started
    for the run as the options say, or those of a started pool the caller keeps for several runs."""


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

        manager = EpisodeManager(environment, max_live=max(64, (config.concurrency or Attempts.concurrency) * 2), history=8)
        # A token of this run's own: the agents it starts share the machine, and must not reach /control.
        server = await stack.enter_async_context(running_http(environment, manager=manager, token=new_token()))
        http = HttpBackend(server.url, environment, token=server.token, records_dir=out / "records")
        stack.push_async_callback(http.aclose)
        return http
    local = LocalBackend(environment, out / "records")
    await local.start(stack)
    return local


async def _open_attempts(stack: AsyncExitStack, config: RunConfig, environment: Environment, agent: Agent, out: Path) -> AttemptRunner:
    """Where the run's attempts run: environment actors on Ray (``config.ray``), else a backend here."""
    if config.ray is not None:
        from clients.ray.runs import open_ray_attempts  # imports ray: only for a run that asks for it

        return await open_ray_attempts(stack, config, environment, agent, out)
    return Attempts(environment, agent, await _open_backend(stack, config, environment, agent, out), config.limits)


async def _run_items(state: _Run, todo: Iterator[EpisodeItem], count: int, concurrency: int) -> None:
    """Feed ``count`` items to ``concurrency`` workers as they take them (the plan is never listed whole); a
    RunError from any of them stops the run as itself."""
    workers = min(concurrency, count)
    send, receive = anyio.create_memory_object_stream[EpisodeItem](workers or 1)

    async def feed() -> None:
        async with send:
            for item in todo:
                await send.send(item)

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(feed)
            for _ in range(workers):
                group.start_soon(state.worker, receive.clone())
            receive.close()
    except BaseExceptionGroup as group_error:
        found = _find_run_error(group_error)
        if found is not None:
            raise found from None
        raise


def _check_config(config: RunConfig) -> None:
    """Every numeric setting within its range, before anything runs (the CLI's flags check the same)."""
    limits = config.limits
    checks = [
        ("--trials", config.trials, 1, MAX_TRIALS),
        ("--concurrency", config.concurrency if config.concurrency is not None else 1, 1, MAX_CONCURRENCY),
        ("--retries", config.retries, 0, MAX_RETRIES),
        ("--max-turns", limits.max_turns, 1, None),
        ("--max-tool-calls", limits.max_tool_calls, 1, None),
    ]
    for flag, value, low, high in checks:
        if not isinstance(value, int) or isinstance(value, bool):
            raise RunError(f"{flag} must be an integer, got {value!r}")
        if value < low:
            raise RunError(f"{flag} must be >= {low}, got {value}")
        if high is not None and value > high:
            raise RunError(f"{flag} must be <= {high}, got {value}")
    for flag, seconds in (
        ("--timeout", limits.episode_timeout),
        ("--provider-timeout", limits.provider_timeout),
        ("--request-timeout", limits.request_timeout),
    ):
        problem = seconds_problem(seconds) if isinstance(seconds, (int, float)) else "must be a number of seconds"
        if problem is not None:
            raise RunError(f"{flag} {problem}, got {seconds!r}")


def _plan(environment: Environment, agent: Agent, config: RunConfig) -> Plan:
    _check_config(config)
    if isinstance(agent, ReplayAgent) and config.tasks is None and config.seeds is None:
        pairs = sorted({(task, seed) for task, seed, _ in agent.available if task is not None})
        known = environment.task_templates()
        missing = sorted({task for task, _ in pairs if task not in known})
        if missing:
            raise RunError(f"replay: records name tasks {', '.join(missing)} that {environment.name!r} does not have")
        by_task: dict[str, list[int]] = {}
        for task, seed in pairs:
            by_task.setdefault(task, []).append(seed)
        blocks: list[tuple[Sequence[str], Sequence[int]]] = [([task], seeds) for task, seeds in by_task.items()]
    else:
        tasks = select_tasks(environment, config.tasks)
        blocks = [(tasks, parse_seeds(config.seeds if config.seeds is not None else [0]))]
    plan = Plan(agent.spec, blocks, config.trials, episode_name)
    if isinstance(agent, ReplayAgent):
        for item in plan:  # a replay's records are finite: a missing one fails here, before anything runs
            agent.check(item.task, item.seed, item.trial)
    return plan


class _Run:
    """One run's state: where its attempts run, writer, reporter."""

    def __init__(
        self, attempts: AttemptRunner, config: RunConfig, writer: ResultsWriter, reporter: Reporter, carried: dict[EpisodeKey, Tokens] | None = None
    ) -> None:
        self.attempts = attempts
        self.carried = carried or {}
        """Tokens of the errored lines a resume runs again, by episode key (they go into the new line)."""
        self.config = config
        self.writer = writer
        self.reporter = reporter
        self.lines: list[ResultLine] = []
        self.sleep: Sleep = config.sleep or anyio.sleep
        self.rng = random.Random()

    async def worker(self, receive: anyio.abc.ObjectReceiveStream[EpisodeItem]) -> None:
        """Run items from ``receive`` one at a time, writing each finished episode's line."""
        async with receive, self.attempts.worker() as connector:
            async for item in receive:
                line = await self.episode(item, connector)
                self.writer.write(line)
                self.lines.append(line)
                self.reporter.finished(line)

    async def episode(self, item: EpisodeItem, connector: Any) -> ResultLine:
        """One episode, run again after infrastructure errors (with backoff) while that can help."""
        attempt = 0
        failed_tokens = Tokens()
        while True:
            attempt += 1
            line, rerun = await self.attempts.attempt(item, attempt, connector)
            if not rerun or attempt > self.config.retries:
                earlier = failed_tokens + self.carried.get(line.key, Tokens())
                return line.model_copy(update={"failed_attempt_tokens": earlier}) if earlier != Tokens() else line
            failed_tokens = failed_tokens + line.tokens
            log.info("episode %s errored (%s: %s); running it again", item.name, line.error_class, line.error)
            self.reporter.retrying(line)
            await self.sleep(self.config.rerun_backoff.pause(attempt - 1, rng=self.rng))


async def run(config: RunConfig, reporter: Reporter | None = None) -> RunOutcome:
    """Run ``config``'s episodes and return the summary (also written to the run folder).

    Raises:
        RunError: unknown environment / task / agent spec, bad seeds, an unreachable or mismatched server,
            a corrupt results file on resume, or an existing run folder that would be overwritten.
    """
    reporter = reporter or SilentReporter()
    environment = resolve_environment(config.env)
    if config.private_tasks:
        if config.ray is not None:
            raise RunError("--private-tasks is not supported with --ray yet: actors load the environment by name")
        try:
            environment = with_private_tasks(environment, config.private_tasks)
        except TaskError as exc:
            raise RunError(str(exc)) from None
    out = config.out or DEFAULT_OUT
    options = config.agent_options
    if options.log_dir is None:
        options = replace(options, log_dir=out / "logs")
    if isinstance(config.agent, str) and config.agent.strip().startswith("cmd:"):
        # What a sandboxed agent must not see besides the kit itself: this run's folder, the task sources.
        options = replace(options, hidden=(*options.hidden, out, *environment_sources(environment)))
    agent = make_agent(config.agent, options) if isinstance(config.agent, str) else config.agent
    state: _Run | None = None
    summary: Summary | None = None
    try:
        plan = _plan(environment, agent, config)
        previous, cut = check_run_folder(out, default=config.out is None, resume=config.resume, overwrite=config.overwrite, env=environment.name)
        latest = latest_by_key(previous)
        done = {key for key, line in latest.items() if line.status == "graded"}
        # an errored line a resume supersedes takes its tokens along (with those of the attempts before it)
        carried = {key: line.tokens + line.failed_attempt_tokens for key, line in latest.items() if line.status == "errored"}
        skipped = plan.count_done(done)
        if skipped < len(plan) and config.ray is None:  # on Ray, keys are read on the nodes: the driver may hold none
            await preflight(agent)
        async with AsyncExitStack() as stack:
            attempts = await _open_attempts(stack, config, environment, agent, out)
            prepare_run_folder(out)  # a file in the way, a read-only or full disk: one line now, before any episode
            if not config.resume:
                clear_run_folder(out)
            writer = ResultsWriter(out / "results.jsonl", truncate_to=cut)
            stack.callback(writer.close)
            state = _Run(attempts, config, writer, reporter, carried)
            reporter.start(total=len(plan), done=skipped)
            failed = False
            try:
                await _run_items(state, plan.todo(done), len(plan) - skipped, config.concurrency or attempts.concurrency)
            except BaseException:
                failed = True
                raise
            finally:
                reporter.stop()
                # Even an interrupted run leaves a summary of what finished (when the disk lets it: a summary
                # that cannot be written never hides the error that stopped the run).
                summary = summarize(environment.name, list(previous) + state.lines, k=config.trials)
                try:
                    write_file(out / "summary.json", summary.model_dump_json(indent=2) + "\n")
                except RunError as exc:
                    if not failed:
                        raise
                    log.warning("%s", exc)
    finally:
        await agent.aclose()
    assert state is not None and summary is not None
    lines = list(previous) + state.lines
    latest = sorted(latest_by_key(lines).values(), key=lambda r: (r.agent, r.task, r.seed, r.trial))
    return RunOutcome(out=out, summary=summary, lines=latest, ran=len(state.lines), skipped=skipped)
