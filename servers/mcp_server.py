"""An environment as an MCP server: one low-level ``mcp.server.Server`` per environment, many episodes.

The tool listing is built once per environment (decision 2). Each request is routed to its episode by
an ``EpisodeResolver``: the in-memory and stdio transports bind one episode per connection, the HTTP
transport reads the episode id its router put in the request scope. So isolation never depends on the
MCP protocol having sessions (decision 1), and the same server object serves every protocol era.

Output schemas are served ``compact`` by default: without the ``title`` and ``description`` annotations
pydantic writes on every model and field (repeated in every tool that returns the same model). They
validate exactly what the full ones do, at 45% of the size (finance: ``tools/list`` 113 KB → 72 KB, of
which output schemas 75 KB → 34 KB), which every client downloads and many put in a model's context.
The tool descriptions and input schemas, which are what an agent reads, are untouched. ``full`` serves
pydantic's schemas as they are; ``none`` serves no output schema (results keep their structured content;
clients then skip validating it).
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any, Literal

import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import x_mcp_header_map

from fixtures.errors import EpisodeNotFound, RecordUnwritable
from servers.dispatch import call_tool
from servers.environment import Environment
from servers.episodes import Episode
from servers.record import ToolCallEvent
from servers.text import unescape

__all__ = [
    "EpisodeResolver",
    "OutputSchemas",
    "build_mcp_server",
    "mcp_tools",
    "fixed_episode",
    "compact_schema",
    "EPISODE_NOT_FOUND",
    "RECORD_UNWRITABLE",
    "answer_payload",
    "answer_text",
    "dispatched",
]

log = logging.getLogger("toolgym.mcp")

EpisodeResolver = Callable[[ServerRequestContext[Any, Any]], "Episode | Awaitable[Episode]"]
"""Finds the episode a request belongs to (directly or awaitably); raises EpisodeNotFound when there is none."""

OutputSchemas = Literal["compact", "full", "none"]
"""How tools/list serves output schemas (see the module docstring)."""

_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")


def compact_schema(schema: Any) -> Any:
    """``schema`` without ``title``/``description`` annotations, at every level; validates the same values."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("title", "description") and isinstance(value, str):
            continue
        if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: compact_schema(sub) for name, sub in value.items()}
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [compact_schema(sub) for sub in value]
        elif key in _SUBSCHEMA:
            out[key] = compact_schema(value)
        else:
            out[key] = value
    return out

EPISODE_NOT_FOUND = -32004
"""JSON-RPC error code for a request addressed to an unknown or closed episode."""

RECORD_UNWRITABLE = -32006
"""JSON-RPC error code for a tool call the episode's record could not hold (disk full, read-only): the call
was undone, and the episode takes no more calls. Data: ``{"error": "record_unwritable", "episode": id}``."""


@lru_cache(maxsize=None)
def _tool_listing(environment: Environment, output_schemas: OutputSchemas) -> tuple[types.Tool, ...]:
    tools = []
    for spec in environment.tool_specs.values():
        output = spec.output_schema
        if output is not None and output_schemas != "full":
            output = compact_schema(output) if output_schemas == "compact" else None
        tools.append(
            types.Tool(
                name=spec.name,
                title=spec.mark.title,
                description=spec.description,
                input_schema=spec.input_schema,
                output_schema=output,
                annotations=types.ToolAnnotations(
                    title=spec.mark.title,
                    read_only_hint=not spec.mark.mutates,
                    destructive_hint=spec.mark.destructive,
                    idempotent_hint=not spec.mark.mutates,
                    open_world_hint=False,
                ),
            )
        )
    return tuple(tools)


def mcp_tools(environment: Environment, output_schemas: OutputSchemas = "compact") -> list[types.Tool]:
    """The MCP tool definitions of ``environment`` (built once per process)."""
    if output_schemas not in ("compact", "full", "none"):
        raise ValueError(f"output_schemas must be 'compact', 'full' or 'none', not {output_schemas!r}")
    return list(_tool_listing(environment, output_schemas))


def fixed_episode(episode: Episode) -> EpisodeResolver:
    """A resolver for transports that serve exactly one episode (in-memory connection, stdio process)."""

    def resolve(_ctx: ServerRequestContext[Any, Any]) -> Episode:
        if episode.state != "live":
            raise EpisodeNotFound(f"episode {episode.id!r} is closed")
        return episode

    return resolve


