"""``python -m envs.<name> serve ...``: serve one environment over stdio or HTTP.

The same flags back ``toolgym serve ENV ...`` (clients/commands/serve.py), through
:func:`add_serve_arguments` and :func:`run_serve`. Bad input (unknown environment or task, bad flags)
ends with one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import anyio

from fixtures.errors import ToolgymError
from servers import secrecy
from servers.admission import MemoryBudget, format_mb, parse_size
from servers.deadlines import DEFAULT_BODY_TIMEOUT, DEFAULT_HEAD_TIMEOUT
from servers.environment import Environment
from servers.episodes import HISTORY_BYTES, EpisodeManager
from servers.health import STALL_AFTER
from servers.limits import seconds_problem
from servers.private_tasks import with_private_tasks
from servers.registry import load_environment
from servers.sessions import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT, DEFAULT_SESSIONS_PER_EPISODE

if TYPE_CHECKING:
    from servers.http import HttpServer

__all__ = ["serve_main", "add_serve_arguments", "run_serve", "claude_command", "CliError"]

SERVE_DESCRIPTION = (
    "Serve the environment's tools over MCP. stdio (default): one episode per process, for clients that "
    "launch their server as a command. http: many episodes on one server — /mcp gives each MCP session its "
    "own episode, /episodes/ID/mcp is one episode's endpoint, /control/ is the control API, which needs a "
    "bearer token (generated and printed at startup unless --token-file / TOOLGYM_TOKEN / --token gives one)."
)


class CliError(ToolgymError):
    """A command-line usage error: printed as one line, exit status 2."""


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the serve flags to ``parser`` (shared by ``python -m envs.X serve`` and ``toolgym serve``)."""
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio", help="MCP transport (default: stdio)")
    parser.add_argument("--host", default="127.0.0.1", help="http: interface to bind (default: 127.0.0.1, loopback only)")
    parser.add_argument("--port", type=int, default=8000, help="http: TCP port, 0 for any free port (default: 8000)")
    parser.add_argument(
        "--task", metavar="ID", help="task template to serve (stdio: the episode; http: every /mcp session's episode)"
    )
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="task seed, or fixture seed in free play (default: 0)")
    parser.add_argument("--record", type=Path, metavar="FILE", help="stdio: write the episode's record (JSONL) to FILE")
    parser.add_argument("--record-dir", type=Path, metavar="DIR", help="write one JSONL record per episode into DIR")
    parser.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="http: read the bearer token /control requires from FILE (mode 0600 or stricter). Without it: "
        "$TOOLGYM_TOKEN, else a new token printed at startup; MCP endpoints stay open. Never give it to an agent",
    )
    parser.add_argument(
        "--token",
        metavar="T",
        help="http: the token itself; visible to every local process until read, so prefer --token-file or "
        "TOOLGYM_TOKEN",
    )
    parser.add_argument(
        "--private-tasks",
        action="append",
        default=[],
        metavar="PATH",
        help="add held-out task templates from a folder of modules, a .py file or a module name (keep it "
        "readable only by you); repeatable",
    )
    parser.add_argument(
        "--no-token",
        action="store_true",
        help="http: UNSAFE, for local play only: serve /control without a token, so any process that reaches "
        "the port (an agent too) can list, play and grade every episode",
    )
    parser.add_argument(
        "--max-episodes", type=int, default=1024, metavar="N", help="http: cap on the control API's episodes (default: 1024)"
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=DEFAULT_MAX_SESSIONS,
        metavar="N",
        help=f"http: cap on open /mcp sessions, apart from --max-episodes (default: {DEFAULT_MAX_SESSIONS})",
    )
    parser.add_argument(
        "--sessions-per-episode",
        type=int,
        default=DEFAULT_SESSIONS_PER_EPISODE,
        metavar="N",
        help=f"http: cap on handshake-era MCP sessions on one episode's URL (default: {DEFAULT_SESSIONS_PER_EPISODE})",
    )
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=1800.0,
        metavar="S",
        help="http: close an episode (and end its MCP sessions) after S seconds without a tool call (default: 1800)",
    )
    parser.add_argument(
        "--max-memory",
        default="auto",
        metavar="SIZE",
        help="http: memory budget for worlds, e.g. 2G; a create that would not fit is refused with 503 memory_limit "
        "(auto, the default: the cgroup's memory.max or ulimit -v when set, else none; none: no budget)",
    )
    parser.add_argument(
        "--session-idle-timeout",
        type=float,
        default=DEFAULT_SESSION_IDLE_TIMEOUT,
        metavar="S",
        help="http: end a handshake-era MCP session after S seconds without a POST; a /mcp session's episode "
        f"is released with it (default: {DEFAULT_SESSION_IDLE_TIMEOUT:g}; clients that exit without DELETE leave theirs)",
    )
    parser.add_argument(
        "--closed-ttl",
        type=float,
        default=600.0,
        metavar="S",
        help="http: release a closed episode's world S seconds after it closed, graded or not (default: 600)",
    )
    parser.add_argument(
        "--reap-interval",
        type=float,
        default=30.0,
        metavar="S",
        help="http: seconds between passes that close idle episodes, release expired ones and free idle memory "
        "(default: 30)",
    )
    parser.add_argument(
        "--head-timeout",
        type=float,
        default=DEFAULT_HEAD_TIMEOUT,
        metavar="S",
        help=f"http: seconds a connection has to send a request's headers; then 408 and closed (default: {DEFAULT_HEAD_TIMEOUT:g})",
    )
    parser.add_argument(
        "--body-timeout",
        type=float,
        default=DEFAULT_BODY_TIMEOUT,
        metavar="S",
        help=f"http: seconds a request has to send its body; then 408 and closed (default: {DEFAULT_BODY_TIMEOUT:g})",
    )
    parser.add_argument(
        "--health-port",
        type=int,
        metavar="PORT",
        help="http: also serve GET /health on PORT (0: any free port; the banner says which) from a process of its "
        "own, answered within milliseconds however busy the server is: point liveness probes there",
    )
    parser.add_argument(
        "--stall-after",
        type=float,
        default=STALL_AFTER,
        metavar="S",
        help="http: health answers 503 'stalled' when the event loop has made no progress (no heartbeat, no request "
        f"served) for S seconds; a loop that is only slow answers 200 with its lag (default: {STALL_AFTER:g})",
    )
    parser.add_argument(
        "--history-mb",
        type=float,
        default=HISTORY_BYTES / 2**20,
        metavar="MB",
        help=f"http: memory kept for the records of released episodes (compressed; oldest dropped first; "
        f"default: {HISTORY_BYTES / 2**20:g})",
    )
    parser.add_argument(
        "--output-schemas",
        choices=["compact", "full", "none"],
        default="compact",
        help="tools/list output schemas: compact (no titles or descriptions; default), full (as pydantic writes "
        "them) or none",
    )
    parser.add_argument(
        "--allocator",
        choices=["system", "python"],
        default="system",
        help="http: who allocates Python objects. system (default): the C library's malloc, so memory freed by "
        "released episodes goes back to the system (the process restarts itself once, same pid, with "
        "PYTHONMALLOC=malloc); python: pymalloc, a few percent (3-14%%) less CPU per episode, but a burst's memory mostly stays",
    )
    parser.add_argument(
        "--log-level", default="warning", choices=["debug", "info", "warning", "error"], help="stderr log level (default: warning)"
    )


