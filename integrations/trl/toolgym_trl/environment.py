"""toolgym as a TRL environment: one toolgym episode per rollout, its tools the environment's methods, its grade
the environment-owned reward (``GRPOTrainer(environment_factory=...)``, TRL's documented interface).

- ``reset(task=, seed=, **row)`` opens the row's episode (releasing one left open) and returns its prompt, which
  TRL appends to the row's (empty) user message.
- Each tool is a method (built from the server's MCP tool list: :mod:`toolgym_trl.signatures`) that calls the
  episode's MCP endpoint and returns the text the model is shown. After a successful call of an answer tool the
  episode is over: later calls are answered as such and never reach the world.
- ``get_reward()`` closes, grades and releases the episode: the grade's score. A rollout lost to infrastructure
  (a transport failure during a tool call, a grade toolgym cannot give, a crashed toolgym tool) returns
  ``None``: TRL then leaves it out of the reward statistics and gives it no advantage — never a zero.

With ``run_dir`` the folder is laid out like a ``toolgym run`` folder: every scored rollout's record goes to
``records/`` (``toolgym grade RUN_DIR`` grades them again) and one line per scored rollout, in the order TRL
asked for the rewards, to ``rollouts.jsonl`` (episode, task, seed, score, passed, record).
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any, ClassVar

import httpx
from toolgym_remote import (
    ControlClient,
    CreatedEpisode,
    EpisodeSession,
    MCPRefused,
    NotScored,
    RemoteError,
    check_server,
    graded,
    record_jsonl,
)

from toolgym_trl import portal
from toolgym_trl.signatures import as_function

__all__ = ["ToolgymEnvironment", "toolgym_environment", "RESERVED"]

log = logging.getLogger("toolgym_trl")

RESERVED = frozenset({"reset", "get_reward"})
"""Method names TRL gives a meaning of its own: a toolgym tool may not take them."""


class ToolgymEnvironment:
    """Base of the classes :func:`toolgym_environment` builds (one per server: its tools are its methods)."""

    server: ClassVar[str] = ""
    token_variable: ClassVar[str] = "TOOLGYM_TOKEN"
    answer_tools: ClassVar[frozenset[str]] = frozenset()
    run_dir: ClassVar[Path | None] = None
    _clients: ClassVar[tuple[httpx.AsyncClient, ControlClient] | None] = None
    _write_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self) -> None:
        self.episode: CreatedEpisode | None = None
        self.session: EpisodeSession | None = None
        self.answered = False
        self.lost: str | None = None
        """Why the current rollout cannot be scored (an infrastructure failure), once one happened."""

    @classmethod
    def _connections(cls) -> tuple[httpx.AsyncClient, ControlClient]:
        """The class's HTTP client and control client, made on (and bound to) the portal's loop."""
        if cls._clients is None:
            async def make() -> tuple[httpx.AsyncClient, ControlClient]:
                http = httpx.AsyncClient(timeout=120.0)
                return http, ControlClient(cls.server, token_variable=cls.token_variable, client=http)

            cls._clients = portal.run(make())
        return cls._clients

    @classmethod
    def _control(cls) -> ControlClient:
        return cls._connections()[1]

    def reset(self, task: str | None = None, seed: int = 0, **row: Any) -> str:
        """Open the episode of (``task``, ``seed``) — the dataset row's columns — and return its prompt.

        Raises:
            ValueError: the row names no task.
            RemoteError: the server refused or could not be reached (training cannot go on without episodes).
        """
        if task is None:
            raise ValueError("a toolgym dataset row needs a `task` column (and `seed`): see toolgym_trl.toolgym_dataset")
        self._end()
        http, control = self._connections()

        async def open_episode() -> tuple[CreatedEpisode, EpisodeSession]:
            created = await control.create(task, int(seed))
            session = EpisodeSession(created.mcp_url, client=http)
            await session.initialize()
            return created, session

        self.episode, self.session = portal.run(open_episode())
        self.answered, self.lost = False, None
        return self.episode.prompt

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        """One tool call on the episode: the text the model is shown."""
        if self.episode is None or self.session is None:
            return "Error: no open episode (reset was not called)"
        if self.answered:
            return "Error: the episode is over: the answer was already submitted"
        if self.lost is not None:
            return "Error: the episode was lost to an infrastructure failure"
        try:
            result = portal.run(self.session.call_tool(name, arguments))
        except MCPRefused as exc:
            return f"Error: {exc}"
        except RemoteError as exc:  # the transport, not the model: this rollout must not be scored
            self.lost = str(exc)
            log.warning("toolgym: episode %s lost: %s", self.episode.id, exc)
            return "Error: the tool could not be reached"
        if name in self.answer_tools and not result.is_error:
            self.answered = True
        return result.text if not result.is_error or result.text.startswith("Error") else f"Error: {result.text}"

    def get_reward(self) -> float | None:
        """Close, grade and release the episode: the grade's score, or None when the rollout is not scorable."""
        episode, lost = self.episode, self.lost
        if episode is None:
            return None
        self._close_session()
        self.episode = None
        control = self._control()
        try:
            done = portal.run(control.finish(episode.id, record=self.run_dir is not None))
            grade = graded(done)
        except (RemoteError, NotScored) as exc:
            log.warning("toolgym: episode %s not scored: %s", episode.id, exc)
            return None
        if lost is not None:
            log.warning("toolgym: episode %s not scored: %s", episode.id, lost)
            return None
        self._write(episode, done, grade)
        return float(grade["score"])

    def _write(self, episode: CreatedEpisode, done: dict[str, Any], grade: dict[str, Any]) -> None:
        """The record file and the ``rollouts.jsonl`` line of a scored rollout (when ``run_dir`` is set)."""
        folder = self.run_dir
        if folder is None:
            return
        (folder / "records").mkdir(parents=True, exist_ok=True)
        record = None
        if done.get("record"):
            record = folder / "records" / f"{episode.id}.jsonl"
            record.write_text(record_jsonl(done["record"]), encoding="utf-8")
        line = {"episode_id": episode.id, "task": episode.task, "seed": episode.seed, "score": grade["score"],
                "passed": grade["passed"], "record": str(record) if record else None}
        with self._write_lock, open(folder / "rollouts.jsonl", "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")

    def _close_session(self) -> None:
        if self.session is not None:
            session, self.session = self.session, None
            try:
                portal.run(session.aclose())
            except Exception:  # closing is best effort: finish/release ends the episode anyway
                pass

    def _end(self) -> None:
        """Release an episode left open (a reset before its reward was asked for)."""
        self._close_session()
        if self.episode is not None:
            episode, self.episode = self.episode, None
            try:
                portal.run(self._control().release(episode.id))
            except RemoteError:
                pass


