"""The HTTP transport: MCP endpoints and the control API of one environment on one uvicorn server.

Routes (see ``servers/routing.py`` for how MCP requests find their episode)::

    /episodes/{id}/mcp   that episode's MCP endpoint (every protocol era)
    /mcp                 one episode per handshake-era MCP session (for one-URL clients), at most
                         ``max_sessions`` at once, apart from the control API's episodes
    /control/...         the control API (``servers/control.py``, ``servers/control_app.py``), sealed by a bearer token by default

One low-level MCP server and one SDK ``StreamableHTTPSessionManager`` serve every episode; the session
manager and a reaper run in the app's lifespan. The reaper closes idle episodes, releases closed ones past
their grace period and the episodes of ``/mcp`` sessions the SDK dropped, so vanished clients leak nothing;
it also closes pooled worlds idle for a whole pass and gives freed memory back to the system
(``servers/malloc.py``), so a server that served a burst returns to its idle size.

HTTP/1.1 is parsed by httptools (a C parser, a core dependency) rather than h11, pure Python: measured
0.25-0.3 ms less CPU per MCP request end to end, a fifth of a small tool call's cost over HTTP; h11 is
the fallback where httptools cannot be installed.

Long runs under load: uvicorn keeps idle connections for ``KEEP_ALIVE`` seconds, longer than the clients'
pools keep theirs (httpx: 5 s), so a client never sends on a connection the server is closing (the
default 5 s raced them: ``ReadError`` on POST at 500 sessions). The soft limit on open files is raised to
the hard one at startup; connections are accepted by ``servers/accept.py`` within that limit, with an
overflow lane that still answers health, a pause (not a spin) when out of descriptors, and one log line
per ``FD_LOG_INTERVAL`` seconds instead of a traceback per failed ``accept``.

Clients that go away (``servers/dropped.py``): a create whose client disconnects is cancelled, a late second
answer is dropped, the SDK's races with an ending session are counted in health instead of logged as tracebacks.

Faults: uvicorn's protocol is wrapped with deadlines on request heads, bodies and unread responses
(``servers/deadlines.py``: ``head_timeout``, ``body_timeout``, ``write_timeout``), so a silent client cannot
hold a connection; a heartbeat task tells health how late the loop is, and ``health_port`` adds a health
listener in a process of its own, fed at every heartbeat (and by a watch thread while beats are late), that
answers however busy the loop is, and calls it stalled only when it makes no progress (``servers/health.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import secrets
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread
import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Mount, Route

from servers import malloc
from servers.accept import OVERFLOW_HEAD_TIMEOUT, OVERFLOW_KEY, Acceptor, OverflowGate, connection_budget
from servers.control import Control
from servers.control_app import control_app
from servers.deadlines import DEFAULT_BODY_TIMEOUT, DEFAULT_HEAD_TIMEOUT, DEFAULT_WRITE_TIMEOUT, with_deadlines
from servers.dropped import DropGuard, install_gone_filter
from servers.environment import Environment
from servers.episodes import EpisodeManager
from servers.health import STALL_AFTER, HealthProcess, Heartbeat, LoopWatch
from servers.limits import install_accept_log_filter, raise_open_files_limit
from servers.mcp_server import OutputSchemas, build_mcp_server
from servers.routing import (
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSIONS_PER_EPISODE,
    EpisodeEndpoint,
    EpisodeRouter,
    PlainEndpoint,
    loopback_security,
)
from servers.secrecy import forbid_dumps
from servers.sessions import DEFAULT_SESSION_IDLE_TIMEOUT

__all__ = ["build_http_app", "serve_http", "running_http", "HttpServer", "bind_socket", "new_token", "KEEP_ALIVE", "HTTP_PROTOCOL"]

log = logging.getLogger("toolgym.http")

KEEP_ALIVE = 75.0
"""Seconds uvicorn keeps an idle connection: longer than any client pool's keep-alive (httpx: 5 s)."""

HTTP_PROTOCOL = "httptools" if importlib.util.find_spec("httptools") is not None else "h11"
"""uvicorn's HTTP/1.1 implementation (see the module docstring)."""


