"""A pool of environment actors: started, placed and replaced by Ray, handed out one episode at a time.

:class:`EnvPool` starts the actors (each reserving ``num_cpus`` and any custom ``resources``; spread over
the nodes, or placed in the bundles of a placement group the caller made), picks the least busy one for
each new episode, and keeps every episode on the actor that holds its world. When an actor dies (killed,
its node lost), the calls in flight on it fail as :class:`EpisodeLost` — an infrastructure error of class
``connection``, never the agent's — and the pool takes it out of rotation until Ray has restarted it
(``max_restarts``) or, when Ray will not, until a new actor has replaced it.

A pool can be sent into a Ray task or actor (it pickles to its actor handles), so a trainer's rollout
workers can share one; only the process that started it stops its actors.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import ray
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from clients.errors import InfrastructureError, RunError
from clients.ray.actor import EnvironmentActor
from clients.ray.episode import EpisodeLost, RemoteEpisode
from fixtures.errors import EnvironmentNotFound
from servers.environment import Environment

__all__ = ["EnvPool", "EpisodeLost", "environment_ref", "LOST"]

log = logging.getLogger("toolgym.ray")

LOST: tuple[type[BaseException], ...] = (
    ray.exceptions.RayActorError,  # died, or unreachable (restarting) while the call was in flight
    ray.exceptions.WorkerCrashedError,
    ray.exceptions.NodeDiedError,
    ray.exceptions.ObjectLostError,
)
"""What a call raises when its actor (or the node under it) died while the call was in flight."""


def environment_ref(env: str | Environment) -> str:
    """How an actor finds ``env``: its name under ``envs/``, or ``module:attribute`` for one defined elsewhere.

    Raises:
        RunError: an Environment object that no importable module holds (actors import, never unpickle, worlds).
    """
    if isinstance(env, str):
        return env
    from servers.registry import load_environment

    try:
        if load_environment(env.name) is env:
            return env.name
    except EnvironmentNotFound:
        pass
    names = [env.tasks_module] if env.tasks_module else []
    for name in [*names, *list(sys.modules)]:
        module = sys.modules.get(name or "")
        for attribute, value in list(vars(module).items()) if module is not None else []:
            if value is env:
                return f"{name}:{attribute}"
    raise RunError(
        f"environment {env.name!r} is not an attribute of any importable module, so Ray actors cannot load it; "
        "give it by name or as module:attribute"
    )


@dataclass
class _Slot:
    """One actor of the pool: its current handle, how busy it is, whether it is up."""

    index: int
    handle: Any
    generation: int = 0
    in_flight: int = 0
    uses: int = 0
    up: bool = True


class EnvPool:
    """Environment actors of one environment, for runs and trainers.

    Args:
        env: the environment: a name under ``envs/``, ``module:attribute``, or an Environment that a module holds.
        actors: how many actors (None: one per CPU the cluster has available, at least one).
        num_cpus: CPUs each actor reserves.
        resources: custom resources each actor needs.
        placement_group: put actor *i* in bundle *i* mod bundles of this group (its strategy decides the
            nodes: ``SPREAD``, ``STRICT_SPREAD``, ``PACK``...); None: Ray's ``SPREAD`` scheduling.
        mcp_host: where an actor's MCP server listens for episodes opened with ``mcp=True`` (``127.0.0.1``, or
            ``node`` for the node's IP, reachable from the rest of the cluster).
        max_restarts: how often Ray restarts a dead actor in place (-1: always); past that, the pool starts a new one.
        start_timeout: seconds for the actors to start, and for a lost one to come back.
    """

    def __init__(
        self,
        env: str | Environment,
        *,
        actors: int | None = None,
        num_cpus: float = 1.0,
        resources: Mapping[str, float] | None = None,
        placement_group: Any = None,
        mcp_host: str = "127.0.0.1",
        max_restarts: int = -1,
        start_timeout: float = 180.0,
    ) -> None:
        if actors is not None and actors < 1:
            raise RunError(f"--actors must be >= 1, got {actors}")
        self.env = environment_ref(env)
        self._count = actors
        self._num_cpus = num_cpus
        self._resources = dict(resources or {})
        self._placement_group = placement_group
        self._mcp_host = mcp_host
        self._max_restarts = max_restarts
        self.start_timeout = start_timeout
        self._prefix = f"toolgym-{secrets.token_hex(4)}"
        self._slots: list[_Slot] = []
        self._owner = True
        self._changed: asyncio.Event | None = None
        self._recovering: set[asyncio.Task[None]] = set()
        self.tools: list[dict[str, Any]] = []
        """The environment's tools as OpenAI function schemas (known once the pool started)."""
        self.instructions: str | None = None
        self.environment_name: str | None = None
        """The environment's name, as the actors loaded it (known once the pool started)."""

    # -- life ------------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._slots)

    @property
    def handles(self) -> list[Any]:
        """The actors' current handles (e.g. to ask one for its ``memory()``)."""
        return [slot.handle for slot in self._slots]

    async def start(self) -> EnvPool:
        """Start the actors and wait until each answers; idempotent.

        Raises:
            RunError: the actors did not start (the environment does not load on the workers, or the
                cluster lacks the CPUs / resources asked for).
        """
        if self._slots:
            return self
        count = self._count or max(1, int(ray.available_resources().get("CPU", 0.0) // max(self._num_cpus, 0.001)))
        self._slots = [_Slot(index, self._spawn(index, 0)) for index in range(count)]
        try:
            answers = await asyncio.wait_for(
                asyncio.gather(*(slot.handle.ping.remote() for slot in self._slots)), self.start_timeout
            )
            listing = await self._slots[0].handle.tools.remote()
        except TimeoutError:
            await self.close()
            available = ray.available_resources().get("CPU", 0.0)
            raise RunError(
                f"{count} environment actors of {self.env!r} did not start within {self.start_timeout:g}s "
                f"(each needs {self._num_cpus:g} CPU{', ' + str(self._resources) if self._resources else ''}; "
                f"the cluster has {available:g} CPUs free): ask for fewer actors or add nodes"
            ) from None
        except LOST as exc:
            await self.close()
            raise RunError(f"environment actors of {self.env!r} could not start: {_first_line(exc)}") from None
        self.tools, self.instructions = listing["tools"], listing["instructions"]
        self.environment_name = answers[0]["env"]
        return self

    def _spawn(self, index: int, generation: int) -> Any:
        options: dict[str, Any] = {
            "num_cpus": self._num_cpus,
            "resources": self._resources,
            "max_restarts": self._max_restarts,
            # An attempt in flight when its actor died is errored and re-run by the runner, never replayed blindly.
            "max_task_retries": 0,
            "max_concurrency": 1000,
            "name": f"{self._prefix}-{index}.{generation}",
        }
        if self._placement_group is not None:
            bundles = self._placement_group.bundle_count
            options["scheduling_strategy"] = PlacementGroupSchedulingStrategy(
                self._placement_group, placement_group_bundle_index=index % bundles
            )
        else:
            options["scheduling_strategy"] = "SPREAD"
        return EnvironmentActor.options(**options).remote(self.env, self._mcp_host)  # type: ignore[attr-defined]

    async def close(self) -> None:
        """Stop the actors (only in the process that started them); idempotent."""
        for task in list(self._recovering):
            task.cancel()
        if self._owner:
            for slot in self._slots:
                try:
                    ray.kill(slot.handle, no_restart=True)
                except Exception:  # noqa: BLE001 - already gone
                    pass
        self._slots = []

    async def __aenter__(self) -> EnvPool:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def __getstate__(self) -> dict[str, Any]:
        state = {key: value for key, value in self.__dict__.items() if key not in ("_changed", "_recovering")}
        state["_slots"] = [_Slot(slot.index, slot.handle, slot.generation) for slot in self._slots]
        state["_owner"] = False  # a copy in a task never stops the actors
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._changed = None
        self._recovering = set()

    # -- handing out actors ------------------------------------------------------------------------------------

    def _event(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    async def acquire(self) -> _Slot:
        """The least busy actor that is up (waiting for one while all are down); :meth:`release` it after.

        Raises:
            InfrastructureError: no actor came back within ``start_timeout``.
        """
        if not self._slots:
            raise RuntimeError("the pool is not started: `await pool.start()` or `async with EnvPool(...)`")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.start_timeout
        while True:
            up = [slot for slot in self._slots if slot.up]
            if up:
                slot = min(up, key=lambda s: (s.in_flight, s.uses))
                slot.in_flight += 1
                slot.uses += 1
                return slot
            left = deadline - loop.time()
            if left <= 0:
                raise InfrastructureError(
                    "connection", f"no environment actor of {self.env!r} is up ({len(self._slots)} lost)"
                )
            event = self._event()
            event.clear()
            try:
                await asyncio.wait_for(event.wait(), left)
            except TimeoutError:
                pass

    def release(self, slot: _Slot) -> None:
        """Give back an actor taken by :meth:`acquire`."""
        slot.in_flight -= 1

    async def call(self, slot: _Slot, method: str, *args: Any, timeout: float | None = None) -> Any:
        """Call ``method`` on the slot's actor: its death becomes :class:`EpisodeLost`; its errors are raised here.

        Raises:
            EpisodeLost: the actor died during the call (it is taken out of rotation until it is back).
            InfrastructureError: no answer within ``timeout`` seconds.
        """
        handle = slot.handle
        ref = getattr(handle, method).remote(*args)
        try:
            return await asyncio.wait_for(_awaitable(ref), timeout) if timeout else await ref
        except TimeoutError:
            ray.cancel(ref)
            raise InfrastructureError(
                "connection", f"environment actor {slot.index} did not answer {method} within {timeout:g}s"
            ) from None
        except LOST as exc:
            self._lost(slot, handle)
            raise EpisodeLost(
                f"environment actor {slot.index} of {self.env!r} died during {method}: {_first_line(exc)}"
            ) from None
        except ray.exceptions.RayTaskError as exc:
            cause = exc.cause
            if isinstance(cause, Exception):
                raise cause from None
            raise

    def _lost(self, slot: _Slot, handle: Any) -> None:
        if slot.handle is not handle or not slot.up:
            return  # already known: another call saw it first
        slot.up = False
        log.warning(
            "environment actor %d of %r died; its episodes in flight are lost",
            slot.index,
            self.env,
        )
        task = asyncio.get_running_loop().create_task(self._recover(slot))
        self._recovering.add(task)
        task.add_done_callback(self._recovering.discard)

    async def _recover(self, slot: _Slot) -> None:
        """Wait for Ray to restart the actor; when it will not, start a new one in its place."""
        pause = 0.5
        while True:
            try:
                await asyncio.wait_for(_awaitable(slot.handle.ping.remote()), self.start_timeout)
                break
            except (TimeoutError, *LOST) as exc:
                if isinstance(exc, ray.exceptions.ActorUnavailableError):  # restarting: ask again shortly
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, 5.0)
                    continue
                if not self._owner:  # a copy in a task waits for restarts; only the pool's owner starts actors
                    log.warning(
                        "environment actor %d of %r is gone for good (%s)", slot.index, self.env, _first_line(exc)
                    )
                    return
                log.warning(
                    "environment actor %d of %r is gone for good (%s); starting a new one",
                    slot.index,
                    self.env,
                    _first_line(exc),
                )
                try:
                    ray.kill(slot.handle, no_restart=True)
                except Exception:  # noqa: BLE001 - already gone
                    pass
                slot.generation += 1
                slot.handle = self._spawn(slot.index, slot.generation)
        slot.up = True
        self._event().set()

    # -- episodes for trainers ----------------------------------------------------------------------------------

    async def open_episode(self, task: str | None = None, seed: int = 0, *, mcp: bool = False) -> RemoteEpisode:
        """Open an episode on the least busy actor; :meth:`RemoteEpisode.finish` (or ``release``) frees it —
        until then its world stays on the actor (prefer :meth:`episode`, which frees it on exit).

        Raises:
            TaskError: ``task`` names no template of the environment.
            EpisodeLost: the actor died while creating it.
        """
        for tries_left in range(len(self._slots), -1, -1):
            slot = await self.acquire()
            try:
                info = await self.call(slot, "create", task, seed, mcp)
            except EpisodeLost:  # nothing was played yet: open it on another actor
                self.release(slot)
                if tries_left == 0:
                    raise
                continue
            except BaseException:
                self.release(slot)
                raise
            return RemoteEpisode(self, slot, info)
        raise AssertionError("unreachable")

    @asynccontextmanager
    async def episode(
        self, task: str | None = None, seed: int = 0, *, mcp: bool = False
    ) -> AsyncIterator[RemoteEpisode]:
        """:meth:`open_episode` as a block: the episode is released on exit if it was not finished."""
        episode = await self.open_episode(task, seed, mcp=mcp)
        try:
            yield episode
        finally:
            await episode.release()


def _awaitable(ref: Any) -> Any:
    async def wait() -> Any:
        return await ref

    return wait()


def _first_line(exc: BaseException) -> str:
    """One line on why a call failed: a constructor's own error (the last line of Ray's traceback), else the first."""
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    if "creation task" in lines[0]:
        return lines[-1].strip()
    return f"{type(exc).__name__}: {lines[0]}"
