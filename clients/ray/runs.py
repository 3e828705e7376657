"""``toolgym run --ray``: a run's attempts played on environment actors, their lines streamed back here.

The driver (this process) plans the run, feeds its workers and writes everything — ``results.jsonl``,
``records/``, ``logs/``, ``summary.json`` — exactly as a local run does, so the progress bar, ``--resume`` and
every reader of a run folder see no difference. What moves is the attempt: :class:`RayAttempts` sends each
one whole to the least busy actor, which runs the runner's own attempt code beside its worlds
(:meth:`clients.ray.actor.EnvironmentActor.attempt`) and sends back the line, the record and any agent log.

Faults follow the blame model (``clients/README.md``). An actor that dies with attempts in flight (killed,
its node lost) makes each of them an errored line of class ``connection``; the runner runs them again after
its backoff on another actor, while Ray restarts the dead one or the pool replaces it. A line is written
only for an attempt whose result reached the driver, so no episode is scored twice. A task-level failure
inside an actor (a crashing tool, the grader) comes back as the same errored line a local run writes.
"""

from __future__ import annotations

import logging
import secrets
import time
from contextlib import AsyncExitStack, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import ray
from ray import cloudpickle

from clients.agents.base import Agent
from clients.attempts import EXTERNAL_SLACK, EpisodeItem
from clients.blame import classify_exception
from clients.errors import InfrastructureError, RunError
from clients.ray.actor import AttemptOutcome, RunSpec
from clients.ray.options import LOCAL, RayOptions
from clients.ray.pool import EnvPool, _Slot
from clients.ray.reach import check_reachable
from clients.ray.shutdown import shutdown_local
from clients.results import ResultLine
from clients.run_files import folder_error, write_file
from servers.environment import Environment

__all__ = ["RayAttempts", "open_ray_attempts", "connect"]

log = logging.getLogger("toolgym.ray")

INLINE_SPEC_BYTES = 64 * 1024
"""A run's spec up to this size is sent with every attempt; a larger one goes to the object store once."""

ANSWER_SLACK = 120.0
"""Seconds past an episode's own limits after which an actor that has not answered is given up on."""


def connect(options: RayOptions | None = None) -> bool:
    """Join (or start) the Ray cluster ``options.address`` names, unless Ray is initialised already.

    Returns:
        Whether this call initialised Ray (the caller then shuts it down).

    Raises:
        RunError: no cluster answers at that address.
    """
    options = options or RayOptions()
    if ray.is_initialized():
        return False
    common: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    if options.runtime_env:
        common["runtime_env"] = dict(options.runtime_env)
    check_reachable(options.address)  # ray.init would wait on a dead address for minutes, warning every 5 s
    try:
        if options.address == LOCAL:
            ray.init(address="local", include_dashboard=False, **common)
        else:
            ray.init(address=options.address, **common)
    except ConnectionError as exc:
        raise RunError(
            f"cannot reach a Ray cluster at {options.address!r} ({exc}); start one with `ray start --head` "
            "on its head node, or omit the address to start one on this machine"
        ) from None
    return True


async def open_ray_attempts(
    stack: AsyncExitStack, config: Any, environment: Environment, agent: Agent, out: Path
) -> RayAttempts:
    """Start the run's actors (and Ray itself when needed), all stopped when ``stack`` closes.

    Args:
        config: the run's ``clients.runner.RunConfig``; ``config.ray`` holds options, or a pool of actors the
            caller started (kept warm across runs: this run neither starts Ray nor stops the actors).

    Raises:
        RunError: no cluster, actors that cannot start, or an agent object that cannot be sent to them.
    """
    if config.server is not None:
        raise RunError("--ray and --server exclude each other: on Ray, every actor serves its own episodes")
    if isinstance(config.ray, EnvPool):  # actors the caller keeps warm across runs (and stops)
        pool, per_actor = config.ray, RayOptions.episodes_per_actor
        await pool.start()
        if pool.environment_name != environment.name:
            raise RunError(f"the pool's actors serve environment {pool.environment_name!r}, not {environment.name!r}")
    else:
        options: RayOptions = config.ray
        if connect(options):
            stack.callback(shutdown_local)  # and no worker of the cluster left behind
        pool = EnvPool(
            config.env,
            actors=options.actors,
            num_cpus=options.num_cpus,
            resources=options.resources,
            start_timeout=options.start_timeout,
        )
        stack.push_async_callback(pool.close)
        await pool.start()
        per_actor = options.episodes_per_actor
    # A spec string is built again on each actor (an LLM agent's HTTP clients do not travel); a replay, or an
    # agent object, travels as it is (its records are read here, where the paths are).
    spec_agent = config.agent if isinstance(config.agent, str) and not config.agent.startswith("replay:") else agent
    spec = RunSpec(
        run_id=secrets.token_hex(6),
        agent=spec_agent,
        # The driver's run folder is hidden from sandboxed agents too (an actor may share its machine).
        options=replace(config.agent_options, log_dir=None, hidden=(*config.agent_options.hidden, out)),
        limits=config.limits,
    )
    try:
        size = len(cloudpickle.dumps(spec))
        # A small spec travels inline with each attempt (no object-store round trip: ~2 ms of an actor's CPU
        # per episode measured); a large one (an agent object holding recorded episodes) is stored once.
        spec_ref: Any = spec if size <= INLINE_SPEC_BYTES else ray.put(spec)
    except Exception as exc:  # noqa: BLE001 - whatever pickling raises
        raise RunError(
            f"agent {agent.spec!r} cannot be sent to Ray actors ({type(exc).__name__}: {exc}); give it as a spec string"
        ) from None
    attempts = RayAttempts(pool, spec, spec_ref, environment.name, agent.spec, out, concurrency=len(pool) * per_actor)
    stack.push_async_callback(attempts.end)
    return attempts


