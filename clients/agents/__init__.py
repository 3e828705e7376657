"""Agents: what plays an episode. Build one from a spec string with :func:`make_agent`.

Spec strings (the ``--agent`` flag)::

    oracle                  the task's reference solution
    noop                    does nothing (every task must fail it)
    replay:PATH             a record file, or a run folder, played back
    openai:MODEL            any OpenAI-compatible chat-completions endpoint
    anthropic:MODEL         the Anthropic Messages API
    cmd:COMMAND ARGS...     an external program given the episode's MCP URL
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clients.agents.base import Agent, AgentResult, AgentSession, Limits, ToolResult, openai_tool
from clients.errors import AgentSpecError

__all__ = ["Agent", "AgentSession", "AgentResult", "Limits", "ToolResult", "AgentOptions", "make_agent", "AGENT_KINDS", "openai_tool"]

AGENT_KINDS = ("oracle", "noop", "replay:PATH", "openai:MODEL", "anthropic:MODEL", "cmd:COMMAND")


@dataclass(frozen=True)
class AgentOptions:
    """Settings for the LLM and external agents (flags of ``toolgym run``; None = env var or default)."""

    base_url: str | None = None
    api_key: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    system_prompt: str | None = None
    log_dir: Path | None = None
    sandbox: str = "auto"
    """How ``cmd:`` agents are confined: ``auto`` (bubblewrap, else refuse), ``bwrap`` or ``none`` (clients/sandbox.py)."""
    sandbox_binds: tuple[str, ...] = ()
    """``PATH`` / ``PATH:ro`` made visible inside a ``cmd:`` agent's sandbox (its config, its tools)."""
    hidden: tuple[Path, ...] = ()
    """Paths no ``cmd:`` agent may see besides the kit's own: the run folder, the run's task template sources."""


def make_agent(spec: str, options: AgentOptions | None = None) -> Agent:
    """Build the agent a spec string names.

    Raises:
        AgentSpecError: unknown kind (the message lists the kinds), or a missing / unusable argument.
    """
    options = options or AgentOptions()
    kind, sep, argument = spec.strip().partition(":")
    if kind == "oracle" and not sep:
        from clients.agents.oracle import OracleAgent

        return OracleAgent()
    if kind == "noop" and not sep:
        from clients.agents.noop import NoopAgent

        return NoopAgent()
    if kind == "replay":
        from clients.agents.replay import ReplayAgent

        return ReplayAgent(argument)
    if kind in ("openai", "anthropic"):
        llm_options = dict(
            base_url=options.base_url,
            api_key=options.api_key,
            temperature=options.temperature,
            max_tokens=options.max_tokens,
            system_prompt=options.system_prompt,
        )
        if kind == "openai":
            from clients.agents.openai import OpenAIAgent

            return OpenAIAgent(argument or None, **llm_options)
        from clients.agents.anthropic import AnthropicAgent

        return AnthropicAgent(argument or None, **llm_options)
    if kind == "cmd":
        from clients.agents.external import ExternalAgent

        return ExternalAgent(
            argument, log_dir=options.log_dir, sandbox=options.sandbox, binds=options.sandbox_binds, hidden=options.hidden
        )
    raise AgentSpecError(f"unknown agent {spec!r}; agents: {', '.join(AGENT_KINDS)}")
