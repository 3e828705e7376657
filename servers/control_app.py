"""The control API over HTTP: routes under ``/control``, their seal and their errors (see ``servers/control.py``).

Routes (relative to the mount)::

    GET    /health                     liveness, episodes and sessions against their caps
    GET    /environment                name, description, tools, resources, task count
    GET    /tasks                      the task templates' metadata (id, split, tags...) for remote runners
    POST   /episodes                   create ({"task", "seed", "oracle"}) → id, mcp_url, prompt (+ oracle)
    GET    /episodes                   the episodes holding a world
    GET    /episodes/{id}              one episode
    DELETE /episodes/{id}              release
    GET    /episodes/{id}/record       its record (``?format=jsonl``)
    POST   /episodes/{id}/close        close (footer written; the world stays for grading)
    POST   /episodes/{id}/grade        close and grade
    POST   /episodes/{id}/finish       close, grade, record and release in one request
"""

from __future__ import annotations

import hmac
import json
import logging
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, ValidationError
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route, Router
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fixtures.errors import EpisodeLimitReached, EpisodeNotFound, GradingError, RecordError, TaskError
from servers.control import MAX_BODY_BYTES, Control, CreateEpisode, FinishEpisode, GradingUnavailable, NotGradable
from servers.admission import MemoryLimitReached
from servers.dispatch import format_validation_error
from servers.dropped import undo_if_unread, until_client_leaves

__all__ = ["control_app", "control_routes", "json_error"]

log = logging.getLogger("toolgym.control")


class _BodyTooLarge(Exception):
    """A control request body grew past ``MAX_BODY_BYTES`` while it was read."""


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
    raw = await request.body()  # bounded: _ControlApp refuses a body past MAX_BODY_BYTES while it is read
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
        return JSONResponse(control.health())

    async def environment(request: Request) -> Response:
        return JSONResponse(control.describe())

    async def tasks(request: Request) -> Response:
        return JSONResponse({"tasks": control.tasks()})

    async def create(request: Request) -> Response:
        body = await _body(request, CreateEpisode)
        if isinstance(body, Response):
            return body
        assert isinstance(body, CreateEpisode)
        # A client that leaves (its timeout) stops its create: a world nobody will use is never made, or freed.
        made, left = await until_client_leaves(request.receive, lambda: control.create_async(body.task, body.seed))
        if left or made is None:
            if made is not None:
                control.abandon(made.id)
            return json_error(499, "client_closed_request", "the client left before its episode was made")
        episode = made
        undo_if_unread(request.scope.get("client"), lambda: control.abandon(episode.id))
        header = episode.record.header
        payload: dict[str, Any] = {
            "id": episode.id,
            "mcp_url": _episode_url(request, episode.id),
            "prompt": header.prompt,
            "task": header.task,
            "seed": header.seed,
            "start_hash": header.start_hash,
        }
        if body.oracle:
            payload["oracle"] = control.oracle(episode)
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

    async def finish(request: Request) -> Response:
        body = await _body(request, FinishEpisode)
        if isinstance(body, Response):
            return body
        assert isinstance(body, FinishEpisode)
        options = body.model_dump()
        return JSONResponse(await control.finish(request.path_params["episode_id"], **options))

    async def release(request: Request) -> Response:
        ident = request.path_params["episode_id"]
        control.release(ident)
        return JSONResponse({"id": ident, "released": True})

    return [
        Route("/health", health, methods=["GET"]),
        Route("/environment", environment, methods=["GET"]),
        Route("/tasks", tasks, methods=["GET"]),
        Route("/episodes", create, methods=["POST"]),
        Route("/episodes", listing, methods=["GET"]),
        Route("/episodes/{episode_id}", show, methods=["GET"]),
        Route("/episodes/{episode_id}", release, methods=["DELETE"]),
        Route("/episodes/{episode_id}/record", record, methods=["GET"]),
        Route("/episodes/{episode_id}/close", close, methods=["POST"]),
        Route("/episodes/{episode_id}/grade", grade, methods=["POST"]),
        Route("/episodes/{episode_id}/finish", finish, methods=["POST"]),
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
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY_BYTES):
            return _too_large()
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
        received = 0

        async def bounded() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > MAX_BODY_BYTES:
                raise _BodyTooLarge
            return message

        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.router(scope, bounded, tracked)
            return
        except _BodyTooLarge:
            response = _too_large()
        except ClientDisconnect:  # the client left mid-body: nobody to answer, nothing to log but a line
            log.debug("control API %s %s: the client left before sending its body", scope["method"], scope.get("path"))
            return
        except RecordError as exc:
            response = json_error(500, "record_unwritable", str(exc))
        except EpisodeNotFound as exc:
            response = json_error(404, "episode_not_found", str(exc))
        except TaskError as exc:
            response = json_error(400, "unknown_task", str(exc))
        except NotGradable as exc:
            response = json_error(409, "not_gradable", str(exc))
        except MemoryLimitReached as exc:  # before its parent: the answer names the limit that was reached
            response = json_error(503, "memory_limit", str(exc))
        except EpisodeLimitReached as exc:
            response = json_error(503, "episode_limit", str(exc))
        except GradingUnavailable as exc:
            response = json_error(501, "grading_unavailable", str(exc))
        except GradingError as exc:
            response = json_error(422, "grading_error", str(exc))
        except HTTPException as exc:
            response = json_error(exc.status_code, "not_found" if exc.status_code == 404 else "http_error", str(exc.detail))
        except Exception as exc:  # a bug of ours: still a JSON error the caller can read, and logged with its trace
            if started:
                raise
            log.exception("control API %s %s failed", scope["method"], scope.get("path"))
            response = json_error(500, "internal_error", f"{type(exc).__name__}: {exc}"[:500])
        await response(scope, receive, send)


def _too_large() -> JSONResponse:
    return json_error(413, "body_too_large", f"a control API request body is at most {MAX_BODY_BYTES} bytes")


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
