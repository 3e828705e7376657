"""pytest plugin (entry point ``toolgym``): fixtures to test graders and agents against real episodes.

Installed with toolgym and active in every pytest run; it imports nothing heavy until a fixture is used.
The fixtures are plain (synchronous) fixtures that hand back async functions, so they work under any
async test plugin (pytest-asyncio in strict or auto mode, anyio) — and under none: an ``async def`` test
that uses a toolgym fixture and that no async plugin claims (no ``asyncio``/``anyio``/``trio`` mark, no
``asyncio_mode = "auto"``) is run by this plugin on a fresh event loop (anyio's asyncio backend), so the
examples below pass in a project with no configuration at all::

    async def test_unverified_transfer_fails(toolgym_episode, toolgym_play, toolgym_grade):
        episode = await toolgym_episode("finance", task="wire_vendor", seed=3)
        await toolgym_play(episode, [("transfer", {"from_account": 1, "to_account": 2, "amount": "10.00"})])
        grade = await toolgym_grade(episode)
        assert not grade.passed and "verified first" in grade.failed_gates

    async def test_finance_graders(toolgym_check):
        report = await toolgym_check("finance", seeds=2)
        assert report.ok, report.summary()

``toolgym_episode`` accepts an environment name, ``"module:attribute"`` or an ``Environment``; every episode
it creates is released at teardown.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from graders.grade import Grade
    from graders.metaeval import CheckReport
    from graders.play import CallLike, PlayedCall
    from servers.environment import Environment
    from servers.episodes import Episode, EpisodeManager

__all__ = ["EpisodeFactory", "toolgym_episode", "toolgym_play", "toolgym_grade", "toolgym_check", "FIXTURES", "pytest_pyfunc_call"]

FIXTURES = frozenset({"toolgym_episode", "toolgym_play", "toolgym_grade", "toolgym_check"})
"""This plugin's fixtures: an async test using one of them is run here when no async plugin claims it."""

ASYNC_MARKERS = ("asyncio", "anyio", "trio")
"""Marks by which an async test plugin claims a test (pytest-asyncio's auto mode adds ``asyncio`` itself)."""


class EpisodeFactory:
    """Creates episodes for a test (one manager per environment) and releases them all at teardown."""

    def __init__(self) -> None:
        self._managers: dict[int, EpisodeManager] = {}
        self._owner: dict[str, EpisodeManager] = {}

    async def __call__(
        self, env: str | Environment, task: str | None = None, seed: int = 0, *, record_path: Path | None = None
    ) -> Episode:
        """A new episode of ``env``: task ``task`` with ``seed`` (free play on fixture seed ``seed`` when no task)."""
        from graders.resolve import resolve_environment
        from servers.episodes import EpisodeManager

        environment = resolve_environment(env)
        manager = self._managers.get(id(environment))
        if manager is None:
            manager = self._managers[id(environment)] = EpisodeManager(environment)
        episode = manager.create(task=task, seed=seed, record_path=record_path)
        self._owner[episode.id] = manager
        return episode

    def close(self, episode: Episode) -> None:
        """Close ``episode`` (writes its record footer) if this factory made it and it is live."""
        manager = self._owner.get(episode.id)
        if manager is not None and episode.state == "live":
            manager.close(episode.id)

    def release_all(self) -> None:
        """Release every episode this factory created."""
        for manager in self._managers.values():
            manager.close_all()


@pytest.fixture
def toolgym_episode() -> Iterator[EpisodeFactory]:
    """``await toolgym_episode(env, task=None, seed=0)`` → a live episode; all are released at teardown."""
    factory = EpisodeFactory()
    yield factory
    factory.release_all()


@pytest.fixture
def toolgym_play() -> Any:
    """``await toolgym_play(episode, calls)`` plays ToolCalls / ``(tool, args)`` pairs over a real MCP client."""
    from graders.play import play

    async def run(episode: Episode, calls: Iterable[CallLike], *, stop_on_error: bool = False) -> list[PlayedCall]:
        return await play(episode, calls, stop_on_error=stop_on_error)

    return run


@pytest.fixture
def toolgym_grade(toolgym_episode: EpisodeFactory) -> Any:
    """``await toolgym_grade(episode)`` closes the episode (if the factory made it) and grades it."""
    from graders.grading import grade_episode

    async def run(episode: Episode, *, close: bool = True, judge_from_env: bool = True) -> Grade:
        if close:
            toolgym_episode.close(episode)
        return await grade_episode(episode, judge_from_env=judge_from_env)

    return run


@pytest.fixture
def toolgym_check() -> Any:
    """``await toolgym_check(env, seeds=2, templates=None)`` → the meta-evaluation report of ``env``."""
    from graders.metaeval import check_environment
    from graders.resolve import resolve_environment

    async def run(env: str | Environment, *, seeds: int | Sequence[int] = 2, templates: Sequence[str] | None = None) -> CheckReport:
        return await check_environment(resolve_environment(env), seeds=seeds, templates=templates)

    return run


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run an ``async def`` test that uses a toolgym fixture when no async plugin claimed it.

    Without this, such a test fails (pytest 8.4+) or is skipped with "async def functions are not natively
    supported" in a project without ``asyncio_mode = "auto"``. A test another plugin handles — marked
    ``asyncio``, ``anyio`` or ``trio``, or already made synchronous by pytest-asyncio — is left to it.
    """
    function = pyfuncitem.obj
    if not inspect.iscoroutinefunction(function) or any(pyfuncitem.get_closest_marker(m) for m in ASYNC_MARKERS):
        return None
    names = pyfuncitem._fixtureinfo.argnames  # noqa: SLF001 - what pytest's own pyfunc_call reads
    if not FIXTURES & set(pyfuncitem.fixturenames):
        return None
    import anyio

    arguments = {name: pyfuncitem.funcargs[name] for name in names}
    anyio.run(functools.partial(function, **arguments))
    return True
