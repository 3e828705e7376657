"""Handshake-era MCP sessions on the HTTP server, tied to the episodes they serve.

The SDK's session manager keeps a session until its client DELETEs it or it idles out, and refuses new
ones beyond its own cap. Many clients exit without a DELETE (MCP Inspector's CLI, TypeScript apps that only
call ``client.close()``, mcp-remote, the conformance suite), so a cap that waited for sessions to end would
lock live clients out behind dead ones. This table tracks every session the server opens and why:

- ``/mcp`` sessions, each owning one episode (at most ``max_sessions`` at once);
- sessions opened on an episode's own URL (at most ``per_episode`` per episode).

At a cap the least recently used *idle* session (no POST in flight) is ended to make room: on an episode's URL nothing is lost (its sessions share the episode's world); on
``/mcp`` the evicted session's episode is released, the price of a session nobody used for longest. Only
when every session at the cap is serving a request right now is a new one refused, with a message saying
what to do. A session without a POST for ``idle_timeout`` (``DEFAULT_SESSION_IDLE_TIMEOUT``, well below an
episode's) ends too: a dead client's session holds no room, and no ``/mcp`` world, for long.

Use is counted in POSTs (what a client sends), never in open GET streams: a client that exits without a
DELETE often leaves its notification stream open until the server notices the connection is gone (the
conformance suite's scenarios do), and such a stream must not make a dead session look busy.

When an episode stops being live (closed, graded, reaped or released) every session tied to it is ended
at once; a session the SDK dropped by itself is forgotten on the next :meth:`SessionTable.sweep`. The two
caps are apart from each other and from the episode manager's ``max_live``, and ``/control/health``
reports all three.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from anyio.abc import TaskGroup
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

__all__ = ["SessionTable", "DEFAULT_MAX_SESSIONS", "DEFAULT_SESSIONS_PER_EPISODE", "DEFAULT_SESSION_IDLE_TIMEOUT"]

log = logging.getLogger("toolgym.http")

DEFAULT_MAX_SESSIONS = 64
"""Default cap on open ``/mcp`` sessions (each holds a free-play world)."""

DEFAULT_SESSIONS_PER_EPISODE = 4
"""Default cap on handshake-era sessions opened on one episode's URL (one agent needs one)."""

DEFAULT_SESSION_IDLE_TIMEOUT = 300.0
"""Seconds without a POST after which a handshake-era session ends (an episode's own default is 1800)."""


