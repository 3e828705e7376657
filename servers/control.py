"""The control API: create, inspect, close, grade and release episodes — from Python or over HTTP.

Control operations are never MCP tools (decision 6): the agent's surface is its episode's tools only.
This module is the Python side (:class:`Control`); ``servers/control_app.py`` serves it over HTTP under
``/control/`` on the same server as the MCP endpoints, sealed by default:

- **Token.** Every ``/control`` request needs ``Authorization: Bearer <token>``. The HTTP server makes a
  fresh token (``secrets.token_urlsafe(32)``) unless one is given (``--token`` / ``TOOLGYM_TOKEN``, the
  ``token=`` argument); the CLI prints it to the operator on stderr, Python callers read
  ``HttpServer.token``. Only an explicit opt-out (``--no-token``, ``no_token=True``) serves the control API
  without one — unsafe whenever an agent can reach the port, since it could then list, play and grade
  every episode. No agent is ever given the token: the MCP endpoints stay open on loopback on purpose,
  since an agent connects with nothing but its episode's URL.
- **Host and Origin.** On a loopback bind, like the MCP endpoints, a request whose ``Host`` is not a
  loopback name gets 421 and one whose ``Origin`` is not a loopback origin gets 403 (DNS rebinding, web
  pages); elsewhere any ``Origin`` is refused, since no browser page is a control client. These checks
  come before the token check and hold with the opt-out too.
- **Content type.** A POST with a body must be ``application/json`` (415 otherwise), so no cross-site
  ``text/plain`` form can reach a handler.

- **Size.** A body larger than ``MAX_BODY_BYTES`` gets 413 before it is read whole, and no error echoes
  a request's values back in full (an unknown task id is cut short).

Every error is JSON ``{"error": code, "message": ...}``: 400 bad body / unknown task, 401 missing or wrong
token, 403 foreign origin, 404 unknown episode, 409 grading a free-play episode, 413 body too large, 415
body not JSON, 421 foreign host, 422 the grader failed (``grading_error``: a broken rubric or a crash inside
grading, never the agent's doing), 500 record not writable (or ``internal_error``: a bug of the server's,
still as JSON), 501 graders not installed, 503 at the cap.

After play, one request does what four did (``POST /control/episodes/ID/finish``: close, grade, return the
record and release), and a create may ask for the task's oracle (``"oracle": true``) so an oracle runner
needs no local rebuild of the task. The oracle goes to the token holder only, never over MCP. Grading an
episode with a large diff runs in a worker thread with an event loop of its own, so it never stalls the
other episodes' calls.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
from types import ModuleType
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from fixtures.errors import EpisodeNotFound, GradingError, ToolgymError
from servers.dropped import DROPS
from servers.episodes import Episode, EpisodeManager
from servers.mcp_server import mcp_tools
from servers.record import Record

if TYPE_CHECKING:
    from servers.health import Heartbeat
    from servers.sessions import SessionTable

__all__ = [
    "Control",
    "CreateEpisode",
    "FinishEpisode",
    "GradingUnavailable",
    "NotGradable",
    "GRADE_IN_THREAD_CHANGES",
    "MAX_BODY_BYTES",
]

MAX_BODY_BYTES = 64 * 1024
"""Largest control API request body; no control request needs more."""

GRADE_IN_THREAD_CHANGES = 2000
"""Episodes with more logged row changes than this are graded in a worker thread, off the event loop."""

GRADING_AT_ONCE = 4
"""Gradings in progress at once: a first grade of a task instance replays its oracle on a world of its own,
so 500 finishes at once would otherwise hold 500 extra worlds (measured: +3.7 GB at the peak)."""

_grading_limiter: anyio.CapacityLimiter | None = None

_TASK_FIELDS = frozenset({"id", "difficulty", "category", "split", "tags", "tools", "description"})
"""What ``Control.tasks`` tells about a template: its metadata, nothing an agent could be graded against."""


class GradingUnavailable(ToolgymError):
    """``graders.grading`` cannot be imported in this installation."""


class NotGradable(ToolgymError):
    """The episode has no task (free play), so there is no rubric to grade it by."""


class CreateEpisode(BaseModel):
    """Body of ``POST /control/episodes``."""

    model_config = ConfigDict(extra="forbid")

    task: str | None = Field(default=None, max_length=200)
    """Task template id; null for free play."""
    seed: StrictInt = Field(default=0, ge=0, le=2**63 - 1)
    """Task seed (or fixture seed in free play): a 64-bit signed integer, as records store it."""
    oracle: StrictBool = False
    """Return the task's oracle (its reference tool calls) with the episode: for oracle runners only."""


