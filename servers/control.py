"""The control API: create, inspect, close, grade and release episodes — from Python or over HTTP.

Control operations are never MCP tools (decision 6): the agent's surface is its episode's tools only.
Over HTTP they live under ``/control/`` on the same server as the MCP endpoints, sealed by default:

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

Every error is JSON ``{"error": code, "message": ...}``: 400 bad body / unknown task, 401 missing or wrong
token, 403 foreign origin, 404 unknown episode, 409 grading a free-play episode, 415 body not JSON, 421
foreign host, 501 graders not installed, 503 at the cap.
"""

from __future__ import annotations

import hmac
import importlib
import json
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError
from starlette.datastructures import Headers
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
    """Host/Origin, content-type and bearer-token checks, then error mapping, in front of the control router."""

    def __init__(self, router: ASGIApp, token: str | None, security: TransportSecuritySettings | None) -> None:
        self.router = router
        self.token = token.encode() if token is not None else None
        protected = security is not None and security.enable_dns_rebinding_protection
        self.allowed_hosts = list(security.allowed_hosts) if protected and security is not None else None
        # No browser page is a control client: without an allow-list, any Origin at all is refused.
        self.allowed_origins = list(security.allowed_origins) if protected and security is not None else []

    def _authorized(self, headers: Headers) -> bool:
        if self.token is None:
            return True
        scheme, _, given = headers.get("authorization", "").encode("latin-1").partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self.token)

    def _refusal(self, scope: Scope) -> Response | None:
        """The response refusing this request before any handler runs, or None to let it through."""
        headers = Headers(scope=scope)
        host = headers.get("host")
        if self.allowed_hosts is not None and not _matches(host, self.allowed_hosts):
            return json_error(421, "invalid_host", f"Host {host!r} is not served here (DNS-rebinding protection)")
        origin = headers.get("origin")
        if origin is not None and not _matches(origin, self.allowed_origins):
            return json_error(403, "invalid_origin", f"requests from origin {origin!r} are refused by the control API")
        if scope["method"] == "POST" and not _json_or_empty(headers):
            return json_error(415, "unsupported_media_type", "a control API request body must be application/json")
        if not self._authorized(headers):
            return json_error(
                401, "unauthorized", "this control API needs 'Authorization: Bearer <token>'", **{"WWW-Authenticate": "Bearer"}
            )
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.router(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        response: Response
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


def _matches(value: str | None, allowed: list[str]) -> bool:
    """Whether a Host or Origin value is in ``allowed`` (entries ending in ``:*`` allow any port)."""
    if not value:
        return False
    return any(value == entry or (entry.endswith(":*") and value.startswith(entry[:-1])) for entry in allowed)


def _json_or_empty(headers: Headers) -> bool:
    """Whether a POST declares a JSON body, or has no body (and no content type) at all."""
    content_type = headers.get("content-type")
    if content_type is not None:
        return content_type.split(";", 1)[0].strip().lower() == "application/json"
    return headers.get("content-length", "0") == "0" and "transfer-encoding" not in headers


def control_app(
    control: Control, *, token: str | None, security: TransportSecuritySettings | None = None
) -> ASGIApp:
    """The control API as an ASGI app to mount at ``/control``.

    Args:
        token: the bearer token every request must carry; None serves the API without one (the explicit,
            unsafe opt-out: any process that reaches the port can then act on every episode).
        security: Host/Origin allow-lists (the MCP endpoints' DNS-rebinding settings); None refuses every
            request that carries an Origin and checks no Host.

    Raises:
        ValueError: ``token`` is empty (that would read as "no token" and open the API by accident).
    """
    if token is not None and not token.strip():
        raise ValueError("the control token is empty; pass a real token, or None to serve without one")
    return _ControlApp(Router(routes=control_routes(control)), token, security)
