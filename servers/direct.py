"""A tool call answered in process exactly as an MCP client would receive it, without the client (RL loops, Ray).

Through an in-memory ``mcp.Client`` every step is a JSON-RPC round trip: the request and the result are
built as pydantic models, routed through the server's dispatcher and its request context, and the client
validates the result against the tool's output schema. Measured on finance's oracles, that machinery cost
about three times the tool's own work. What a client receives is a function of the call's recorded event
alone (:func:`servers.mcp_server.answer_payload`), so :func:`call_direct` builds the same observation from
the event: the same text, the same error flag, the same structured content (an independent copy, as a
client's is), and for a call that never happened the same :class:`~mcp.shared.exceptions.MCPError` the
client raises. ``tests/servers/test_direct.py`` compares both paths call by call, on every oracle step of
every environment and on hostile calls.

The arguments are first dumped as the SDK's client dumps its request (JSON values: NaN becomes null, a tuple a
list), then checked by the dispatcher against the tool's input schema, as over MCP (the SDK's server does not
check them before the tool handler): nothing reaches a tool in another form or less checked than over MCP.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from servers.episodes import Episode
from servers.mcp_server import EPISODE_NOT_FOUND, answer_payload, answer_text, dispatched

__all__ = ["Answer", "call_direct"]


@dataclass(frozen=True, slots=True)
class Answer:
    """What an MCP client would make of a ``tools/call`` result: its text, its error flag, its structured content."""

    text: str
    is_error: bool
    structured: Any = None
    """The result's ``structuredContent`` (None for an error, or a tool that returned nothing)."""


async def call_direct(episode: Episode, name: str, arguments: dict[str, Any] | None) -> Answer:
    """Run one tool call of ``episode`` through the dispatcher and answer it as an MCP client would receive it.

    Raises:
        TypeError: ``name`` is not a string or ``arguments`` not an object (a client would refuse to send them).
        pydantic.ValidationError: ``arguments`` holds what is not JSON (a key that is not a string, an object of
            no JSON form), as the SDK's client raises.
        MCPError: the call did not happen, exactly as over MCP: the episode is not live (``EPISODE_NOT_FOUND``),
            its record could not take the call (``RECORD_UNWRITABLE``), or the kit failed outside the tool
            (``INTERNAL_ERROR``; a tool's own crash is an answer with ``is_error``).
    """
    if not isinstance(name, str):
        raise TypeError(f"a tool name is a string, not {type(name).__name__}")
    if arguments is not None and not isinstance(arguments, dict):
        raise TypeError(f"tool arguments are an object (a dict), not {type(arguments).__name__}")
    if episode.state != "live":
        raise MCPError(EPISODE_NOT_FOUND, f"episode {episode.id!r} is closed")
    # The arguments as a client sends them: dumped as JSON values the way the SDK dumps its request (NaN and
    # infinities become null, tuples lists), so a Python caller's values reach the tool exactly as over MCP.
    sent = types.CallToolRequestParams(name=name, arguments=arguments).model_dump(by_alias=True, mode="json", exclude_none=True)
    event = await dispatched(episode, name, sent.get("arguments"))
    payload, is_error = answer_payload(event)
    text = answer_text(payload)
    if is_error or payload is None:
        return Answer(text, is_error)
    # a copy, as a client's is: the caller may keep or change it without touching the episode's record
    return Answer(text, False, json.loads(text))
