"""The control API: create, inspect, close, grade and release episodes — from Python or over HTTP.

Control operations are never MCP tools (decision 6): the agent's surface is its episode's tools only.
Over HTTP they live under ``/control/`` on the same server as the MCP endpoints. With a token set
(``--token`` / ``TOOLGYM_TOKEN``) every ``/control`` request needs ``Authorization: Bearer <token>``.
The MCP endpoints stay open on loopback on purpose: the agent must be able to connect with nothing but
its episode's URL, and must never hold the secret that could grade or reset episodes.

Every error is JSON ``{"error": code, "message": ...}``: 400 bad body / unknown task, 401 missing or wrong
token, 404 unknown episode, 409 grading a free-play episode, 501 graders not installed, 503 at the cap.
"""

from __future__ import annotations

import hmac
import importlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route, Router
from starlette.types import ASGIApp, Receive, Scope, Send

from fixtures.errors import EpisodeLimitReached, EpisodeNotFound, GradingError, TaskError, ToolgymError
from servers.dispatch import format_validation_error
from servers.episodes import Episode, EpisodeManager
from servers.mcp_server import mcp_tools
from servers.record import Record

__all__ = ["Control", "CreateEpisode", "GradingUnavailable", "NotGradable", "control_app", "control_routes", "json_error"]


class GradingUnavailable(ToolgymError):
    """``graders.grading`` cannot be imported in this installation."""


class NotGradable(ToolgymError):
    """The episode has no task (free play), so there is no rubric to grade it by."""


class CreateEpisode(BaseModel):
    """Body of ``POST /control/episodes``."""

    model_config = ConfigDict(extra="forbid")

    task: str | None = None
    """Task template id; null for free play."""
    seed: StrictInt = Field(default=0, ge=0)
    """Task seed (or fixture seed in free play)."""


class Control:
    """Episode lifecycle for runners and tests, over an :class:`EpisodeManager`.

    The HTTP routes are thin wrappers of these methods, so Python callers and HTTP callers see the same
    behaviour and the same errors (``EpisodeNotFound``, ``TaskError``, ``EpisodeLimitReached``).
    """

    def __init__(self, manager: EpisodeManager) -> None:
        self.manager = manager

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

    def create(self, task: str | None = None, seed: int = 0) -> Episode:
        """Open an episode (free play when ``task`` is None)."""
        return self.manager.create(task, seed)

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
        try:
            grading = importlib.import_module("graders.grading")
        except ModuleNotFoundError as exc:
            if exc.name not in ("graders", "graders.grading"):
                raise
            raise GradingUnavailable("graders.grading is not available in this installation; grading is not possible") from None
        self.manager.close(episode_id)
        return await grading.grade_episode(episode)


def json_error(status: int, code: str, message: str, **headers: str) -> JSONResponse:
    """The control API's error body with its HTTP status."""
    return JSONResponse({"error": code, "message": message}, status_code=status, headers=headers or None)


def _episode_url(request: Request, episode_id: str) -> str:
    base = str(request.base_url).rstrip("/")
    # Under the /control mount base_url ends with it; the MCP endpoints live next to /control, not under it.
    if base.endswith("/control"):
        base = base[: -len("/control")]
    return f"{base}/episodes/{episode_id}/mcp"