class RayAttempts:
    """Plays a run's attempts on a pool's actors and writes what they leave (records, logs) into ``out``.

    Args:
        pool: the started actors.
        spec: what every actor needs to play the run's attempts; ``spec_ref`` is what each attempt sends (the spec, or its object-store reference when large).
        env: the environment's name; agent: the agent's spec (for lines of attempts that never reached an actor).
        out: the run folder.
        concurrency: episodes at once when the run does not say.
    """

    def __init__(
        self, pool: EnvPool, spec: RunSpec, spec_ref: Any, env: str, agent: str, out: Path, *, concurrency: int
    ) -> None:
        self.pool = pool
        self.spec = spec
        self.spec_ref = spec_ref
        self.env = env
        self.agent = agent
        self.out = out
        self.concurrency = concurrency
        limits = spec.limits
        self.answer_timeout = limits.episode_timeout + limits.provider_timeout + EXTERNAL_SLACK + ANSWER_SLACK

    def worker(self) -> nullcontext[None]:
        """Nothing to hold per worker: each attempt picks its actor."""
        return nullcontext()

    async def attempt(self, item: EpisodeItem, attempt: int, connector: Any = None) -> tuple[ResultLine, bool]:
        """Attempt ``attempt`` of ``item`` on the least busy actor; a lost actor makes it an errored, re-runnable line.

        Raises:
            RunError: the run cannot go on (raised by the actor as a local run would raise it).
        """
        started = time.perf_counter()
        slot: _Slot | None = None
        try:
            slot = await self.pool.acquire()
            outcome: AttemptOutcome = await self.pool.call(
                slot, "attempt", self.spec_ref, item, attempt, timeout=self.answer_timeout
            )
        except RunError:
            raise
        except InfrastructureError as exc:  # the actor died (EpisodeLost), did not answer, or none is up
            log.info("episode %s: %s", item.name, exc.message)
            return self._errored(item, attempt, exc.error_class, exc.message, started), exc.retryable
        except Exception as exc:  # a bug of ours in the actor's own code (never the agent's)
            log.exception("environment actor failed on episode %s", item.name)
            failure = classify_exception(exc)
            return self._errored(item, attempt, failure.error_class, failure.message, started), failure.retryable
        finally:
            if slot is not None:
                self.pool.release(slot)
        return self._keep(item, outcome), outcome.rerun

    def _keep(self, item: EpisodeItem, outcome: AttemptOutcome) -> ResultLine:
        """Write the attempt's record and log into the run folder; the line, with log paths made local."""
        line = outcome.line
        if outcome.record is not None:
            records = self.out / "records"
            _make_folder(records)
            # whole, or a RunError: the run stops; not fsynced, as every runner's records (see write_file)
            write_file(records / f"{item.name}.jsonl", outcome.record, sync=False)
        if outcome.log is not None:
            logs = self.out / "logs"
            _make_folder(logs)
            write_file(logs / f"{item.name}.log", outcome.log, sync=False)
            if line.stop_detail and outcome.log_dir in line.stop_detail:
                line = line.model_copy(update={"stop_detail": line.stop_detail.replace(outcome.log_dir, str(logs))})
        return line

    def _errored(self, item: EpisodeItem, attempt: int, error_class: str, message: str, started: float) -> ResultLine:
        return ResultLine(
            env=self.env,
            task=item.task,
            seed=item.seed,
            trial=item.trial,
            agent=self.agent,
            episode_id="",
            status="errored",
            error_class=error_class,
            error=message,
            wall_ms=round((time.perf_counter() - started) * 1000, 3),
            attempts=attempt,
        )

    async def end(self) -> None:
        """Let every actor release the run's agent (its HTTP clients); actors that are gone are skipped."""
        for slot in [slot for slot in self.pool._slots if slot.up]:  # noqa: SLF001 - the pool's own package
            try:
                await self.pool.call(slot, "end_run", self.spec.run_id, timeout=10.0)
            except Exception:  # noqa: BLE001 - best effort: the actors are stopped next
                log.debug("actor %d could not end the run", slot.index, exc_info=True)


def _make_folder(folder: Path) -> None:
    """``mkdir -p``, or the run folder's one-line RunError."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise folder_error(folder, exc, "create") from None