def claude_command(environment: Environment, mcp_url: str) -> str:
    """The ``claude mcp add`` line that plugs Claude Code into this server."""
    return f"claude mcp add --transport http {environment.name} {mcp_url}"


def _check(environment: Environment, args: argparse.Namespace) -> None:
    if args.seed < 0:
        raise CliError(f"--seed must be >= 0, got {args.seed}")
    if args.seed > 2**63 - 1:
        raise CliError(f"--seed must be <= {2**63 - 1} (a 64-bit seed), got {args.seed}")
    if args.max_episodes < 1:
        raise CliError(f"--max-episodes must be >= 1, got {args.max_episodes}")
    if args.max_sessions < 1:
        raise CliError(f"--max-sessions must be >= 1, got {args.max_sessions}")
    if args.sessions_per_episode < 1:
        raise CliError(f"--sessions-per-episode must be >= 1, got {args.sessions_per_episode}")
    for flag in ("idle_timeout", "session_idle_timeout", "closed_ttl", "reap_interval", "head_timeout", "body_timeout", "stall_after"):
        value = getattr(args, flag)
        problem = seconds_problem(value)
        if problem is not None:
            raise CliError(f"--{flag.replace('_', '-')} {problem}, got {value:g}")
    if args.max_memory not in ("auto", "none"):
        try:
            parse_size(args.max_memory)
        except ValueError as exc:
            raise CliError(f"--max-memory: {exc}") from None
    if args.token is not None and not args.token.strip():
        raise CliError("--token is empty; give a real token, or leave it out to have one generated")
    if args.token is not None and args.no_token:
        raise CliError("give either --token T or --no-token, not both")
    if args.token_file is not None and (args.no_token or args.token is not None):
        raise CliError("give one of --token-file FILE, --token T and --no-token")
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port must be within 0-65535, got {args.port}")
    if args.health_port is not None and not 0 <= args.health_port <= 65535:
        raise CliError(f"--health-port must be within 0-65535, got {args.health_port}")
    if args.health_port is not None and args.health_port != 0 and args.health_port == args.port:
        raise CliError(f"--health-port {args.health_port} is the server's own --port; give another port (or 0: any free one)")
    if not 0 <= args.history_mb < float("inf"):
        raise CliError(f"--history-mb must be a number of megabytes >= 0, got {args.history_mb}")
    if args.transport == "http" and args.record is not None:
        raise CliError("--record is for stdio (one episode); with --transport http use --record-dir DIR")
    if args.record is not None and args.record_dir is not None:
        raise CliError("give either --record FILE or --record-dir DIR, not both")
    if args.task is not None:
        environment.task_template(args.task)  # TaskError names the task and lists known ones
    for path, what in ((args.record, "--record"), (args.record_dir, "--record-dir")):
        if path is not None:
            _check_writable(path if what == "--record-dir" else path.parent, what, path)


