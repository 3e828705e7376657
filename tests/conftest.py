"""Shared test fixtures: the toy environment's managers and episodes (every test starts from a fresh world); the
suite's tiers and parallel scheduling (``tests/tiers.py``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from mcp.client.session import ClientSession

from servers.episodes import Episode, EpisodeManager
from tests.session_cache import session_root
from tests.tiers import pytest_collection_modifyitems, pytest_configure, pytest_xdist_auto_num_workers
from tests.toy_env import environment as toy_environment
from tests.toy_env import faulty_environment

# tests/tiers.py's hooks, registered by being names of this conftest
__all__ = ["pytest_collection_modifyitems", "pytest_configure", "pytest_xdist_auto_num_workers"]


@pytest.fixture(scope="session", autouse=True)
def template_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Templates cached on disk for this run only (never the user's ~/.cache), shared with server subprocesses
    and with every xdist worker of the run: a template one worker built, the others load (writes are atomic).

    A cache directory given by the caller (e.g. CI's ``TOOLGYM_CACHE_DIR``) is kept, so it can persist.
    """
    given = os.environ.get("TOOLGYM_CACHE_DIR")
    directory = given
    if directory is None:
        directory = str(session_root(tmp_path_factory) / "toolgym-cache")
        os.makedirs(directory, exist_ok=True)
    os.environ["TOOLGYM_CACHE_DIR"] = directory
    yield directory
    if given is None:
        del os.environ["TOOLGYM_CACHE_DIR"]


@pytest.fixture
def toy_manager() -> Iterator[EpisodeManager]:
    """An episode manager of the toy bank; every episode is released at teardown."""
    manager = EpisodeManager(toy_environment)
    yield manager
    manager.close_all()


@pytest.fixture
def toy_episode(toy_manager: EpisodeManager) -> Episode:
    """A free-play toy episode on fixture seed 0."""
    return toy_manager.create()


@pytest.fixture
def faulty_episode() -> Iterator[Episode]:
    """A free-play episode of the toy bank with its misbehaving tools."""
    manager = EpisodeManager(faulty_environment)
    yield manager.create()
    manager.close_all()


@pytest.fixture
def sdk_listings(monkeypatch: pytest.MonkeyPatch) -> Callable[[], int]:
    """How many ``tools/list`` requests SDK client sessions have sent since the fixture was set up (a count
    of ``ClientSession.list_tools`` calls, the SDK's own method still doing the work)."""
    listed = 0
    original = ClientSession.list_tools

    async def counting(self: ClientSession, *args: Any, **kwargs: Any) -> Any:
        nonlocal listed
        listed += 1
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(ClientSession, "list_tools", counting)
    return lambda: listed
