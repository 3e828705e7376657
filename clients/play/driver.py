"""Playing: the read-play-print loop (a terminal, or lines piped on stdin) and the one-command session step.

The game's MCP client lives on an event loop in a background thread (``anyio``'s blocking portal); the player's
side — ``input()`` with readline's history and completion, Ctrl-C, the questions after the grade — stays in the
main thread, where terminals and signals expect it. Whatever the mode, an episode ends the same way
(:func:`conclude`): graded, saved as a run folder, and, with ``--validate``, recorded in the environment's
validation file.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from anyio.from_thread import BlockingPortal, start_blocking_portal

from clients.errors import RunError
from clients.play.game import CallOutcome, Finished, Game, save_run
from clients.play.lines import COMMANDS, Command, PlayInputError, incomplete_json, parse_line
from clients.play.output import Output
from clients.play.session import SessionError, append_session, call_line, header_for, read_session, replay, unused_path
from clients.results import check_run_folder, clear_run_folder
from clients.validation import (
    Validation,
    append_line,
    check_validation_fields,
    file_sha256,
    new_validation,
    read_validations,
    validation_path,
)
from servers.environment import Environment

__all__ = ["PlayOptions", "play_interactive", "play_session_step"]

Reader = Callable[[], str | None]
"""Gives the next line the player typed, or None at the end of input."""


@dataclass(frozen=True)
class PlayOptions:
    """What ``toolgym play`` was asked to do."""

    environment: Environment
    task: str
    seed: int
    out: Path | None = None
    """The run folder (None: ``runs/play-<machine time>``, chosen when the episode ends)."""
    overwrite: bool = False
    validate: bool = False
    player: str | None = None
    player_kind: str | None = None
    fair: bool = False
    defect: str | None = None
    interactive: bool = False
    """Stdin is a terminal: prompts, history, and questions the flags did not answer."""


def check_before_playing(options: PlayOptions) -> None:
    """Refuse now what would fail once the episode is over (nothing played is ever lost to a flag).

    Raises:
        RunError: ``--out`` holds another run; ``--validate`` without a player, a kind or a verdict that a
            non-interactive game cannot ask for; a validation file that is malformed or has no place.
    """
    if options.out is not None:
        check_run_folder(
            options.out, default=False, resume=False, overwrite=options.overwrite, env=options.environment.name
        )
    if not options.validate:
        if options.player or options.player_kind or options.fair or options.defect:
            raise RunError("--player, --player-kind, --fair and --defect record a validation: add --validate")
        return
    if not options.player or not options.player.strip():
        raise RunError("--validate needs --player NAME (your name, or the agent or model that plays)")
    if options.player_kind is None and not options.interactive:
        raise RunError("--validate with input that is not a terminal needs --player-kind human|agent")
    if not (options.fair or options.defect) and not options.interactive:
        raise RunError("--validate with input that is not a terminal needs --fair or --defect TEXT")
    path = validation_path(options.environment)
    if path is None:
        raise RunError(f"environment {options.environment.name!r} has no package folder to keep a validation file in")
    read_validations(path, options.environment.name)  # a malformed file: its line named now, before playing
    check_validation_fields(
        player=options.player.strip(), player_kind=options.player_kind or "human", defect=options.defect
    )


def _run_folder(options: PlayOptions) -> Path:
    if options.out is not None:
        return options.out
    return unused_path(Path("runs") / f"play-{datetime.now().strftime('%Y%m%d-%H%M%S')}")


def conclude(
    portal: BlockingPortal,
    game: Game,
    reason: str,
    options: PlayOptions,
    output: Output,
    ask: Callable[[str], str | None] | None,
) -> tuple[Finished, Path, Path]:
    """End the episode: grade it, save the run folder, show the grade, record the validation when asked.

    Returns the ended episode, its run folder and its record file.
    """
    finished = portal.call(game.finish, reason)
    out = _run_folder(options)
    try:
        if options.out is not None and options.overwrite:
            clear_run_folder(out)
        record = save_run(out, game.environment, finished, wall_ms=(time.perf_counter() - game.started) * 1000)
    except RunError:
        output.finished(finished, None, None)  # the grade is shown even when the disk refuses the run folder
        raise
    output.finished(finished, record, out)
    if options.validate:
        line = _validation(game, finished, record, options, ask)
        if line is not None:
            path = validation_path(game.environment)
            assert path is not None  # checked before playing
            append_line(path, line)
            output.validation(line, path)
        else:
            output.note("no validation recorded")
    return finished, out, record


def _validation(
    game: Game, finished: Finished, record: Path, options: PlayOptions, ask: Callable[[str], str | None] | None
) -> Validation | None:
    defect = options.defect
    if defect is None and not options.fair:
        if ask is None:
            return None
        answer = None
        while answer not in ("y", "yes", "n", "no"):
            given = ask(
                "Was the task fair (a clear prompt, a world that agrees with itself, a grade that fits the work)? [y/n] "
            )
            if given is None:
                return None
            answer = given.strip().lower()
        if answer.startswith("n"):
            while not defect:
                given = ask("What is wrong with it (one line)? ")
                if given is None:
                    return None
                defect = given.strip()
    kind = options.player_kind or "human"
    grade = finished.grade
    if grade is None and defect is None:
        defect = f"not gradable: {finished.error}"
    return new_validation(
        env=game.environment.name,
        template=game.task,
        seed=game.seed,
        player=(options.player or "").strip(),
        player_kind=kind,
        score=float(grade["score"]) if grade is not None else 0.0,
        passed=bool(grade["passed"]) if grade is not None else False,
        tool_calls=len(finished.record.tool_calls),
        record=str(record),
        record_sha256=file_sha256(record),
        fixture_version=finished.record.header.fixture_version,
        defect=defect,
    )


def _show(portal: BlockingPortal, game: Game, command: Command, output: Output) -> None:
    """Answer a command that is not a call (nothing reaches the world)."""
    if command.kind == "tools":
        output.tools(list(game.tools.values()))
    elif command.kind == "help":
        output.help(game.tools.get(command.tool) if command.tool and command.tool not in COMMANDS else None)
    elif command.kind == "policy":
        output.policy(portal.call(game.policy))
    elif command.kind == "prompt":
        output.prompt(game)
    elif command.kind == "calls":
        output.calls(game.calls)


@contextmanager
def _open_game(options: PlayOptions) -> Iterator[tuple[BlockingPortal, Game]]:
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(Game(options.environment, options.task, options.seed)) as game:
            yield portal, game


def play_interactive(
    options: PlayOptions, output: Output, read: Reader, ask: Callable[[str], str | None] | None
) -> int:
    """Play lines from ``read`` until a final answer, ``quit`` or the end of input; then conclude. Exit status 0."""
    check_before_playing(options)
    with _open_game(options) as (portal, game):
        output.start(game)
        reason = "quit"
        while True:
            text = read()
            if text is None:
                output.note("end of input: the episode ends without a final answer")
                break
            try:
                command = parse_line(text, game.tools)
            except PlayInputError as exc:
                output.input_error(str(exc))
                continue
            if command.kind == "empty":
                continue
            if command.kind == "quit":
                break
            if command.kind != "call":
                _show(portal, game, command, output)
                continue
            outcome: CallOutcome = portal.call(game.call, command.tool, command.arguments)
            output.outcome(outcome)
            if outcome.ended:
                reason = "submitted"
                break
        conclude(portal, game, reason, options, output, ask)
    return 0


def play_session_step(
    options: PlayOptions, session_path: Path, text: str, output: Output, ask: Callable[[str], str | None] | None
) -> int:
    """One command of a session file: replay the file's calls, play ``text``, print and append its result.

    With no command, prints the opening (and starts the file). Exit status 0; a line that cannot be played,
    a session that cannot be replayed or has ended, are errors of one line (exit 2) that leave the file as it was.

    Raises:
        RunError: as above (``PlayInputError``, ``SessionError``).
    """
    check_before_playing(options)
    session = read_session(session_path)
    if session is not None and session.end is not None:
        raise SessionError(
            f"session {session_path} has ended ({session.end.get('reason')}, score {session.end.get('score')}); its run is "
            f"{session.end.get('run')}. Start a new session file to play again"
        )
    with _open_game(options) as (portal, game):
        if session is None:
            append_session(session_path, header_for(game))
            session = read_session(session_path)
            assert session is not None
        command = parse_line(text, game.tools) if text.strip() else Command(kind="empty")
        if command.kind == "empty":
            output.start(game)
            return 0
        if command.kind in ("tools", "help", "policy", "prompt"):
            _show(portal, game, command, output)  # nothing played depends on the calls so far
            return 0
        ended = portal.call(replay, game, session)
        if ended is not None:  # an answer whose end line was never written (the save failed): finish it now
            output.note(f"the episode ended with call #{ended.seq} ({ended.tool}); finishing it")
            reason = "submitted"
        elif command.kind == "calls":
            output.calls(game.calls)
            return 0
        elif command.kind == "quit":
            reason = "quit"
        else:
            outcome: CallOutcome = portal.call(game.call, command.tool, command.arguments)
            append_session(session_path, call_line(outcome))
            output.outcome(outcome)
            if not outcome.ended:
                return 0
            reason = "submitted"
        finished, out, record = conclude(portal, game, reason, options, output, ask)
        grade = finished.grade or {}
        append_session(
            session_path,
            {
                "type": "end",
                "reason": reason,
                "run": str(out),
                "record": str(record),
                "score": grade.get("score"),
                "passed": grade.get("passed"),
            },
        )
    return 0


def stdin_reader(prompt: str | None) -> Reader:
    """Lines from stdin: with ``prompt``, through ``input()`` (readline: history, editing, completion) and a
    JSON object pasted over several lines read whole; without, one line at a time as a pipe gives them."""
    if prompt is None:

        def read_pipe() -> str | None:
            line = sys.stdin.readline()
            return None if line == "" else line.rstrip("\n")

        return read_pipe

    def read_terminal() -> str | None:
        while True:
            try:
                text = input(prompt)
                _, _, rest = text.strip().partition(" ")
                while incomplete_json(rest):
                    more = input("... ")
                    if not more.strip():
                        break  # an empty line gives up on the object: what was typed is parsed (and refused) as is
                    text += "\n" + more
                    rest += "\n" + more
                return text
            except EOFError:
                print()
                return None
            except KeyboardInterrupt:
                print("\n(`quit` ends the episode; Ctrl-D too)")

    return read_terminal


def terminal_ask(question: str) -> str | None:
    """Ask the player in the terminal; None when they close the input."""
    try:
        return input(question)
    except (EOFError, KeyboardInterrupt):
        print()
        return None


def setup_readline(words: Callable[[], list[str]]) -> None:
    """History across games (``~/.cache/toolgym/play-history``) and completion of tool and command names."""
    try:
        import atexit
        import readline
    except ImportError:  # no readline on this platform: plain input() still works
        return
    history = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolgym" / "play-history"
    try:
        history.parent.mkdir(parents=True, exist_ok=True)
        readline.read_history_file(history)
    except OSError:
        pass
    readline.set_history_length(2000)

    def save() -> None:
        try:
            readline.write_history_file(history)
        except OSError:
            pass

    atexit.register(save)

    def complete(text: str, state: int) -> str | None:
        if readline.get_begidx() > 0 and not readline.get_line_buffer().startswith(("help ", "call ")):
            return None
        matches = [w for w in words() if w.startswith(text)]
        return matches[state] if state < len(matches) else None

    readline.set_completer_delims(" \t\n{")
    readline.set_completer(complete)
    readline.parse_and_bind("tab: complete")
