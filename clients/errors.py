"""Errors of the client side: a run that cannot start or continue, and infrastructure failures of one episode.

Two families, kept apart on purpose (decision 9 of the design):

- :class:`RunError` — the *caller* asked for something impossible (unknown agent spec, unknown task
  selector, corrupt results file, unreachable server, an output folder that would be overwritten). The
  run stops before doing damage, with a message naming the thing and the fix.
- :class:`InfrastructureError` — one episode could not be run for a reason that is not the agent's fault
  (the LLM API failed after retries, the MCP connection dropped, the kit crashed). The runner records the
  episode as *errored* with an error class, retries it a bounded number of times, and never scores it.
"""

from __future__ import annotations

from typing import Literal

from fixtures.errors import ToolgymError

__all__ = ["RunError", "AgentSpecError", "InfrastructureError", "ProviderError", "InfraClass"]

InfraClass = Literal["provider", "connection", "internal", "grading", "agent"]
"""Why an episode errored: the LLM provider, the MCP/HTTP connection, a kit bug inside a tool, the
grader, or a crash in the agent's own code (ours, so never blamed on the model)."""


class RunError(ToolgymError):
    """A run cannot start or continue as asked; nothing was overwritten."""


class AgentSpecError(RunError):
    """An ``--agent`` spec string names no agent kind, or is missing its argument."""


class InfrastructureError(ToolgymError):
    """An episode failed for a reason outside the agent's control (recorded, retried, never scored).

    Args:
        error_class: which part of the infrastructure failed.
        message: what happened, for the results file.
    """

    def __init__(self, error_class: InfraClass, message: str) -> None:
        super().__init__(message)
        self.error_class: InfraClass = error_class
        self.message = message


class ProviderError(InfrastructureError):
    """The LLM API failed (after the bounded retries), or answered something unusable."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__("provider", message)
        self.status = status
