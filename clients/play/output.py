"""What ``toolgym play`` prints: for a person (rich text) or for a program (one JSON object per line).

Text: results as indented JSON, errors as ``error (class) code: message``, the grade as ``toolgym show`` prints
it (every criterion with its evidence). Record values are untrusted, so they are printed as
:class:`rich.text.Text`, never parsed as markup. Lines the player typed that could not be played go to stderr,
so a script reading stdout reads only what the world answered.

JSON (``--json``): every answer is one line on stdout with a ``type`` — ``start``, ``result``, ``tools``,
``help``, ``policy``, ``calls``, ``commands``, ``input_error``, ``end``, ``validation`` — so a program
driving the game never parses prose.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from mcp_types import Tool
from rich.console import Console
from rich.text import Text

from clients.console import output_console
from clients.play.game import CallOutcome, Finished, Game
from clients.play.lines import COMMANDS
from clients.play.schema_text import arguments_of
from clients.validation import Validation
from clients.view.terminal import grade_table
from servers.record import ToolCallEvent

__all__ = ["Output", "TextOutput", "JsonOutput", "HOW_TO_PLAY"]

HOW_TO_PLAY = (
    "Commands: `tools` lists the tools, `help TOOL` shows a tool's arguments, `policy` shows the policy, "
    '`prompt` shows the task again. Call a tool with `TOOL {"argument": "value"}` (or `TOOL` alone when it '
    "takes none); finish with your final answer (`submit_answer {...}`), or `quit` to give up. The grade is "
    "shown when the episode ends."
)


class Output(Protocol):
    """Where the game's answers go."""

    def start(self, game: Game) -> None:
        """The opening: environment, task, seed, the server's instructions, the prompt, how to play."""

    def prompt(self, game: Game) -> None:
        """The task again."""

    def policy(self, documents: Sequence[tuple[str, str]]) -> None:
        """The policy resource(s)."""

    def tools(self, tools: Sequence[Tool]) -> None:
        """Each tool in one line."""

    def help(self, tool: Tool | None) -> None:
        """A tool's description and arguments; with no tool, the commands."""

    def calls(self, calls: Sequence[ToolCallEvent]) -> None:
        """The calls so far, one line each."""

    def outcome(self, outcome: CallOutcome) -> None:
        """A call's result, or its error."""

    def input_error(self, message: str) -> None:
        """A line that could not be played (nothing happened)."""

    def note(self, message: str) -> None:
        """A remark of the game itself (the episode ended, a session replayed...)."""

    def finished(self, finished: Finished, record: Path | None, run: Path | None) -> None:
        """The grade (every criterion, its evidence) and where the run was saved."""

    def validation(self, line: Validation, path: Path) -> None:
        """The validation line just appended."""


def _first_line(text: str | None) -> str:
    """A tool description's first sentence (its first paragraph's lines joined: docstrings wrap mid-sentence)."""
    paragraph = " ".join((text or "").strip().split("\n\n", 1)[0].split())
    end = re.search(r"\.\s+(?=[A-Z])", paragraph)  # a sentence ends before a capital ("e.g. an" does not)
    return paragraph[: end.start() + 1] if end else paragraph


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _read_only(tool: Tool) -> bool:
    return bool(tool.annotations and tool.annotations.read_only_hint)