def build_http_app(
    environment: Environment,
    *,
    manager: EpisodeManager | None = None,
    token: str | None = None,
    no_token: bool = False,
    host: str = "127.0.0.1",
    security: TransportSecuritySettings | None = None,
    session_task: str | None = None,
    session_seed: int = 0,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    sessions_per_episode: int = DEFAULT_SESSIONS_PER_EPISODE,
    reap_interval: float = 30.0,
    session_idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT,
    json_response: bool = True,
    output_schemas: OutputSchemas = "compact",
) -> Starlette:
    """The Starlette app serving ``environment``'s episodes over MCP plus the control API.

    The control API is sealed: every ``/control`` request needs ``Authorization: Bearer <token>``, with a
    fresh token made here unless one is given; ``app.state.token`` holds it (None only with ``no_token``).

    Args:
        manager: the episode manager to serve (a default one is made); the app's ``state.manager`` holds it.
            Its ``max_live`` caps the control API's episodes; ``/mcp`` sessions do not count against it.
        token: the control API's bearer token (default: a new ``secrets.token_urlsafe(32)``).
        no_token: serve the control API without a token — the explicit, unsafe opt-out for local play:
            any process that reaches the port (an agent too) can then list, play and grade every episode.
        host: the interface the app will be bound to; loopback turns DNS-rebinding protection on.
        security: explicit Host/Origin checks, overriding the loopback default.
        session_task: task template of the episodes opened for ``/mcp`` sessions (None: free play).
        session_seed: their task seed (fixture seed in free play).
        max_sessions: cap on open ``/mcp`` sessions; one more gets JSON-RPC error ``EPISODE_LIMIT_REACHED``.
        sessions_per_episode: cap on handshake-era sessions opened on one episode's URL.
        reap_interval: seconds between reaper passes (pooled worlds idle for a whole pass are freed too).
        session_idle_timeout: seconds without a POST after which a handshake-era session ends (at the next
            reaper pass, its ``/mcp`` episode released); well below an episode's ``idle_timeout`` by default,
            so clients that exit without a DELETE hold no room (and no ``/mcp`` world) for long.
        json_response: answer MCP POSTs with plain JSON rather than an SSE stream (our tools never stream).
        output_schemas: ``compact`` (default), ``full`` or ``none`` (see ``servers/mcp_server.py``).

    Raises:
        TaskError: ``session_task`` names no task template of the environment.
        ValueError: both ``token`` and ``no_token``, an empty token, or ``max_sessions`` < 1.
    """
    if no_token and token is not None:
        raise ValueError("give a control token or no_token=True, not both")
    if max_sessions < 1 or sessions_per_episode < 1:
        raise ValueError(f"max_sessions and sessions_per_episode must be >= 1, got {max_sessions}, {sessions_per_episode}")
    if not 0 < session_idle_timeout < float("inf"):
        raise ValueError(f"session_idle_timeout must be a positive number of seconds, got {session_idle_timeout}")
    token = None if no_token else (token if token is not None else new_token())
    if token is not None:
        forbid_dumps()  # a process holding the token keeps same-user processes out of its memory
    manager = manager if manager is not None else EpisodeManager(environment)
    if session_task is not None:
        environment.task_template(session_task)  # fail now (TaskError), not on the first client's request
    security = security if security is not None else loopback_security(host)
    router = EpisodeRouter(
        manager,
        session_task=session_task,
        session_seed=session_seed,
        max_sessions=max_sessions,
        sessions_per_episode=sessions_per_episode,
        session_idle_timeout=session_idle_timeout,
    )
    server = build_mcp_server(environment, router.resolve, output_schemas=output_schemas)
    control = Control(manager, sessions=router.sessions)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # The task fixture's template, loaded (or built) before the first client arrives and off the loop.
        await anyio.to_thread.run_sync(environment.fixture.template, environment.task_fixture_seed)
        # A fresh session manager per lifespan: the SDK's can run only once. Our own caps (sessions.py)
        # bound the sessions; the SDK's is a backstop above them.
        per_episode_room = (manager.max_live + max_sessions) * sessions_per_episode
        router.session_manager = StreamableHTTPSessionManager(
            app=server,
            json_response=json_response,
            security_settings=security,
            session_idle_timeout=session_idle_timeout,
            max_sessions=max_sessions + per_episode_room,
        )
        manager.on_close.append(router.episode_ended)
        async with router.session_manager.run(), anyio.create_task_group() as tg:
            router.sessions.task_group = tg
            tg.start_soon(_reap_forever, manager, router, reap_interval, lambda: _open_connections(app))
            heartbeat = Heartbeat(on_beat=lambda: _send_health(app, control), stall_after=getattr(app.state, "stall_after", STALL_AFTER))
            control.heartbeat = heartbeat
            _send_health(app, control)  # the listener answers from the first moment, not the first beat
            tg.start_soon(heartbeat.run)
            # With a listener, a thread speaks for a loop that beats late (starved of CPU, not stuck).
            watch = LoopWatch(heartbeat, lambda: _send_health(app, control)) if getattr(app.state, "health_process", None) else None
            if watch is not None:
                watch.start()
            try:
                yield
            finally:
                if watch is not None:
                    watch.stop()
                tg.cancel_scope.cancel()
                control.heartbeat = None
                router.sessions.task_group = None
                manager.close_all()
                manager.on_close.remove(router.episode_ended)

    app = Starlette(
        routes=[
            Route("/mcp", PlainEndpoint(router, security)),
            Route("/episodes/{episode_id}/mcp", EpisodeEndpoint(router, security)),
            Mount("/control", app=control_app(control, token=token, security=security)),
        ],
        lifespan=lifespan,
    )
    app.state.manager = manager
    app.state.token = token
    app.state.control = control
    app.state.router = router
    return app


