"""An environment as an MCP server: one low-level ``mcp.server.Server`` per environment, many episodes.

The tool listing is built once per environment (decision 2). Each request is routed to its episode by
an ``EpisodeResolver``: the in-memory and stdio transports bind one episode per connection, the HTTP
transport reads the episode id its router put in the request scope. So isolation never depends on the
MCP protocol having sessions (decision 1), and the same server object serves every protocol era.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from fixtures.errors import EpisodeNotFound
from servers.dispatch import call_tool
from servers.environment import Environment
from servers.episodes import Episode

__all__ = ["EpisodeResolver", "build_mcp_server", "mcp_tools", "fixed_episode", "EPISODE_NOT_FOUND"]

EpisodeResolver = Callable[[ServerRequestContext[Any, Any]], Episode]
"""Finds the episode a request belongs to; raises EpisodeNotFound when there is none."""

EPISODE_NOT_FOUND = -32004
"""JSON-RPC error code for a request addressed to an unknown or closed episode."""


@lru_cache(maxsize=None)
def _tool_listing(environment: Environment) -> tuple[types.Tool, ...]:
    tools = []
    for spec in environment.tool_specs.values():
        tools.append(
            types.Tool(
                name=spec.name,
                title=spec.mark.title,
                description=spec.description,
                input_schema=spec.input_schema,
                output_schema=spec.output_schema,
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


def mcp_tools(environment: Environment) -> list[types.Tool]:
    """The MCP tool definitions of ``environment`` (built once per process)."""
    return list(_tool_listing(environment))


def fixed_episode(episode: Episode) -> EpisodeResolver:
    """A resolver for transports that serve exactly one episode (in-memory connection, stdio process)."""

    def resolve(_ctx: ServerRequestContext[Any, Any]) -> Episode:
        if episode.state != "live":
            raise EpisodeNotFound(f"episode {episode.id!r} is closed")
        return episode

    return resolve


def _text(payload: Any) -> list[types.TextContent]:
    return [types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False, separators=(",", ":")))]


def build_mcp_server(environment: Environment, resolve: EpisodeResolver) -> Server[Any]:
    """A low-level MCP server exposing ``environment``'s tools and resources, routed by ``resolve``.

    Construction costs microseconds (the listing is cached), so transports may build one per episode.
    """
    tools = mcp_tools(environment)
    resources = [
        types.Resource(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
        for r in environment.resources
    ]

    def episode_for(ctx: ServerRequestContext[Any, Any]) -> Episode:
        try:
            return resolve(ctx)
        except EpisodeNotFound as exc:
            raise MCPError(EPISODE_NOT_FOUND, str(exc)) from None

    async def on_list_tools(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        episode_for(ctx)
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        episode = episode_for(ctx)
        event = await call_tool(episode, params.name, params.arguments)
        if event.error is not None:
            payload = {"error": event.error.code, "message": event.error.message}
            return types.CallToolResult(content=_text(payload), is_error=True)
        return types.CallToolResult(content=_text(event.result), structured_content=event.result)

    async def on_list_resources(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        episode_for(ctx)
        return types.ListResourcesResult(resources=resources)

    async def on_read_resource(ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        episode_for(ctx)
        resource = environment.resource(str(params.uri))
        if resource is None:
            raise MCPError(types.INVALID_PARAMS, f"no resource {params.uri!r}; resources: {[r.uri for r in environment.resources]}")
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=resource.uri, mime_type=resource.mime_type, text=resource.read())]
        )

    specs = environment.tool_specs

    def input_schema(name: str) -> dict[str, Any] | None:
        # Without this the SDK runs the whole tools/list handler on every 2026-07-28 tools/call to find the
        # schema for its Mcp-Param header check; the specs already hold it.
        spec = specs.get(name)
        return spec.input_schema if spec is not None else None

    return Server(
        f"toolgym-{environment.name}",
        get_tool_input_schema=input_schema,
        version=environment.version,
        description=environment.description,
        instructions=environment.instructions or None,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=on_list_resources,
        on_read_resource=on_read_resource,
    )