async def _body(request: Request, model: type[BaseModel]) -> BaseModel | Response:
    raw = await request.body()
    try:
        data = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        return json_error(400, "invalid_json", "the request body is not valid JSON")
    if not isinstance(data, dict):
        return json_error(400, "invalid_body", "the request body must be a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        return json_error(400, "invalid_body", format_validation_error(exc))


def control_routes(control: Control) -> list[Route]:
    """The ``/control`` routes (paths relative to the mount)."""

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "env": control.environment_name, "episodes": len(control.manager)})

    async def environment(request: Request) -> Response:
        return JSONResponse(control.describe())

    async def create(request: Request) -> Response:
        body = await _body(request, CreateEpisode)
        if isinstance(body, Response):
            return body
        assert isinstance(body, CreateEpisode)
        episode = control.create(body.task, body.seed)
        header = episode.record.header
        payload = {
            "id": episode.id,
            "mcp_url": _episode_url(request, episode.id),
            "prompt": header.prompt,
            "task": header.task,
            "seed": header.seed,
            "start_hash": header.start_hash,
        }
        return JSONResponse(payload, status_code=201)

    async def listing(request: Request) -> Response:
        episodes = control.list()
        for info in episodes:
            info["mcp_url"] = _episode_url(request, info["id"])
        return JSONResponse({"episodes": episodes})

    async def show(request: Request) -> Response:
        ident = request.path_params["episode_id"]
        info = control.get(ident)
        info["mcp_url"] = _episode_url(request, ident)
        return JSONResponse(info)

    async def record(request: Request) -> Response:
        ident = request.path_params["episode_id"]
        fmt = request.query_params.get("format", "json")
        if fmt not in ("json", "jsonl"):
            return json_error(400, "invalid_format", f"format must be 'json' or 'jsonl', not {fmt!r}")
        rec = control.record(ident)
        if fmt == "jsonl":
            return PlainTextResponse(rec.to_jsonl(), media_type="application/jsonl")
        return JSONResponse(rec.model_dump(mode="json"))

    async def close(request: Request) -> Response:
        return JSONResponse(control.close(request.path_params["episode_id"]))

    async def grade(request: Request) -> Response:
        result = await control.grade(request.path_params["episode_id"])
        dumped = result.model_dump(mode="json") if isinstance(result, BaseModel) else result
        return JSONResponse(dumped)

    async def release(request: Request) -> Response:
        ident = request.path_params["episode_id"]
        control.release(ident)
        return JSONResponse({"id": ident, "released": True})

    return [
        Route("/health", health, methods=["GET"]),
        Route("/environment", environment, methods=["GET"]),
        Route("/episodes", create, methods=["POST"]),
        Route("/episodes", listing, methods=["GET"]),
        Route("/episodes/{episode_id}", show, methods=["GET"]),
        Route("/episodes/{episode_id}", release, methods=["DELETE"]),
        Route("/episodes/{episode_id}/record", record, methods=["GET"]),
        Route("/episodes/{episode_id}/close", close, methods=["POST"]),
        Route("/episodes/{episode_id}/grade", grade, methods=["POST"]),
    ]


class _ControlApp:
    """Bearer-token check and error mapping in front of the control router."""

    def __init__(self, router: ASGIApp, token: str | None) -> None:
        self.router = router
        self.token = token.encode() if token else None

    def _authorized(self, scope: Scope) -> bool:
        if self.token is None:
            return True
        header = next((v for k, v in scope.get("headers", []) if k == b"authorization"), b"")
        scheme, _, given = header.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self.token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.router(scope, receive, send)
            return
        if not self._authorized(scope):
            response: Response = json_error(
                401, "unauthorized", "this control API needs 'Authorization: Bearer <token>'", **{"WWW-Authenticate": "Bearer"}
            )
            await response(scope, receive, send)
            return
        try:
            await self.router(scope, receive, send)
            return
        except EpisodeNotFound as exc:
            response = json_error(404, "episode_not_found", str(exc))
        except TaskError as exc:
            response = json_error(400, "unknown_task", str(exc))
        except NotGradable as exc:
            response = json_error(409, "not_gradable", str(exc))
        except EpisodeLimitReached as exc:
            response = json_error(503, "episode_limit", str(exc))
        except GradingUnavailable as exc:
            response = json_error(501, "grading_unavailable", str(exc))
        except GradingError as exc:
            response = json_error(422, "grading_error", str(exc))
        except HTTPException as exc:
            response = json_error(exc.status_code, "not_found" if exc.status_code == 404 else "http_error", str(exc.detail))
        await response(scope, receive, send)


def control_app(control: Control, *, token: str | None = None) -> ASGIApp:
    """The control API as an ASGI app to mount at ``/control`` (token-checked when ``token`` is set)."""
    return _ControlApp(Router(routes=control_routes(control)), token)