def _send_health(app: Starlette, control: Control) -> None:
    """At each heartbeat: the health snapshot to the listener process, when the server has one."""
    listener = getattr(app.state, "health_process", None)
    if listener is not None:
        listener.publish(control.health())


COLLECT_EVERY = 256
"""Released episodes between two full garbage collections of the reaper while episodes stay open."""


def _open_connections(app: Starlette) -> int:
    """Open HTTP connections of the server running ``app`` (0 when no uvicorn server runs it, e.g. in tests)."""
    count = getattr(app.state, "open_connections", None)
    return count() if count is not None else 0


async def _reap_forever(manager: EpisodeManager, router: EpisodeRouter, interval: float, connections: Callable[[], int]) -> None:
    trimmed_at = collected_at = manager.released_count
    last_connections = connections()
    settled = True  # memory was collected and trimmed since episodes were last released or connections closed
    while True:
        await anyio.sleep(interval)
        try:
            gone = router.sweep()
            released = manager.reap()
            pooled = manager.environment.fixture.shrink_pool(idle=interval)
            # Freed memory goes back to the system (servers/malloc.py): trimmed after every pass that released
            # something; with a full collection first (what finished episodes left in cycles) every
            # COLLECT_EVERY releases under steady load, and once on the first quiet pass after the server
            # went idle or lost connections (their buffers and sessions are freed only then).
            open_now = connections()
            fewer_connections, last_connections = open_now < last_connections, open_now
            if manager.released_count != trimmed_at or pooled or gone:
                trimmed_at = manager.released_count
                settled = False
                if manager.released_count - collected_at >= COLLECT_EVERY:
                    collected_at = manager.released_count
                    await anyio.to_thread.run_sync(malloc.collect_and_trim)
                else:
                    await anyio.to_thread.run_sync(malloc.trim)  # ~10-20 ms walking the heaps: not on the loop
            elif fewer_connections:
                settled = False
            elif not settled and len(manager) == 0:
                settled = True
                collected_at = manager.released_count
                await anyio.to_thread.run_sync(malloc.collect_and_trim)
        except Exception:  # a reaper bug must not take the server down with it; the next pass retries
            log.exception("reaper pass failed")
            continue
        if gone or released or pooled:
            log.info("reaper: %d ended sessions, %d episodes released, %d pooled worlds freed", len(gone), len(released), pooled)


