"""Routing MCP-over-HTTP requests to episodes: the two MCP endpoints and the resolver behind them.

One low-level MCP server and one SDK session manager serve every episode of the process; what makes
requests land in the right world is the episode id this module puts in the ASGI scope (decision 1):

- ``/episodes/{id}/mcp`` — the episode's own endpoint. The id comes from the path, so every protocol era
  works: 2026-07-28 requests (no sessions) and handshake-era sessions alike. Unknown or closed ids get a
  404 whose body is a JSON-RPC error (code -32004, data ``{"error": "episode_not_found", "episode": id}``)
  naming the id, before the SDK sees the request; MCP clients show its message.
- ``/mcp`` — the plain endpoint for clients configured with one URL (``claude mcp add --transport http``).
  Each handshake-era MCP session gets its own episode (free play, or the server's ``--task``), created on
  the session's first routed request and released when the client DELETEs the session or the SDK drops it
  as idle. At most ``max_sessions`` sessions are open at once (``--max-sessions``); one more is refused
  with JSON-RPC error -32005 (``EPISODE_LIMIT_REACHED``) before the SDK opens it. Their episodes do not
  count against the episode manager's ``max_live``, so idle ``/mcp`` sessions never starve the control
  API's evaluation episodes (and those never starve ``/mcp``). A sessionless
  2026-07-28 request cannot be told apart from any other client's, so it is answered with JSON-RPC error
  -32022 (unsupported protocol version) listing the handshake versions: the v2 ``mcp.Client`` in its
  default ``auto`` mode then falls back to the handshake and gets a session (mcp/client/_probe.py).
  Clients that want the 2026-07-28 protocol create an episode through the control API and use its URL.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Message, Receive, Scope, Send

from fixtures.errors import EpisodeNotFound
from servers.episodes import Episode, EpisodeManager
from servers.mcp_server import EPISODE_NOT_FOUND

__all__ = [
    "DEFAULT_MAX_SESSIONS",
    "EPISODE_SCOPE_KEY",
    "EPISODE_LIMIT_REACHED",
    "EpisodeRouter",
    "EpisodeEndpoint",
    "PlainEndpoint",
    "loopback_security",
]

log = logging.getLogger("toolgym.http")

EPISODE_SCOPE_KEY = "toolgym.episode"
"""ASGI scope key holding the episode id of a request to ``/episodes/{id}/mcp``."""

EPISODE_LIMIT_REACHED = -32005
"""JSON-RPC error code when ``/mcp`` cannot open one more session (``max_sessions`` are open)."""

DEFAULT_MAX_SESSIONS = 64
"""Default cap on open ``/mcp`` sessions (each holds a free-play world)."""

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def loopback_security(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection for a loopback bind (as the SDK's own default), None for other hosts.

    Why: a web page the user visits could otherwise reach a loopback MCP server through a rebound DNS name.
    """
    if host not in _LOOPBACK:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


