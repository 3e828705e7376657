"""Errors of the client side: a run that cannot go on, an episode the infrastructure failed, an agent stopped.

Three families, kept apart on purpose (decision 9 of the design; the whole blame model is in
:mod:`clients.blame`):

- :class:`RunError` — the *caller* asked for something impossible (unknown agent spec, unknown task
  selector, corrupt results file, unreachable server, an output folder that would be overwritten). The
  run stops before doing damage, with a message naming the thing and the fix.
- :class:`InfrastructureError` — one episode could not be run for a reason that is not the agent's fault
  (the LLM API failed after retries or stalled past the episode's provider budget, the MCP connection
  dropped, the kit crashed). The runner records the episode as *errored* with an error class, re-runs it a
  bounded number of times when re-running can help, and never scores it.
- :class:`AgentStop` — the episode ends *now* for a reason that is the agent's own (a context overflow, a
  conversation the provider refuses because of the model's malformed output, an episode limit). It is
  graded as it stands, the reason reported as its stop reason, and never re-run.
"""

from __future__ import annotations

from typing import Literal

from fixtures.errors import ToolgymError

__all__ = [
    "RunError",
    "AgentSpecError",
    "InfrastructureError",
    "ProviderError",
    "ProviderTimeout",
    "AgentStop",
    "InfraClass",
    "INFRA_CLASSES",
]

InfraClass = Literal["provider", "provider_timeout", "connection", "internal", "grading", "kit"]
"""Why an episode errored (see :data:`INFRA_CLASSES`)."""

INFRA_CLASSES: dict[str, str] = {
    "provider": "the LLM provider failed after retries, refused our request as configured, or answered garbage",
    "provider_timeout": "the episode's time ran out while waiting on the LLM provider (requests, retries, Retry-After)",
    "connection": "the MCP or control connection to the episode dropped",
    "internal": "a tool of the environment crashed (a kit bug, recorded as such in the record)",
    "grading": "the grader failed on the episode (a kit bug: never re-run, counted in the headline)",
    "kit": "the agent's or the runner's own code crashed (ours, never the model's)",
}
"""Every error class an errored episode may carry, with what it blames."""


class RunError(ToolgymError):
    """A run cannot start or continue as asked; nothing was overwritten."""


class AgentSpecError(RunError):
    """An ``--agent`` spec string names no agent kind, or is missing its argument."""


class InfrastructureError(ToolgymError):
    """An episode failed for a reason outside the agent's control (recorded, never scored).

    Args:
        error_class: which part of the infrastructure failed.
        message: what happened, for the results file.
        retryable: whether running the episode again may succeed (a refused configuration will not).
    """

    def __init__(self, error_class: InfraClass, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.error_class: InfraClass = error_class
        self.message = message
        self.retryable = retryable


class ProviderError(InfrastructureError):
    """The LLM API failed (after the bounded retries), refused the request as configured, or answered garbage."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = True) -> None:
        super().__init__("provider", message, retryable=retryable)
        self.status = status


class ProviderTimeout(InfrastructureError):
    """The episode's provider budget (``Limits.provider_timeout``) ran out, or a wait asked for would exceed it."""

    def __init__(self, message: str) -> None:
        super().__init__("provider_timeout", message)


class AgentStop(ToolgymError):
    """Raised inside an agent's run: the episode ends here and is graded as it stands (never re-run).

    Args:
        reason: the stop reason reported in the results (``context_overflow``, ``model_output_rejected``,
            ``max_tool_calls`` ...).
        detail: what happened, for a reader of the results.
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
