"""One tools listing and one set of output-schema validators for every SDK client of one server.

Why: the mcp 2.x ``ClientSession`` keeps, per session, the output schema of every listed tool
(``_tool_output_schemas``) and a validator compiled from it on the tool's first result
(``_tool_output_validators``; compiling is ``check_schema`` against the metaschema, 1.8-15 ms per finance
tool). A session that has not listed a tool lists *all* tools before validating its first result. So a
client per episode paid a 100 KB ``tools/list`` and ~19 ms of compiling every episode, and concurrent
episodes sharing one fresh client each triggered a listing of their own.

A :class:`ToolCache` lists once (through the first client it primes), then installs the listing's schemas
into every session it primes — no session ever lists again — and shares one validators dict between them.
That dict is process-wide, keyed by a fingerprint of the listing's output schemas, so each validator is
compiled once per process even across caches (every run, every backend, every gym of the same server). Over HTTP it also keeps the server's ``DiscoverResult``,
so later clients pin the modern protocol with ``prior_discover`` and skip the ``server/discover`` probe:
a new client per episode then costs no request at all before its first tool call.

One cache belongs to one server (one listing): sessions of another server must use another cache.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

if TYPE_CHECKING:
    from servers.environment import Environment

__all__ = ["ToolCache"]

_LOCAL: WeakKeyDictionary[Environment, ToolCache] = WeakKeyDictionary()
_VALIDATORS: dict[str, dict[str, Any]] = {}
"""Fingerprint of a listing's output schemas → the validators compiled from them (process-wide)."""


def _validators_for(schemas: dict[str, dict[str, Any] | None]) -> dict[str, Any]:
    fingerprint = hashlib.sha256(json.dumps(schemas, sort_keys=True).encode()).hexdigest()
    return _VALIDATORS.setdefault(fingerprint, {})


class ToolCache:
    """The tools of one server, listed once, with validators compiled once per process."""

    def __init__(self) -> None:
        self.tools: list[types.Tool] | None = None
        """The listing (None until the first :meth:`prime`)."""
        self.discover: types.DiscoverResult | None = None
        """The server's discover result, when the first client negotiated the modern protocol."""
        self._schemas: dict[str, dict[str, Any] | None] = {}
        self._validators: dict[str, Any] = {}
        self._version: str | None = None
        self._lock = anyio.Lock()
        self.listings = 0
        """``tools/list`` requests this cache made (1 once primed; tests and benchmarks read it)."""

    @classmethod
    def of(cls, tools: Sequence[types.Tool]) -> ToolCache:
        """A cache holding a listing already known (no ``tools/list`` needed)."""
        cache = cls()
        cache.tools = list(tools)
        cache._schemas = {tool.name: tool.output_schema for tool in tools}
        cache._validators = _validators_for(cache._schemas)
        return cache

    @classmethod
    def local(cls, environment: Environment) -> ToolCache:
        """The process-wide cache of ``environment``'s in-process servers (its listing is known here)."""
        cache = _LOCAL.get(environment)
        if cache is None:
            from servers.mcp_server import mcp_tools

            cache = _LOCAL[environment] = cls.of(mcp_tools(environment))
        return cache

    async def prime(self, client: Client, **list_options: Any) -> list[types.Tool]:
        """List the tools through ``client`` on first use, then make ``client``'s session use the shared state.

        ``list_options`` go to ``client.list_tools`` on the first listing (e.g. ``meta=`` for a server that
        routes requests by ``_meta``).
        """
        if self.tools is None:
            async with self._lock:
                if self.tools is None:
                    listing = await client.list_tools(**list_options)
                    self.listings += 1
                    self._schemas = {tool.name: tool.output_schema for tool in listing.tools}
                    self._validators = _validators_for(self._schemas)
                    discovered = client.session.discover_result
                    if discovered is not None and client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                        self.discover = discovered
                        self._version = client.protocol_version
                    self.tools = list(listing.tools)
        self.install(client)
        return self.tools

    def install(self, client: Client, *, validate: bool = True) -> None:
        """Give ``client``'s session the cached schemas and the shared validators (no request).

        ``validate=False``: the session knows every tool but no output schema, so the SDK does not re-validate
        results (a tool without a schema): for toolgym's own runner on toolgym's own server, whose dispatcher
        returns pydantic models (a third of an in-process oracle episode's CPU went to jsonschema). A later
        ``list_tools`` through the session would bring the schemas back.
        """
        session = client.session
        # The SDK's own per-session caches (mcp/client/session.py): schemas copied, validators shared, so a
        # validator compiled by one session serves every other. Only a re-listing that finds a *changed*
        # schema would evict from the shared dict, and one cache serves one server's fixed listing.
        if validate:
            session._tool_output_schemas = dict(self._schemas)  # noqa: SLF001
        else:
            session._tool_output_schemas = dict.fromkeys(self._schemas)  # noqa: SLF001
        session._tool_output_validators = self._validators  # noqa: SLF001

    @asynccontextmanager
    async def connect(self, url: str, http_client: httpx2.AsyncClient) -> AsyncIterator[Client]:
        """An ``mcp.Client`` on ``url`` (a server's MCP endpoint), primed; closes it on exit.

        After the first client, clients pin the protocol the server spoke and reuse its discover result, so
        opening one sends nothing.
        """
        transport = streamable_http_client(url, http_client=http_client, terminate_on_close=False)
        if self.discover is not None and self._version is not None and self.tools is not None:
            client = Client(transport, mode=self._version, prior_discover=self.discover)
        else:
            client = Client(transport)
        async with client:
            await self.prime(client)
            yield client