class EpisodeRouter:
    """Finds the episode of each MCP request and owns the ``/mcp`` session → episode map and its cap.

    Args:
        manager: the episodes of this server.
        session_task: task template of the episodes opened for ``/mcp`` sessions (None: free play).
        session_seed: their task seed (fixture seed in free play).
        max_sessions: cap on open ``/mcp`` sessions (their episodes are outside the manager's ``max_live``).
    """

    def __init__(
        self,
        manager: EpisodeManager,
        *,
        session_task: str | None = None,
        session_seed: int = 0,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
    ) -> None:
        self.manager = manager
        self.session_task = session_task
        self.session_seed = session_seed
        self.max_sessions = max_sessions
        self.session_manager: StreamableHTTPSessionManager | None = None
        self._sessions: dict[str, str | None] = {}
        """Open ``/mcp`` sessions → their episode id (None until the session's first routed request)."""
        self._opening = 0
        """Requests admitted to open a ``/mcp`` session whose response has not started yet."""

    def _full(self) -> bool:
        return len(self._sessions) + self._opening >= self.max_sessions

    def admit(self) -> bool:
        """Reserve room for one new ``/mcp`` session; False at the cap (after sweeping ended sessions).

        Every admitted request must be followed by exactly one :meth:`opened` call.
        """
        if self._full():
            self.sweep()
            if self._full():
                return False
        self._opening += 1
        return True

    def opened(self, session_id: str | None) -> None:
        """End an admission: register the session the SDK opened, or free the room (None: none opened)."""
        self._opening -= 1
        if session_id is not None:
            self._sessions.setdefault(session_id, None)

    def limit_message(self) -> str:
        """Why one more ``/mcp`` session is refused, and what to do."""
        return (
            f"{self.max_sessions} MCP sessions are already open on /mcp (the server's --max-sessions); "
            "end one (the client's DELETE) or wait for idle sessions to expire"
        )

    def resolve(self, ctx: ServerRequestContext[Any, Any]) -> Episode:
        """The episode a request belongs to: from the scope (episode URL) or from its MCP session (``/mcp``).

        Raises:
            EpisodeNotFound: the episode was closed or released, or the request has no session.
            MCPError: the session is not one ``/mcp`` admitted and the session cap is reached.
        """
        request = ctx.request
        if not isinstance(request, Request):
            raise EpisodeNotFound("this request did not arrive over HTTP; connect to /episodes/ID/mcp")
        ident = request.scope.get(EPISODE_SCOPE_KEY)
        if ident is not None:
            return self.manager.get(ident, live=True)
        session_id = request.headers.get(MCP_SESSION_ID_HEADER)
        if session_id is None:
            raise EpisodeNotFound("a request to /mcp needs an MCP session; initialize first")
        if session_id not in self._sessions:
            # A session opened on an episode URL, then used on /mcp: it needs room like any /mcp session.
            if not self.admit():
                raise MCPError(EPISODE_LIMIT_REACHED, self.limit_message())
            self.opened(session_id)
        ident = self._sessions[session_id]
        if ident is not None:
            # A released episode stays released: the session gets an error, never a silent fresh world.
            return self.manager.get(ident, live=True)
        episode = self.manager.create(self.session_task, self.session_seed, capped=False)
        self._sessions[session_id] = episode.id
        log.info("MCP session %s… opened episode %s", session_id[:8], episode.id)
        return episode

    def end_session(self, session_id: str) -> None:
        """Forget an ended ``/mcp`` session and release its episode (client DELETE or SDK idle timeout)."""
        ident = self._sessions.pop(session_id, None)
        if ident is not None:
            self.manager.release(ident)
            log.info("MCP session %s… ended; released episode %s", session_id[:8], ident)

    def sweep(self) -> list[str]:
        """End the sessions the SDK no longer tracks (idle-timed-out or crashed); returns their ids.

        Why: the SDK drops idle sessions on its own, without telling us; their episodes must not leak.
        """
        if self.session_manager is None:
            return []
        alive = self.session_manager._server_instances  # noqa: SLF001 - the SDK's only view of live sessions
        gone = [sid for sid in self._sessions if sid not in alive]
        for sid in gone:
            self.end_session(sid)
        return gone


async def _request_id(request: Request) -> Any:
    """The JSON-RPC id of a POSTed request, or None (unparseable body, notification, GET/DELETE)."""
    if request.method != "POST":
        return None
    try:
        body = json.loads(await request.body())
    except (ValueError, RecursionError):
        return None
    return body.get("id") if isinstance(body, dict) else None


def _jsonrpc_error(status: int, request_id: Any, code: int, message: str, data: Any = None) -> Response:
    """A JSON-RPC error body: MCP clients surface its message (a bare HTTP error would read "Not Found")."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": error}, status_code=status)


async def _security_refusal(settings: TransportSecuritySettings | None, scope: Scope, receive: Receive) -> Response | None:
    request = Request(scope, receive)
    return await TransportSecurityMiddleware(settings).validate_request(request, is_post=request.method == "POST")


def _for_sdk(scope: Scope, **extra: Any) -> Scope:
    """A copy of ``scope`` whose path is the SDK handler's own (``/mcp``), carrying ``extra`` keys."""
    inner = dict(scope)
    inner["path"] = "/mcp"
    inner["raw_path"] = b"/mcp"
    inner.update(extra)
    return inner