def toolgym_environment(
    server: str, *, token_variable: str = "TOOLGYM_TOKEN", run_dir: str | Path | None = None, name: str | None = None
) -> type[ToolgymEnvironment]:
    """The environment class for ``GRPOTrainer(environment_factory=...)`` of the toolgym server at ``server``.

    Reads the server's tools once (through one episode, released at once) and makes each a method. TRL logs the
    reward under the class's name (``rewards/toolgym_finance/mean``).

    Raises:
        RemoteError: the server cannot be used (one line: what to fix).
        ValueError: a tool's name collides with TRL's ``reset`` / ``get_reward`` or is not a Python identifier.
    """
    info = check_server(server, token_variable=token_variable)

    async def read() -> tuple[list[dict[str, Any]], list[str]]:
        async with ControlClient(info.url, token_variable=token_variable) as control:
            described = await control.environment()
            created = await control.create(str(info.tasks[0]["id"]), 0)
            try:
                async with EpisodeSession(created.mcp_url) as session:
                    return await session.list_tools(), list(described.get("answer_tools") or [])
            finally:
                await control.release(created.id)

    tools, answer_tools = portal.run(read())
    methods: dict[str, Any] = {}
    for tool in tools:
        if tool["name"] in RESERVED or tool["name"].startswith("_"):
            raise ValueError(f"tool {tool['name']!r} collides with TRL's environment interface (reset, get_reward, _private)")
        methods[tool["name"]] = as_function(tool, ToolgymEnvironment._call_tool)
    namespace: dict[str, Any] = {
        **methods, "server": info.url, "token_variable": token_variable, "answer_tools": frozenset(answer_tools),
        "run_dir": Path(run_dir) if run_dir is not None else None, "_clients": None,
        "__doc__": f"toolgym {info.env} at {info.url}: one episode per rollout; reward = the grade's score.",
    }
    return type(name or f"toolgym_{info.env}".replace("-", "_"), (ToolgymEnvironment,), namespace)