async def dispatched(episode: Episode, name: str, arguments: dict[str, Any] | None) -> ToolCallEvent:
    """:func:`servers.dispatch.call_tool`, with a call that did not happen raised as the ``MCPError`` a client gets.

    Why: the SDK path and the in-process one (``servers/direct.py``) must fail alike. A record that refused the
    call is ``RECORD_UNWRITABLE`` (the SDK would answer code 0 with a traceback); a kit bug outside any tool is
    ``INTERNAL_ERROR`` (a tool's own crash is a recorded result, not this).
    """
    try:
        return await call_tool(episode, name, arguments)
    except RecordUnwritable as exc:
        raise MCPError(RECORD_UNWRITABLE, str(exc), {"error": "record_unwritable", "episode": episode.id}) from None
    except Exception as exc:
        log.exception("tools/call %s failed in episode %s", name[:100], episode.id)
        raise MCPError(types.INTERNAL_ERROR, f"internal error: {type(exc).__name__}") from None


def answer_payload(event: ToolCallEvent) -> tuple[Any, bool]:
    """What a recorded call answers its client: the payload (the result, or ``{error, message}``) and whether it is
    an error. One definition for every path that answers a call: the SDK's (:func:`build_mcp_server`), the direct
    HTTP one (``servers/fastcall.py``) and the in-process one (``servers/direct.py``)."""
    if event.error is not None:
        # An escaped event (the agent sent a lone surrogate) keeps its message escaped in the record; the
        # client reads it as written (its text came from repr(): nothing unsendable comes back).
        message = unescape(event.error.message) if event.escaped else event.error.message
        return {"error": event.error.code, "message": message}, True
    return event.result, False


def answer_text(payload: Any) -> str:
    """The text content of a call's answer: its payload as compact JSON, non-ASCII kept (what a model reads)."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _text(payload: Any) -> list[types.TextContent]:
    return [types.TextContent(type="text", text=answer_text(payload))]


def build_mcp_server(environment: Environment, resolve: EpisodeResolver, *, output_schemas: OutputSchemas = "compact") -> Server[Any]:
    """A low-level MCP server exposing ``environment``'s tools and resources, routed by ``resolve``.

    Construction costs microseconds (the listing is cached), so transports may build one per episode.
    """
    tools = mcp_tools(environment, output_schemas)
    resources = [
        types.Resource(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
        for r in environment.resources
    ]

    async def episode_for(ctx: ServerRequestContext[Any, Any]) -> Episode:
        try:
            found = resolve(ctx)
            return await found if inspect.isawaitable(found) else found
        except EpisodeNotFound as exc:
            raise MCPError(EPISODE_NOT_FOUND, str(exc)) from None

    async def on_list_tools(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        await episode_for(ctx)
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        event = await dispatched(await episode_for(ctx), params.name, params.arguments)
        payload, is_error = answer_payload(event)
        if is_error:
            return types.CallToolResult(content=_text(payload), is_error=True)
        return types.CallToolResult(content=_text(payload), structured_content=payload)

    async def on_list_resources(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        await episode_for(ctx)
        return types.ListResourcesResult(resources=resources)

    async def on_list_resource_templates(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        # Resources are advertised, so clients ask for templates too; there are none (not -32601).
        await episode_for(ctx)
        return types.ListResourceTemplatesResult(resource_templates=[])

    async def on_read_resource(ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        await episode_for(ctx)
        resource = environment.resource(str(params.uri))
        if resource is None:
            raise MCPError(types.INVALID_PARAMS, f"no resource {params.uri!r}; resources: {[r.uri for r in environment.resources]}")
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=resource.uri, mime_type=resource.mime_type, text=resource.read())]
        )

    # The SDK checks a 2026-07-28 tools/call's Mcp-Param-* headers against the input schema's x-mcp-header
    # properties. Without a lookup it runs the whole tools/list handler per call to find the schema; with
    # one it still walks the schema per call. Only tools that declare such properties have anything to check
    # (for the others every header set passes), so only theirs are handed over.
    header_schemas = {spec.name: spec.input_schema for spec in environment.tool_specs.values() if x_mcp_header_map(spec.input_schema)}

    def input_schema(name: str) -> dict[str, Any] | None:
        return header_schemas.get(name)

    return Server(
        f"toolgym-{environment.name}",
        get_tool_input_schema=input_schema,
        version=environment.version,
        description=environment.description,
        instructions=environment.instructions or None,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=on_list_resources,
        on_list_resource_templates=on_list_resource_templates,
        on_read_resource=on_read_resource,
    )