class FinishEpisode(BaseModel):
    """Body of ``POST /control/episodes/{id}/finish``."""

    model_config = ConfigDict(extra="forbid")

    reason: str = Field(default="closed", min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")
    """Why the episode ends (the record's footer)."""
    grade: StrictBool = True
    """Grade the episode (a free-play episode gets ``grade_error`` instead)."""
    record: StrictBool = True
    """Return the record."""
    release: StrictBool = True
    """Release the world afterwards (the record stays readable for a while)."""


class Control:
    """Episode lifecycle for runners and tests, over an :class:`EpisodeManager`.

    The HTTP routes are thin wrappers of these methods, so Python callers and HTTP callers see the same
    behaviour and the same errors (``EpisodeNotFound``, ``TaskError``, ``EpisodeLimitReached``).
    """

    def __init__(self, manager: EpisodeManager, *, sessions: SessionTable | None = None) -> None:
        self.manager = manager
        self.sessions = sessions
        self.heartbeat: Heartbeat | None = None
        """The serving event loop's heartbeat (set by the HTTP app): health then says how late the loop is."""
        self.connections: Callable[[], dict[str, int]] | None = None
        """Open connections against the open-files limit (set by the HTTP server: ``servers/accept.py``)."""

    @property
    def environment_name(self) -> str:
        """Name of the environment this control plane serves."""
        return self.manager.environment.name

    def describe(self) -> dict[str, Any]:
        """The environment's name, description, tools and task count."""
        env = self.manager.environment
        return {
            "name": env.name,
            "description": env.description,
            "tools": [
                {"name": t.name, "description": t.description, "read_only": bool(t.annotations and t.annotations.read_only_hint)}
                for t in mcp_tools(env)
            ],
            "answer_tools": env.answer_tools,
            "resources": [r.uri for r in env.resources],
            "tasks": len(env.task_templates()),
        }

    def tasks(self) -> list[dict[str, Any]]:
        """The environment's task templates with their metadata (id, difficulty, category, split, tags, tools,
        description), in the environment's order: what a remote runner selects tasks by. Never a prompt,
        an oracle or a rubric."""
        rows = []
        for template in self.manager.environment.task_templates().values():
            summary = template.summary() if hasattr(template, "summary") else {"id": template.id}
            rows.append({k: v for k, v in summary.items() if k in _TASK_FIELDS})
        return rows

    def health(self) -> dict[str, Any]:
        """Liveness and load: live episodes and open sessions against their (separate) caps, what is kept of
        released episodes (records and bytes against their bounds) and, on a server, how late its event loop is.

        Reads only counters, so the health listener's thread (``servers/health.py``) may call it while the
        event loop runs.
        """
        manager = self.manager
        limits: dict[str, Any] = {"episodes": {"open": manager.capped_count, "max": manager.max_live}}
        if self.sessions is not None:
            limits.update(self.sessions.counts())
        if manager.memory is not None:
            limits["memory"] = manager.memory.snapshot()
        if self.connections is not None:
            limits["connections"] = self.connections()
        body: dict[str, Any] = {"status": "ok", "env": self.environment_name, "episodes": len(manager), "limits": limits}
        body["released"] = manager.history_counts()
        # Creates in progress (each counted in ``open`` and against memory until it ends) and those given up
        # because their client left; requests dropped for a vanished client or session (servers/dropped.py).
        body["creates"] = {"in_progress": manager.creating, "abandoned": manager.abandoned}
        body["dropped"] = DROPS.snapshot()
        if self.heartbeat is not None:
            body["loop"] = self.heartbeat.state()
            if body["loop"]["stalled"]:
                body["status"] = "stalled"
        return body

    def create(self, task: str | None = None, seed: int = 0) -> Episode:
        """Open an episode (free play when ``task`` is None)."""
        return self.manager.create(task, seed)

    async def create_async(self, task: str | None = None, seed: int = 0) -> Episode:
        """Open an episode with the clone and task setup in a worker thread (what the HTTP server does)."""
        return await self.manager.create_async(task, seed)

    @staticmethod
    def oracle(episode: Episode) -> list[dict[str, Any]] | None:
        """The episode's oracle as JSON tool calls (None in free play). For the token holder only."""
        if episode.task is None:
            return None
        return [step.model_dump(mode="json") for step in episode.task.oracle]

    def list(self) -> list[dict[str, Any]]:
        """Summaries of the episodes holding a world, oldest first."""
        return [self.manager.info(e) for e in self.manager.list()]

    def get(self, episode_id: str) -> dict[str, Any]:
        """Summary of one episode (live or closed)."""
        episode = self.manager.get(episode_id)
        info = self.manager.info(episode)
        footer = episode.record.closed
        info["end_hash"] = footer.end_hash if footer is not None else None
        return info

    def record(self, episode_id: str) -> Record:
        """The record of a live, closed or recently released episode."""
        return self.manager.record(episode_id)

    def close(self, episode_id: str) -> dict[str, Any]:
        """Stop the episode's tool calls and write its footer; the world stays for grading."""
        self.manager.close(episode_id)
        return self.get(episode_id)

    def abandon(self, episode_id: str) -> None:
        """Release an episode its creator never received (its connection was reset before reading the answer),
        counted with the creates given up; nothing happens to an episode already used or gone."""
        episode = self.manager._episodes.get(episode_id)  # noqa: SLF001 - one lookup, no error for a gone one
        if episode is not None and episode.state == "live" and episode.seq == 0:
            self.manager.release(episode_id)
            self.manager.abandoned += 1

    def release(self, episode_id: str) -> None:
        """Free the episode's world (its record stays readable for a while).

        Raises:
            EpisodeNotFound: no episode with this id holds a world.
        """
        self.manager.get(episode_id)
        self.manager.release(episode_id)

    async def grade(self, episode_id: str) -> Any:
        """Close the episode (if live) and grade it with ``graders.grading.grade_episode``.

        Returns:
            The ``graders.grade.Grade`` (a pydantic model).

        Raises:
            GradingUnavailable: ``graders.grading`` is not importable here.
            GradingError: the rubric cannot be evaluated.
            NotGradable: the episode is free play, so there is no rubric to grade against.
        """
        episode = self.manager.get(episode_id)
        if episode.task is None:
            raise NotGradable(f"episode {episode_id!r} is free play (no task): there is no rubric to grade it by")
        grading = _grading()
        self.manager.close(episode_id)
        try:
            return await _grade(grading, episode)
        except (GradingError, EpisodeNotFound):
            raise
        except Exception as exc:  # a crash inside the grader: the caller gets a grading error, never a bare 500
            raise GradingError(f"grading episode {episode_id!r} failed: {type(exc).__name__}: {exc}"[:2000]) from exc

    async def finish(
        self, episode_id: str, *, reason: str = "closed", grade: bool = True, record: bool = True, release: bool = True
    ) -> dict[str, Any]:
        """Close, grade, read the record and release, in one call (what a runner does after every episode).

        A grade that cannot be given is reported in ``grade_error`` ({error, message}) rather than raised, so
        the record still comes back; a record that cannot be read is reported in ``record_error``. An episode
        whose asked-for grade failed (``grading_error``: the grader crashed or the rubric is broken) or whose
        record could not be read is **not** released, whatever ``release`` says: its world is the only
        evidence left to grade it again or find the bug (``released`` says what happened; release it with
        ``DELETE`` when done). So is an episode whose record file stopped at a line (disk full, read-only:
        ``record_error`` ``record_unwritable``): the record returned is whole, the file is not.

        Raises:
            EpisodeNotFound: no episode with this id holds a world.
        """
        episode = self.manager.get(episode_id)
        self.manager.close(episode_id, reason=reason)
        footer = episode.record.closed
        result: dict[str, Any] = {"id": episode_id, "state": episode.state, "end_hash": footer.end_hash if footer else None}
        keep = False
        if grade:
            result["grade"] = None
            try:
                if episode.task is None:
                    raise NotGradable(f"episode {episode_id!r} is free play (no task): there is no rubric to grade it by")
                graded = await _grade(_grading(), episode)
                result["grade"] = graded.model_dump(mode="json") if isinstance(graded, BaseModel) else graded
            except (NotGradable, GradingUnavailable) as exc:
                code = "not_gradable" if isinstance(exc, NotGradable) else "grading_unavailable"
                result["grade_error"] = {"error": code, "message": str(exc)}
            except Exception as exc:  # GradingError, or a crash inside the grader: reported, and the world kept
                message = str(exc) if isinstance(exc, GradingError) else f"the grader crashed: {type(exc).__name__}: {exc}"
                result["grade_error"] = {"error": "grading_error", "message": message[:2000]}
                keep = True
        if record:
            try:
                result["record"] = episode.record.model_dump(mode="json")
            except Exception as exc:  # a record that cannot be sent is still the only copy: keep the episode
                result["record"] = None
                result["record_error"] = {"error": "record_unreadable", "message": f"{type(exc).__name__}: {exc}"[:2000]}
                keep = True
        if episode.record_failure is not None:
            # Its record file stopped at a line (disk full, read-only): the world and the in-memory record are
            # all that is left of what the file lacks, so the episode is kept for them (the reaper still
            # releases it after --closed-ttl).
            result.setdefault("record_error", {"error": "record_unwritable", "message": episode.record_failure[:2000]})
            keep = True
        released = release and not keep
        if released:
            self.manager.release(episode_id)
        result["released"] = released
        return result


def _grading() -> ModuleType:
    try:
        return importlib.import_module("graders.grading")
    except ModuleNotFoundError as exc:
        if exc.name not in ("graders", "graders.grading"):
            raise
        raise GradingUnavailable("graders.grading is not available in this installation; grading is not possible") from None


async def _grade(grading: ModuleType, episode: Episode) -> Any:
    """Grade on the event loop, or — for a large diff — in a worker thread running an event loop of its own."""
    global _grading_limiter
    if _grading_limiter is None:
        _grading_limiter = anyio.CapacityLimiter(GRADING_AT_ONCE)
    async with _grading_limiter:
        return await _grade_now(grading, episode)


async def _grade_now(grading: ModuleType, episode: Episode) -> Any:
    if episode.changes <= GRADE_IN_THREAD_CHANGES:
        return await grading.grade_episode(episode)

    def in_thread() -> Any:
        # A fresh context: the caller's would tell the new loop it is already inside one.
        return contextvars.Context().run(asyncio.run, grading.grade_episode(episode))

    return await anyio.to_thread.run_sync(in_thread, abandon_on_cancel=False)


