"""A thin client of a running toolgym server, for adapters that cannot import toolgym itself.

Frameworks such as verifiers (``mcp==2.0.0``) and OpenEnv (``fastmcp>=3``) pin MCP packages toolgym cannot
share, so their adapters run in virtual environments of their own and reach toolgym over HTTP only:

- :class:`ControlClient`: the control API (``/control``, bearer token): task metadata, create an episode,
  finish it (close, grade, release) or release it.
- :class:`EpisodeSession`: one episode's MCP endpoint as plain JSON-RPC over HTTP (initialize, list and
  call tools), with no MCP SDK.
- :func:`select_tasks`: ``toolgym run --tasks`` semantics (ids, ``split:X``, ``tag:Y``) over task metadata.
- :func:`parse_seeds`: ``toolgym run --seeds`` semantics (``0,1,2``, ``0-4``).
- :func:`check_server`: before an adapter starts, the server answers and takes the token — or one line why not.
- :func:`graded`: a finished episode's grade, or :class:`NotScored` when it is the kit's failure (never a zero);
  :func:`record_jsonl`: its record as a record file (``toolgym grade`` grades it again).

::

    async with ControlClient("http://127.0.0.1:8000") as control:          # token: $TOOLGYM_TOKEN
        created = await control.create("duplicate_charge", seed=0)
        async with EpisodeSession(created.mcp_url) as mcp:
            tools = await mcp.list_tools()
            result = await mcp.call_tool("search_customers", {"query": "Ng"})
        done = await control.finish(created.id)                             # done["grade"]["score"]
"""

from toolgym_remote._check import ServerInfo, check_server
from toolgym_remote._control import ControlClient, CreatedEpisode, RemoteError, list_tasks
from toolgym_remote._mcp import EpisodeSession, MCPRefused, ToolResult
from toolgym_remote._outcome import NotScored, graded, record_jsonl
from toolgym_remote._select import parse_seeds, select_tasks

__all__ = [
    "ControlClient",
    "CreatedEpisode",
    "RemoteError",
    "EpisodeSession",
    "ToolResult",
    "MCPRefused",
    "list_tasks",
    "select_tasks",
    "parse_seeds",
    "NotScored",
    "graded",
    "record_jsonl",
    "check_server",
    "ServerInfo",
]
