"""The toy bank plus ``crunch``, a tool that holds the event loop for as long as it is told: a server whose loop is
slow (many crunches in a row, requests still answered) or stuck (one long crunch), on demand.

``python -m tests.faults.busy_env serve ...`` serves it like any environment.
"""

from __future__ import annotations

import time
from typing import Annotated

from pydantic import Field

from servers.cli import serve_main
from servers.environment import Environment
from servers.tools import ToolContext, tool
from tests.toy_env import environment as toy
from tests.toy_env.tools import TOOLS

__all__ = ["environment"]


@tool(pure=False)  # it must really hold the loop every time
async def crunch(ctx: ToolContext, ms: Annotated[int, Field(ge=0, le=60_000)]) -> str:
    """Hold the event loop for ``ms`` milliseconds (what CPU-bound work on a starved core looks like to the loop)."""
    time.sleep(ms / 1000)  # noqa: ASYNC251 - blocking the loop is this tool's whole purpose
    return "done"


environment = Environment(
    name="busy", description="The toy bank plus a tool that holds the event loop (kit tests only).",
    fixture=toy.fixture, tools=[*TOOLS, crunch],
)

if __name__ == "__main__":
    serve_main(environment)