class EpisodeEndpoint:
    """ASGI app for ``/episodes/{episode_id}/mcp``: checks the id, then hands the request to the SDK."""

    def __init__(self, router: EpisodeRouter, security: TransportSecuritySettings | None) -> None:
        self.router = router
        self.security = security

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one HTTP request addressed to an episode."""
        refusal = await _security_refusal(self.security, scope, receive)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        ident = scope["path_params"]["episode_id"]
        try:
            self.router.manager.get(ident, live=True)
        except EpisodeNotFound as exc:
            request_id = await _request_id(Request(scope, receive))
            data = {"error": "episode_not_found", "episode": ident}
            await _jsonrpc_error(404, request_id, EPISODE_NOT_FOUND, str(exc), data)(scope, receive, send)
            return
        assert self.router.session_manager is not None, "the HTTP app's lifespan is not running"
        await self.router.session_manager.handle_request(_for_sdk(scope, **{EPISODE_SCOPE_KEY: ident}), receive, send)


class PlainEndpoint:
    """ASGI app for ``/mcp``: one episode per handshake-era MCP session (see the module docstring)."""

    def __init__(self, router: EpisodeRouter, security: TransportSecuritySettings | None) -> None:
        self.router = router
        self.security = security

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one HTTP request to the plain endpoint."""
        refusal = await _security_refusal(self.security, scope, receive)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        request = Request(scope, receive)
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            response = await self._refuse_sessionless(request, version)
            await response(scope, receive, send)
            return
        assert self.router.session_manager is not None, "the HTTP app's lifespan is not running"
        session_id = request.headers.get(MCP_SESSION_ID_HEADER)
        if session_id is None:
            await self._open_session(request, scope, receive, send)
            return
        await self.router.session_manager.handle_request(_for_sdk(scope), receive, send)
        if request.method == "DELETE":
            self.router.end_session(session_id)

    async def _open_session(self, request: Request, scope: Scope, receive: Receive, send: Send) -> None:
        """A request without a session (an initialize): admitted under the cap, its new session registered."""
        if not self.router.admit():
            request_id = await _request_id(request)
            refusal = _jsonrpc_error(503, request_id, EPISODE_LIMIT_REACHED, self.router.limit_message())
            await refusal(scope, receive, send)
            return
        pending = True

        async def watch(message: Message) -> None:
            nonlocal pending
            if pending and message["type"] == "http.response.start":
                pending = False
                opened = message["status"] < 400 and Headers(raw=message.get("headers", [])).get(MCP_SESSION_ID_HEADER)
                self.router.opened(opened or None)
            await send(message)

        assert self.router.session_manager is not None
        try:
            await self.router.session_manager.handle_request(_for_sdk(scope), receive, watch)
        finally:
            if pending:
                self.router.opened(None)

    async def _refuse_sessionless(self, request: Request, version: str) -> Response:
        """JSON-RPC -32022 naming the handshake versions, so auto-mode clients fall back to a session."""
        message = (
            "the plain /mcp endpoint serves one episode per MCP session, so it needs the initialize handshake; "
            "use a handshake protocol version, or create an episode (POST /control/episodes) and connect to its "
            f"mcp_url for protocol {version}"
        )
        data = types.UnsupportedProtocolVersionErrorData(supported=list(HANDSHAKE_PROTOCOL_VERSIONS), requested=version)
        request_id = await _request_id(request)
        return _jsonrpc_error(400, request_id, types.UNSUPPORTED_PROTOCOL_VERSION, message, data.model_dump(mode="json"))