def new_token() -> str:
    """A fresh control token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket with TCP_NODELAY (inherited by accepted sockets).

    Why: without TCP_NODELAY, Nagle + delayed ACK make every small HTTP exchange cost ~49 ms instead of ~3 ms.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(2048)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


class _Uvicorn(uvicorn.Server):
    """uvicorn that signals when it is accepting connections (no polling on ``started``), and accepts them
    with an :class:`~servers.accept.Acceptor` (bounded by the open-files limit, backing off when out of them)."""

    def __init__(self, config: uvicorn.Config, ready: anyio.Event, overflow_protocol: type[Any], *, own_signals: bool = True) -> None:
        super().__init__(config)
        self._ready = ready
        self._overflow_protocol = overflow_protocol
        self._own_signals = own_signals
        self.acceptors: list[Acceptor] = []

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """uvicorn's SIGINT/SIGTERM handling for a server that is the process (``serve``); none for a server
        embedded in a runner, whose process decides what a signal means (uvicorn's handlers there stopped the
        server under the episodes still running, then killed the process with the signal it re-raised)."""
        if self._own_signals:
            with super().capture_signals():
                yield
        else:
            yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and sockets:
            loop = asyncio.get_running_loop()
            budget, overflow = connection_budget()
            for sock in sockets:
                # asyncio's accept loop spins when out of descriptors; a loop that does not accept through a
                # reader (uvloop) keeps its own
                if not loop.remove_reader(sock.fileno()):
                    continue
                acceptor = Acceptor(loop, sock, self._make_protocol, budget, overflow)
                acceptor.start()
                self.acceptors.append(acceptor)
        self._ready.set()

    def _make_protocol(self, overflow: bool) -> asyncio.Protocol:
        """uvicorn's protocol for one accepted connection (as its own ``create_protocol``), or the overflow lane's."""
        config = self.config
        if overflow:
            state = {**self.lifespan.state, OVERFLOW_KEY: True}
            return self._overflow_protocol(config=config, server_state=self.server_state, app_state=state)  # type: ignore[no-any-return]
        return config.http_protocol_class(config=config, server_state=self.server_state, app_state=self.lifespan.state)  # type: ignore[call-arg]

    def connection_counts(self) -> dict[str, int]:
        """Open connections and their bounds (``/control/health``'s ``limits.connections``)."""
        if self.acceptors:
            return self.acceptors[0].counts()
        return {"open": len(self.server_state.connections)}

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for acceptor in self.acceptors:
            acceptor.close()
        await super().shutdown(sockets)


@dataclass
class HttpServer:
    """A running HTTP server: its base URL, app, episode manager and control token."""

    url: str
    """Base URL, e.g. ``http://127.0.0.1:43123`` (no trailing slash)."""
    app: Starlette
    manager: EpisodeManager
    _server: _Uvicorn
    token: str | None = field(default=None, repr=False)
    """Bearer token of the control API (None only when served with ``no_token``). Never give it to an agent."""
    health: HealthProcess | None = field(default=None, repr=False)
    """The health listener in a process of its own (``health_port``), if the server has one."""

    @property
    def health_url(self) -> str | None:
        """``GET`` health served off the event loop (``servers/health.py``), or None without ``health_port``."""
        return self.health.url if self.health is not None else None

    @property
    def control_headers(self) -> dict[str, str]:
        """Headers a control client sends: the ``Authorization`` bearer header (empty without a token)."""
        return {"Authorization": f"Bearer {self.token}"} if self.token is not None else {}

    @property
    def mcp_url(self) -> str:
        """The plain MCP endpoint (one episode per MCP session)."""
        return f"{self.url}/mcp"

    @property
    def control_url(self) -> str:
        """Root of the control API."""
        return f"{self.url}/control"

    def episode_url(self, episode_id: str) -> str:
        """The MCP endpoint of one episode."""
        return f"{self.url}/episodes/{episode_id}/mcp"

    @property
    def started(self) -> bool:
        """Whether uvicorn finished starting (lifespan included) and accepts connections."""
        return bool(self._server.started)

    def stop(self) -> None:
        """Ask the server to shut down (it finishes in-flight requests first)."""
        self._server.should_exit = True

    async def _run(self, sock: socket.socket, ready: anyio.Event) -> None:
        try:
            if self._server._own_signals:
                await self._server.serve(sockets=[sock])
            else:
                # Embedded: a cancelled caller (Ctrl-C, SIGTERM in a runner) first asks the server to stop
                # (``stop``), then waits for it to shut down whole: lifespan, connections, health listener.
                with anyio.CancelScope(shield=True):
                    await self._server.serve(sockets=[sock])
        finally:
            if self.health is not None:
                self.health.stop()
            ready.set()  # a failed startup must not leave the caller waiting
            sock.close()


def _prepare(
    environment: Environment,
    host: str,
    port: int,
    log_level: str,
    graceful_timeout: float,
    app_options: dict[str, Any],
    *,
    own_signals: bool = True,
) -> tuple[HttpServer, socket.socket, anyio.Event]:
    deadlines = (
        float(app_options.pop("head_timeout", DEFAULT_HEAD_TIMEOUT)),
        float(app_options.pop("body_timeout", DEFAULT_BODY_TIMEOUT)),
        float(app_options.pop("write_timeout", DEFAULT_WRITE_TIMEOUT)),
    )
    if not all(0 < value < float("inf") for value in deadlines):
        raise ValueError(f"head, body and write timeouts must be positive numbers of seconds, got {deadlines}")
    health_port = app_options.pop("health_port", None)
    stall_after = float(app_options.pop("stall_after", STALL_AFTER))
    if not 0 < stall_after < float("inf"):
        raise ValueError(f"stall_after must be a positive number of seconds, got {stall_after}")
    app = build_http_app(environment, host=host, **app_options)
    app.state.stall_after = stall_after
    raise_open_files_limit()
    install_accept_log_filter()
    install_gone_filter()
    sock = bind_socket(host, port)
    config = uvicorn.Config(
        OverflowGate(DropGuard(app)),  # clients that leave: counted in health, never a traceback (servers/dropped.py)
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=graceful_timeout,
        timeout_keep_alive=int(KEEP_ALIVE),
        http=with_deadlines(_protocol_class(), *deadlines),
        access_log=False,
        proxy_headers=False,  # served directly, never behind a proxy whose headers we would have to trust
    )
    health: HealthProcess | None = None
    if health_port is not None:
        security = loopback_security(host)
        try:
            health = HealthProcess(
                host,
                health_port,
                token=app.state.token,
                allowed_hosts=list(security.allowed_hosts) if security is not None else None,
                stall_after=stall_after,
            )
        except OSError:
            sock.close()
            raise
        app.state.health_process = health
    ready = anyio.Event()
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{sock.getsockname()[1]}"
    # The overflow lane's connections (servers/accept.py) get a short head deadline: a silent one must not
    # keep a monitor's health request out for long.
    overflow_protocol = with_deadlines(_protocol_class(), min(OVERFLOW_HEAD_TIMEOUT, deadlines[0]), *deadlines[1:])
    server = _Uvicorn(config, ready, overflow_protocol, own_signals=own_signals)
    # The reaper trims memory once connections have closed too (their buffers and sessions are freed then).
    app.state.open_connections = lambda: len(server.server_state.connections)
    app.state.control.connections = server.connection_counts
    handle = HttpServer(url=url, app=app, manager=app.state.manager, _server=server, token=app.state.token, health=health)
    return handle, sock, ready


def _protocol_class() -> type[Any]:
    """uvicorn's protocol class for ``HTTP_PROTOCOL`` (the deadlines of ``servers/deadlines.py`` wrap it)."""
    if HTTP_PROTOCOL == "httptools":
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    from uvicorn.protocols.http.h11_impl import H11Protocol

    return H11Protocol


def _check_started(handle: HttpServer, environment: Environment) -> None:
    if not handle.started:
        raise RuntimeError(f"the HTTP server for {environment.name!r} failed to start at {handle.url} (see the log above)")


@contextlib.asynccontextmanager
async def running_http(
    environment: Environment,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    log_level: str = "warning",
    graceful_timeout: float = 5.0,
    **app_options: Any,
) -> AsyncIterator[HttpServer]:
    """Run the HTTP server in the background until the block exits (tests, embedding).

    ``port=0`` picks a free port; the yielded :class:`HttpServer` has the real URL and the control token
    (``server.token``, ``server.control_headers``). ``app_options`` go to :func:`build_http_app`
    (``manager``, ``token``, ``no_token``, ``max_sessions``...), except the connection deadlines
    (``head_timeout``, ``body_timeout``, ``write_timeout``: seconds), ``health_port`` (a health listener
    off the event loop; ``server.health_url``) and ``stall_after`` (seconds without progress before health says
    ``stalled``). Leaving the block, cancelled too, shuts the server down whole. Signals are the embedding
    process's to handle: the server installs no handler of its own.
    """
    handle, sock, ready = _prepare(environment, host, port, log_level, graceful_timeout, app_options, own_signals=False)
    async with anyio.create_task_group() as tg:
        tg.start_soon(handle._run, sock, ready)
        await ready.wait()
        _check_started(handle, environment)
        try:
            yield handle
        finally:
            handle.stop()


SPARE_WORLDS = 8
"""Brand-new worlds ``serve --transport http`` keeps ready per (seed, scale) it serves (``fixtures/spares.py``): a
create past the pool is then a pool pop, not a new connection parsing the schema on the request path."""


async def serve_http(
    environment: Environment,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    on_ready: Callable[[HttpServer], None] | None = None,
    log_level: str = "warning",
    graceful_timeout: float = 5.0,
    **app_options: Any,
) -> None:
    """Serve ``environment`` over HTTP until the process is interrupted (uvicorn handles Ctrl-C / SIGTERM).

    ``on_ready`` is called once the server accepts connections (the CLI prints its URLs and token there).

    Raises:
        OSError: the address cannot be bound (e.g. the port is in use).
        RuntimeError: the app failed to start.
    """
    handle, sock, ready = _prepare(environment, host, port, log_level, graceful_timeout, app_options)
    fixture = environment.fixture
    if isinstance(getattr(fixture, "spare", None), int):  # a serving process makes new worlds ahead (fixtures/spares.py)
        fixture.spare = max(fixture.spare, SPARE_WORLDS)
    async with anyio.create_task_group() as tg:
        tg.start_soon(handle._run, sock, ready)
        await ready.wait()
        _check_started(handle, environment)
        if on_ready is not None:
            on_ready(handle)
