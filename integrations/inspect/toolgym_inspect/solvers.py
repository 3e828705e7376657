"""The behaviour half: one toolgym episode per sample, its tools given to the model over MCP.

- :func:`toolgym_episode` (the task's ``setup``, so it runs even when ``--solver`` replaces the agent) opens
  the sample's episode and gives the model the episode's tools through inspect's own MCP client
  (``mcp_server_http`` on the episode's endpoint); the control token never leaves this process.
- :func:`toolgym_agent` (the default solver) is the loop toolgym's own LLM agent runs: generate, run the
  tool calls, until the model answers without a tool call, a call of the answer tool succeeds, or
  ``max_turns`` model calls are used.
"""

from __future__ import annotations

from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import mcp_server_http
from toolgym_remote import ControlClient, RemoteError

from toolgym_inspect.dataset import METADATA_KEY

__all__ = ["toolgym_episode", "toolgym_agent", "EPISODE_KEY", "FINISHED_KEY", "DEFAULT_MAX_TURNS"]

EPISODE_KEY = "toolgym:episode_id"
"""Where a sample's episode id is kept (``state.store``)."""
FINISHED_KEY = "toolgym:finished"
"""Set once the scorer has closed and graded the episode."""
DEFAULT_MAX_TURNS = 30
"""Model calls per episode (toolgym's own agents' default)."""


@solver
def toolgym_episode(server: str, token_variable: str = "TOOLGYM_TOKEN", mcp_timeout: float = 60.0) -> Solver:
    """Open the sample's toolgym episode and give the model its tools over MCP.

    Args:
        server: the toolgym server's base URL.
        token_variable: environment variable holding the control token (read here, never shown to the model).
        mcp_timeout: seconds for each MCP HTTP operation.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        instance = state.metadata[METADATA_KEY]
        async with ControlClient(server, token_variable=token_variable) as control:
            created = await control.create(instance["template"], int(instance["seed"]))
        state.store.set(EPISODE_KEY, created.id)
        if created.prompt != state.user_prompt.text:
            raise RemoteError(
                f"episode {created.id} of {instance['template']}#{instance['seed']} shows another prompt than the sample "
                "read when the dataset was built: the server's environment changed since (restart the evaluation)"
            )
        tools = mcp_server_http(name=instance["env"], url=created.mcp_url, timeout=mcp_timeout)
        state.tools = await tools.tools()
        return state

    return solve


@solver
def toolgym_agent(answer_tools: list[str] | None = None, max_turns: int = DEFAULT_MAX_TURNS) -> Solver:
    """Play the episode: generate and run tool calls until the agent is done (see the module docstring).

    Args:
        answer_tools: tools whose successful call ends the episode (the environment's ``submit_answer``).
        max_turns: most model calls.
    """
    ends = set(answer_tools or ())

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        for _ in range(max_turns):
            state = await generate(state, tool_calls="single")
            message = state.output.message
            if not message.tool_calls or _answered(state, message, ends):
                break
        return state

    return solve


def _answered(state: TaskState, message: ChatMessageAssistant, ends: set[str]) -> bool:
    """Whether a call of an answer tool in ``message`` succeeded (its tool message carries no error)."""
    calls = {call.id for call in message.tool_calls or () if call.function in ends}
    return any(
        isinstance(m, ChatMessageTool) and m.tool_call_id in calls and m.error is None for m in state.messages
    )