def _check_writable(directory: Path, flag: str, given: Path) -> None:
    """Fail at startup, in one line, when records could not be written where ``flag`` says."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        writable = os.access(directory, os.W_OK | os.X_OK)
    except OSError as exc:
        raise CliError(f"{flag} {given}: cannot create {directory}: {exc.strerror or exc}") from None
    if not writable:
        raise CliError(f"{flag} {given}: {directory} is not writable; choose another path")
    if flag == "--record" and given.is_dir():
        raise CliError(f"--record {given} is a directory; give a file path (or use --record-dir)")


def run_serve(environment: Environment, args: argparse.Namespace) -> int:
    """Serve ``environment`` as the parsed flags say; returns the exit status.

    Raises:
        ToolgymError: bad flags, unknown task (callers print it as one line and exit 2).
    """
    environment = with_private_tasks(environment, getattr(args, "private_tasks", None) or [])
    _check(environment, args)
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.transport == "stdio":
            from servers.stdio import run_stdio

            record = args.record
            anyio.run(
                lambda: run_stdio(
                    environment, args.task, args.seed, record, record_dir=args.record_dir, output_schemas=args.output_schemas
                )
            )
            return 0
        token, generated = _control_token(args)
        if args.allocator == "system" and getattr(args, "command_line", False):
            _restart_with_system_allocator(token, generated)  # returns only when it cannot (or need not) restart
        return _serve_http(environment, args, token, generated)
    except KeyboardInterrupt:
        return 130


def _control_token(args: argparse.Namespace) -> tuple[str | None, bool]:
    """The control token to serve with (None: --no-token) and whether it was generated here.

    Read before anything else, and taken out of what other processes can read: ``$TOOLGYM_TOKEN`` leaves
    this process's environment block, a ``--token`` argument is blanked, and a token handed over by this
    process's previous image (the allocator restart) comes through a pipe (servers/secrecy.py).
    """
    handed = secrecy.take_over()
    if handed is not None:
        secrecy.take_from_environment(secrecy.TOKEN_VARIABLE)
        return handed
    if args.no_token:
        secrecy.take_from_environment(secrecy.TOKEN_VARIABLE)
        return None, False
    given = secrecy.given_token(args.token, args.token_file)
    if given is not None:
        return given, False
    from servers.http import new_token

    return new_token(), True


def _restart_with_system_allocator(token: str | None, generated: bool) -> None:
    """Restart this process with the system allocator (servers/malloc.py), the token handed over by a pipe.

    The new image gets neither ``$TOOLGYM_TOKEN`` nor a ``--token`` argument: only the number of an
    inherited pipe's descriptor that holds the token.
    """
    from servers import malloc

    argv = _without_token_argument(list(getattr(sys, "orig_argv", []) or []))
    environment = dict(os.environ)
    pipe = None
    if token is not None:
        pipe = secrecy.hand_over(token, generated)
        environment[secrecy.HANDOVER_VARIABLE] = str(pipe)
    malloc.use_system_allocator(argv=argv, environment=environment)
    if pipe is not None:
        os.close(pipe)  # not restarted: the token stays where it is


def _without_token_argument(argv: list[str]) -> list[str]:
    kept: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word == "--token":
            skip = True
        elif not word.startswith("--token="):
            kept.append(word)
    return kept


def _memory_line(server: HttpServer) -> str:
    budget = server.manager.memory
    if budget is None:
        return "none (no --max-memory, cgroup memory.max or ulimit -v): creates are bounded by --max-episodes only"
    return f"{budget.source}, {format_mb(budget.reserve)} of it kept in reserve"


def _banner(environment: Environment, server: HttpServer, args: argparse.Namespace, generated: bool) -> str:
    """The startup lines on stderr: endpoints, and the control token with its usage (the operator's copy)."""
    lines = [
        f"toolgym: serving {environment.name!r} over HTTP",
        f"  MCP (one episode per session): {server.mcp_url}",
        f"  limits:                        {args.max_sessions} /mcp sessions, {args.max_episodes} control API episodes",
        f"  allocator:                     {_allocator_line()}",
        f"  memory budget:                 {_memory_line(server)}",
    ]
    if server.health_url is not None:
        lines.append(f"  health (off the event loop):   {server.health_url}  (same bearer token)")
    if server.token is None:
        lines += [
            f"  control API:                   {server.control_url}/  (no token: --no-token)",
            "  warning:                       any process that reaches this port, an agent included, can list, "
            "play and grade every episode; use --no-token for local play only",
        ]
    else:
        # The token appears on a line of its own when it was made here, never inside a command line that
        # would be pasted into a shell (and so into its history and every local process's view).
        note = "generated for this server; never give it to an agent" if generated else "as given; never give it to an agent"
        lines.append(f"  control API:                   {server.control_url}/  (bearer token required: {note})")
        if generated:
            lines.append(f"  control token:                 {server.token}")
        runner = f"toolgym run {environment.name} --server {server.url}"
        if args.token_file is not None:
            runner += f" --token-file {args.token_file}"
        else:
            runner = f"TOOLGYM_TOKEN=<the control token> {runner}"
        lines += [
            "  control header:                Authorization: Bearer $TOOLGYM_TOKEN",
            f"  runner:                        {runner}",
        ]
    lines.append(f"  Claude Code:                   {claude_command(environment, server.mcp_url)}")
    if args.host not in ("127.0.0.1", "localhost", "::1") and server.token is None:
        lines.append("  warning:                       the control API is reachable from the network without a token")
    return "\n".join(lines)


def _allocator_line() -> str:
    from servers import malloc

    if malloc.system_allocator():
        return "system malloc (PYTHONMALLOC=malloc): freed memory returns to the system"
    return "pymalloc (--allocator python, or PYTHONMALLOC set): memory of released episodes may stay resident"


def _memory_budget(text: str) -> MemoryBudget | None:
    """``--max-memory``: ``auto`` (the cgroup or RLIMIT_AS limit, if any), ``none``, or a size."""
    if text == "none":
        return None
    return MemoryBudget.resolve(None if text == "auto" else parse_size(text))


def _serve_http(environment: Environment, args: argparse.Namespace, token: str | None, generated: bool) -> int:
    from servers import malloc
    from servers.http import serve_http

    if token is not None:
        secrecy.forbid_dumps()
    malloc.configure(arenas=True)  # this process is only a server: few arenas, fewer heaps to fragment
    manager = EpisodeManager(
        environment,
        max_live=args.max_episodes,
        record_dir=args.record_dir,
        idle_timeout=args.idle_timeout,
        closed_ttl=args.closed_ttl,
        history_bytes=int(args.history_mb * 2**20),
        memory=_memory_budget(args.max_memory),
    )

    def announce(server: HttpServer) -> None:
        print(_banner(environment, server, args, generated), file=sys.stderr, flush=True)

    try:
        anyio.run(
            lambda: serve_http(
                environment,
                args.host,
                args.port,
                on_ready=announce,
                log_level=args.log_level,
                manager=manager,
                token=token,
                no_token=token is None,
                session_task=args.task,
                session_seed=args.seed,
                max_sessions=args.max_sessions,
                sessions_per_episode=args.sessions_per_episode,
                session_idle_timeout=args.session_idle_timeout,
                reap_interval=args.reap_interval,
                output_schemas=args.output_schemas,
                head_timeout=args.head_timeout,
                body_timeout=args.body_timeout,
                health_port=args.health_port,
                stall_after=args.stall_after,
            )
        )
    except OSError as exc:  # a port in use, an address not ours: one line, a usage error like any other
        where = str(exc) if exc.strerror is None else f"cannot serve on {args.host}:{args.port}: {exc.strerror}"
        print(f"error: {where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # uvicorn re-raises the Ctrl-C it turned into a graceful shutdown; by now every record is closed.
        print("toolgym: stopped", file=sys.stderr)
    return 0


def _fail(message: str) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def serve_main(environment: str | Environment, argv: Sequence[str] | None = None) -> NoReturn:
    """Entry point of ``python -m envs.<name>``: expects ``serve`` then its flags; exits with the status.

    ``environment`` is a registered name or an :class:`Environment` (e.g. a test-only one).
    """
    name = environment if isinstance(environment, str) else environment.name
    module = f"envs.{name}" if isinstance(environment, str) else name
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=f"The {name!r} toolgym environment.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = commands.add_parser("serve", help="serve the environment over MCP (stdio or HTTP)", description=SERVE_DESCRIPTION)
    add_serve_arguments(serve)
    args = parser.parse_args(secrecy.attached_token(sys.argv[1:] if argv is None else argv, parser))
    if args.command is None:
        parser.print_help(sys.stderr)
        raise SystemExit(2)
    args.command_line = argv is None  # a process of its own, whose command line can be replayed (--allocator)
    try:
        env = load_environment(environment) if isinstance(environment, str) else environment
        raise SystemExit(run_serve(env, args))
    except ToolgymError as exc:
        _fail(str(exc))