class TextOutput:
    """For a person: rich text on stdout, unplayable lines on stderr."""

    def __init__(self) -> None:
        self.console = output_console()
        self.errors = Console(stderr=True, highlight=False)

    def _print(self, text: Text | str = "") -> None:
        self.console.print(text if isinstance(text, Text) else Text(text), soft_wrap=True)
        self.console.file.flush()  # a program reading the pipe gets each answer as soon as it is printed

    def start(self, game: Game) -> None:
        head = Text(f"toolgym play · {game.environment.name} · {game.task} · seed {game.seed}", style="bold")
        head.append(f" · {len(game.tools)} tools", style="dim")
        self._print(head)
        if game.instructions:
            self._print(Text("\ninstructions", style="bold"))
            self._print(game.instructions)
        self.prompt(game)
        self._print(Text(HOW_TO_PLAY, style="dim"))
        self._print()

    def prompt(self, game: Game) -> None:
        self._print(Text("\ntask", style="bold"))
        self._print(game.prompt or "(no prompt)")
        self._print()

    def policy(self, documents: Sequence[tuple[str, str]]) -> None:
        if not documents:
            self._print(Text("this environment serves no policy resource", style="dim"))
        for uri, text in documents:
            self._print(Text(uri, style="bold"))
            self._print(text.rstrip("\n"))
            self._print()

    def tools(self, tools: Sequence[Tool]) -> None:
        width = max((len(t.name) for t in tools), default=0)
        for tool in tools:
            line = Text(tool.name.ljust(width + 2), style="bold")
            line.append("read   " if _read_only(tool) else "writes ", style="dim" if _read_only(tool) else "yellow")
            line.append(_first_line(tool.description))
            self._print(line)
        self._print()

    def help(self, tool: Tool | None) -> None:
        if tool is None:
            self._print(Text(HOW_TO_PLAY))
            for word, meaning in COMMANDS.items():
                self._print(Text(f"  {word:<8}", style="bold") + Text(meaning))
            self._print()
            return
        self._print(
            Text(tool.name, style="bold")
            + Text("  (reads only)" if _read_only(tool) else "  (may change the world)", style="dim")
        )
        self._print((tool.description or "").strip())
        arguments = arguments_of(tool.input_schema)
        if not arguments:
            self._print(Text("no arguments: call it as `" + tool.name + "`", style="dim"))
            self._print()
            return
        self._print(Text("arguments", style="bold"))
        for argument in arguments:
            line = Text(f"  {argument.name}  ", style="bold")
            line.append("required" if argument.required else "optional", style="yellow" if argument.required else "dim")
            if argument.default is not None:
                line.append(f", default {argument.default}", style="dim")
            line.append(f" · {argument.type}")
            if argument.description:
                line.append(f"\n      {argument.description}")
            if argument.constraints:
                line.append(f"\n      {argument.constraints}", style="dim")
            self._print(line)
        self._print()

    def calls(self, calls: Sequence[ToolCallEvent]) -> None:
        if not calls:
            self._print(Text("no calls yet", style="dim"))
        for event in calls:
            status = "ok" if event.error is None else f"{event.error.error_class} {event.error.code}"
            line = Text(f"#{event.seq} ", style="dim") + Text(event.tool, style="bold")
            line.append(f" {json.dumps(event.arguments, ensure_ascii=False)}  ")
            line.append(status, style="green" if event.error is None else "red")
            self._print(line)
        self._print()

    def outcome(self, outcome: CallOutcome) -> None:
        head = Text(f"#{outcome.seq} ", style="dim") + Text(outcome.tool, style="bold")
        if outcome.error is None:
            head.append("  ok", style="green")
            self._print(head)
            self._print(_json(outcome.result))
        else:
            error = outcome.error
            head.append(f"  error ({error.error_class}) {error.code}", style="red")
            self._print(head)
            self._print(Text(error.message))
        self._print()

    def input_error(self, message: str) -> None:
        self.errors.print(Text(f"error: {message}", style="red"), soft_wrap=True)

    def note(self, message: str) -> None:
        self._print(Text(message, style="dim"))

    def finished(self, finished: Finished, record: Path | None, run: Path | None) -> None:
        self._print(
            Text(f"episode ended ({finished.reason}) after {len(finished.record.tool_calls)} calls", style="bold")
        )
        if finished.grade is not None:
            self.console.print(grade_table(finished.grade))
            self.console.file.flush()
        else:
            self._print(Text(f"not graded: {finished.error}", style="red"))
        if record is not None and run is not None:
            self._print(Text(f"record: {record}", style="dim"))
            self._print(
                Text(f"see it again: toolgym show {run} --episode {finished.record.header.episode_id}", style="dim")
            )

    def validation(self, line: Validation, path: Path) -> None:
        verdict = "fair" if line.defect is None else f"defect: {line.defect}"
        self._print(Text(f"validation {line.id} ({line.player}, {line.player_kind}, {verdict}) → {path}", style="dim"))


class JsonOutput:
    """For a program: one JSON object per line on stdout, each with a ``type``."""

    def _emit(self, kind: str, **fields: Any) -> None:
        sys.stdout.write(json.dumps({"type": kind, **fields}, ensure_ascii=False, default=str) + "\n")
        sys.stdout.flush()

    def start(self, game: Game) -> None:
        self._emit(
            "start",
            env=game.environment.name,
            task=game.task,
            seed=game.seed,
            instructions=game.instructions,
            prompt=game.prompt,
            tools=list(game.tools),
            answer_tools=game.environment.answer_tools,
        )

    def prompt(self, game: Game) -> None:
        self._emit("prompt", prompt=game.prompt, instructions=game.instructions)

    def policy(self, documents: Sequence[tuple[str, str]]) -> None:
        self._emit("policy", documents=[{"uri": uri, "text": text} for uri, text in documents])

    def tools(self, tools: Sequence[Tool]) -> None:
        self._emit(
            "tools",
            tools=[
                {"name": t.name, "description": _first_line(t.description), "read_only": _read_only(t)} for t in tools
            ],
        )

    def help(self, tool: Tool | None) -> None:
        if tool is None:
            self._emit("commands", commands=COMMANDS, how_to_play=HOW_TO_PLAY)
        else:
            self._emit(
                "help",
                tool=tool.name,
                description=tool.description,
                input_schema=tool.input_schema,
                read_only=_read_only(tool),
            )

    def calls(self, calls: Sequence[ToolCallEvent]) -> None:
        self._emit(
            "calls",
            calls=[{"seq": c.seq, "tool": c.tool, "arguments": c.arguments, "ok": c.error is None} for c in calls],
        )

    def outcome(self, outcome: CallOutcome) -> None:
        self._emit("result", **outcome.as_json())

    def input_error(self, message: str) -> None:
        self._emit("input_error", message=message)

    def note(self, message: str) -> None:
        self._emit("note", message=message)

    def finished(self, finished: Finished, record: Path | None, run: Path | None) -> None:
        self._emit(
            "end",
            reason=finished.reason,
            tool_calls=len(finished.record.tool_calls),
            grade=finished.grade,
            error=finished.error,
            record=None if record is None else str(record),
            run=None if run is None else str(run),
        )

    def validation(self, line: Validation, path: Path) -> None:
        self._emit("validation", line=line.model_dump(mode="json"), file=str(path))
