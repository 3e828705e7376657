"""Turns an environment into MCP: declaration, episodes, dispatch + record, transports, control API."""

from servers.environment import Environment, ResourceSpec
from servers.episodes import Episode, EpisodeManager
from servers.mcp_server import build_mcp_server, fixed_episode, mcp_tools
from servers.memory import connect_in_memory
from servers.record import CallError, ClosedEvent, EpisodeHeader, MessageEvent, Record, ToolCallEvent, read_record
from servers.registry import environment_names, load_environment
from servers.tools import DomainError, ToolContext, ToolSpec, tool

__all__ = [
    "Environment",
    "ResourceSpec",
    "Episode",
    "EpisodeManager",
    "build_mcp_server",
    "fixed_episode",
    "mcp_tools",
    "connect_in_memory",
    "Record",
    "EpisodeHeader",
    "ToolCallEvent",
    "MessageEvent",
    "ClosedEvent",
    "CallError",
    "read_record",
    "environment_names",
    "load_environment",
    "DomainError",
    "ToolContext",
    "ToolSpec",
    "tool",
]