class SessionTable:
    """Which SDK session serves which episode; admissions under the two session caps."""

    def __init__(
        self,
        *,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        per_episode: int = DEFAULT_SESSIONS_PER_EPISODE,
        release: Callable[[str], Any] | None = None,
        idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT,
    ) -> None:
        self.max_sessions = max_sessions
        self.per_episode = per_episode
        self.idle_timeout = idle_timeout
        """Seconds without a POST after which :meth:`expire_idle` ends a session."""
        self._last_used: dict[str, float] = {}
        """Tracked session → when its last POST ended (or it opened)."""
        self._posting: dict[str, int] = {}
        """Session → POSTs of it in flight now."""
        self.release = release
        """Releases the episode of an evicted ``/mcp`` session (the episode manager's ``release``)."""
        self.evicted = 0
        """Idle sessions ended to make room for new ones, since start."""
        self.session_manager: StreamableHTTPSessionManager | None = None
        self.task_group: TaskGroup | None = None
        """Where terminations run (the app's lifespan task group)."""
        self.plain: dict[str, str | None] = {}
        """Open ``/mcp`` sessions → their episode id (None until the session's first routed request)."""
        self._plain_opening = 0
        self._by_episode: dict[str, set[str]] = {}
        """Episode id → the sessions opened on its URL."""
        self._episode_of: dict[str, str] = {}
        self._episode_opening: dict[str, int] = {}

    # -- /mcp sessions -------------------------------------------------------------------------------------

    def admit_plain(self) -> bool:
        """Reserve room for one new ``/mcp`` session; False when every session at the cap is serving a request.

        At the cap, ended sessions are swept first, then the least recently used idle session is ended and
        its episode released. Every admitted request must be followed by exactly one :meth:`opened_plain` call.
        """
        if len(self.plain) + self._plain_opening >= self.max_sessions:
            self._release_all(self.sweep()[1])
            if len(self.plain) + self._plain_opening >= self.max_sessions:
                evicted = self._evict_lru(self.plain)
                if evicted is None:
                    return False
                self._release_all([self.forget(evicted)])
        self._plain_opening += 1
        return True

    def _release_all(self, episodes: Iterable[str | None]) -> None:
        for ident in episodes:
            if ident is not None and self.release is not None:
                self.release(ident)

    def opened_plain(self, session_id: str | None) -> None:
        """End an admission: register the session the SDK opened, or free the room (None: none opened)."""
        self._plain_opening -= 1
        if session_id is not None:
            self.plain.setdefault(session_id, None)
            self._last_used[session_id] = time.monotonic()

    # -- sessions on an episode's URL ----------------------------------------------------------------------

    def admit_episode(self, episode_id: str) -> bool:
        """Reserve room for one new session on ``episode_id``'s URL; False when every session at the cap is busy.

        At the cap the least recently used idle session of the episode is ended (they share one world, so
        nothing is lost; its client, if alive, gets 404 and opens a new session).
        """
        if self._episode_count(episode_id) >= self.per_episode:
            self._release_all(self.sweep()[1])
            if self._episode_count(episode_id) >= self.per_episode:
                evicted = self._evict_lru(self._by_episode.get(episode_id, ()))
                if evicted is None:
                    return False
                self.forget(evicted)
        self._episode_opening[episode_id] = self._episode_opening.get(episode_id, 0) + 1
        return True

    def _episode_count(self, episode_id: str) -> int:
        return len(self._by_episode.get(episode_id, ())) + self._episode_opening.get(episode_id, 0)

    def opened_episode(self, episode_id: str, session_id: str | None) -> None:
        """End an episode-URL admission: register the session the SDK opened, or free the room."""
        left = self._episode_opening.get(episode_id, 1) - 1
        if left > 0:
            self._episode_opening[episode_id] = left
        else:
            self._episode_opening.pop(episode_id, None)
        if session_id is not None:
            self._by_episode.setdefault(episode_id, set()).add(session_id)
            self._episode_of[session_id] = episode_id
            self._last_used[session_id] = time.monotonic()

    # -- use -----------------------------------------------------------------------------------------------

    @contextmanager
    def serving(self, session_id: str | None, method: str) -> Iterator[None]:
        """Around one request of an open session: a POST in flight keeps it from eviction, and its end is its use."""
        if session_id is None or method != "POST":
            yield
            return
        self._posting[session_id] = self._posting.get(session_id, 0) + 1
        try:
            yield
        finally:
            left = self._posting.get(session_id, 1) - 1
            if left > 0:
                self._posting[session_id] = left
            else:
                self._posting.pop(session_id, None)
            if session_id in self._last_used:
                self._last_used[session_id] = time.monotonic()

    # -- ending --------------------------------------------------------------------------------------------

    def forget(self, session_id: str) -> str | None:
        """Stop tracking a session (its client ended it); returns the ``/mcp`` episode it owned, if any."""
        self._last_used.pop(session_id, None)
        owner = self._episode_of.pop(session_id, None)
        if owner is not None:
            sessions = self._by_episode.get(owner)
            if sessions is not None:
                sessions.discard(session_id)
                if not sessions:
                    del self._by_episode[owner]
        return self.plain.pop(session_id, None)

    def end_for_episode(self, episode_id: str) -> list[str]:
        """End every session tied to ``episode_id`` (it is no longer live); returns their ids."""
        ended = list(self._by_episode.pop(episode_id, ()))
        ended += [sid for sid, owner in self.plain.items() if owner == episode_id]
        for sid in ended:
            self._episode_of.pop(sid, None)
            self.plain.pop(sid, None)
            self._last_used.pop(sid, None)
            self._terminate(sid)
        if ended:
            log.info("episode %s ended; ended its %d MCP sessions", episode_id, len(ended))
        return ended

    def _terminate(self, session_id: str) -> None:
        """Make the SDK forget the session now (its id answers 404 at once) and close its transport."""
        manager = self.session_manager
        if manager is None:
            return
        # The SDK's own bookkeeping (StreamableHTTPSessionManager._discard_session, which is async).
        transport = manager._server_instances.pop(session_id, None)  # noqa: SLF001
        manager._session_owners.pop(session_id, None)  # noqa: SLF001
        if transport is not None and not transport.is_terminated and self.task_group is not None:
            self.task_group.start_soon(transport.terminate)

    def _idle_since(self, session_id: str) -> float | None:
        """When the session's last POST ended; None while one is in flight (it cannot be evicted then)."""
        if self._posting.get(session_id):
            return None
        return self._last_used.get(session_id, 0.0)

    def expire_idle(self, now: float | None = None) -> list[str | None]:
        """End the sessions without a POST for ``idle_timeout``; returns the ``/mcp`` episodes they owned.

        Why not only the SDK's idle timeout: an abandoned notification stream (GET) keeps the SDK's session alive.
        """
        horizon = (time.monotonic() if now is None else now) - self.idle_timeout
        stale = [sid for sid, used in self._last_used.items() if used < horizon and not self._posting.get(sid)]
        owned = []
        for sid in stale:
            self._terminate(sid)
            owned.append(self.forget(sid))
        if stale:
            log.info("ended %d MCP sessions idle for %gs", len(stale), self.idle_timeout)
        return owned

    def _evict_lru(self, candidates: Iterable[str]) -> str | None:
        """End the least recently used idle session among ``candidates``; returns its id (None: all busy)."""
        idle = [(since, sid) for sid in candidates if (since := self._idle_since(sid)) is not None]
        if not idle:
            return None
        _, session_id = min(idle)
        self._terminate(session_id)
        self.evicted += 1
        log.info("ended the least recently used idle MCP session %s… to make room for a new one", session_id[:8])
        return session_id

    def sdk_has(self, session_id: str) -> bool:
        """Whether the SDK still serves this session."""
        manager = self.session_manager
        return manager is not None and session_id in manager._server_instances  # noqa: SLF001

    def sweep(self) -> tuple[list[str], list[str | None]]:
        """Forget the sessions the SDK no longer serves (idled out, crashed).

        Returns:
            The ``/mcp`` sessions that ended and the episode ids they owned (for the caller to release).
        """
        if self.session_manager is None:
            return [], []
        alive = self.session_manager._server_instances  # noqa: SLF001 - the SDK's only view of live sessions
        for sid in [sid for sid in self._episode_of if sid not in alive]:
            self.forget(sid)
        gone = [sid for sid in self.plain if sid not in alive]
        for sid in gone:
            self._last_used.pop(sid, None)
        return gone, [self.plain.pop(sid) for sid in gone]

    def counts(self) -> dict[str, Any]:
        """Open sessions and their caps, for ``/control/health``."""
        return {
            "mcp_sessions": {"open": len(self.plain), "max": self.max_sessions},
            "episode_sessions": {"open": len(self._episode_of), "max_per_episode": self.per_episode},
            "sessions_evicted": self.evicted,
        }
