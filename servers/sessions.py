"""Handshake-era MCP sessions on the HTTP server, tied to the episodes they serve.

The SDK's session manager keeps a session until its client DELETEs it or it idles out (30 minutes by
default), and refuses new ones beyond its own cap. Left alone, a session whose episode was closed would
linger for that long, count against the cap and — its DELETE answered by the episode's 404 — could not
even be ended by its client. So this table tracks every session the server opens and why:

- ``/mcp`` sessions, each owning one episode (at most ``max_sessions`` at once);
- sessions opened on an episode's own URL (at most ``per_episode`` per episode).

When an episode stops being live (closed, graded, reaped or released) every session tied to it is ended
at once; a session the SDK dropped by itself is forgotten on the next :meth:`SessionTable.sweep`. The two
caps are apart from each other and from the episode manager's ``max_live``, so stale sessions never
block new clients, and ``/control/health`` reports all three.
"""

from __future__ import annotations

import logging
from typing import Any

from anyio.abc import TaskGroup
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

__all__ = ["SessionTable", "DEFAULT_MAX_SESSIONS", "DEFAULT_SESSIONS_PER_EPISODE"]

log = logging.getLogger("toolgym.http")

DEFAULT_MAX_SESSIONS = 64
"""Default cap on open ``/mcp`` sessions (each holds a free-play world)."""

DEFAULT_SESSIONS_PER_EPISODE = 4
"""Default cap on handshake-era sessions opened on one episode's URL (one agent needs one)."""


class SessionTable:
    """Which SDK session serves which episode; admissions under the two session caps."""

    def __init__(self, *, max_sessions: int = DEFAULT_MAX_SESSIONS, per_episode: int = DEFAULT_SESSIONS_PER_EPISODE) -> None:
        self.max_sessions = max_sessions
        self.per_episode = per_episode
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
        """Reserve room for one new ``/mcp`` session; False at the cap (after sweeping ended sessions).

        Every admitted request must be followed by exactly one :meth:`opened_plain` call.
        """
        if len(self.plain) + self._plain_opening >= self.max_sessions:
            self.sweep()
            if len(self.plain) + self._plain_opening >= self.max_sessions:
                return False
        self._plain_opening += 1
        return True

    def opened_plain(self, session_id: str | None) -> None:
        """End an admission: register the session the SDK opened, or free the room (None: none opened)."""
        self._plain_opening -= 1
        if session_id is not None:
            self.plain.setdefault(session_id, None)

    # -- sessions on an episode's URL ----------------------------------------------------------------------

    def admit_episode(self, episode_id: str) -> bool:
        """Reserve room for one new session on ``episode_id``'s URL; False at the per-episode cap."""
        count = len(self._by_episode.get(episode_id, ())) + self._episode_opening.get(episode_id, 0)
        if count >= self.per_episode:
            self.sweep()
            count = len(self._by_episode.get(episode_id, ())) + self._episode_opening.get(episode_id, 0)
            if count >= self.per_episode:
                return False
        self._episode_opening[episode_id] = self._episode_opening.get(episode_id, 0) + 1
        return True

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

    # -- ending --------------------------------------------------------------------------------------------

    def forget(self, session_id: str) -> str | None:
        """Stop tracking a session (its client ended it); returns the ``/mcp`` episode it owned, if any."""
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
        return gone, [self.plain.pop(sid) for sid in gone]

    def counts(self) -> dict[str, Any]:
        """Open sessions and their caps, for ``/control/health``."""
        return {
            "mcp_sessions": {"open": len(self.plain), "max": self.max_sessions},
            "episode_sessions": {"open": len(self._episode_of), "max_per_episode": self.per_episode},
        }
