"""The behaviour half: one rollout = one toolgym episode, its MCP endpoint the agent's only tool server."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import verifiers.v1 as vf
from toolgym_remote import ControlClient, EpisodeSession
from verifiers.v1.mcp import SharedToolServer

from toolgym_verifiers.criteria import CriteriaTally
from toolgym_verifiers.taskset import TASKSET_ID, ToolgymTask, ToolgymTasksetConfig

__all__ = ["ToolgymEnv", "ToolgymEnvConfig", "load_environment"]

log = logging.getLogger("verifiers.v1.toolgym")
"""Under verifiers' library logger, so vf-eval routes it like its own (console with ``--no-rich``, and its log file)."""


class ToolgymEnvConfig(vf.EnvConfig):
    """The single ``agent`` seat; by default verifiers' ``null`` harness (a tool-calling chat loop that runs
    no code) in a local subprocess, since the episode's MCP endpoint is usually on loopback."""

    taskset: ToolgymTasksetConfig = ToolgymTasksetConfig()
    agent: vf.AgentConfig = vf.AgentConfig(harness={"id": "null"}, runtime=vf.SubprocessConfig())
    toolset_name: str = ""
    """Name of the episode's tool server as the harness sees it. Empty: the model sees toolgym's own tool
    names (``submit_answer``), which the instructions and the policy refer to; a name prefixes them."""


class ToolgymEnv(vf.Env[ToolgymEnvConfig]):
    """Opens a toolgym episode per rollout, runs the agent on it, and always releases it; when the evaluation
    ends, logs each criterion's mean over the rollouts where it applied (vf-eval's dashboard averages every
    metric over all rollouts, an absent one as 0)."""

    def __init__(self, config: ToolgymEnvConfig) -> None:
        super().__init__(config)
        self._instructions: str | None = None
        self.criteria = CriteriaTally()
        """Every scored rollout's criterion metrics, for the summary logged at the end."""

    async def finalize(self, task: vf.Task, episode: vf.Episode) -> None:  # type: ignore[override]
        """Tally the episode's criterion metrics (its traces are scored by now)."""
        for trace in episode.traces:
            self.criteria.add(trace.metrics)

    async def stop(self) -> None:
        """Log the criteria summary (see :mod:`toolgym_verifiers.criteria`)."""
        if self.criteria.rollouts:
            for line in self.criteria.lines():
                log.info("%s", line)
        await super().stop()

    async def _instructions_for(self, mcp_url: str) -> str:
        """The environment's instructions (the MCP server's), read once: the same for every episode."""
        if self._instructions is None:
            async with EpisodeSession(mcp_url) as session:
                self._instructions = session.instructions
        return self._instructions

    async def run(self, task: ToolgymTask, agents: vf.Agents) -> None:  # type: ignore[override]
        data = task.data
        async with ControlClient(data.server, token_variable=data.token_variable) as control:
            created = await control.create(data.task, data.seed)
            try:
                instructions = await self._instructions_for(created.mcp_url)
                rollout = task.with_data(prompt=created.prompt, system_prompt=instructions or None, episode_id=created.id)
                server = SharedToolServer(url=created.mcp_url, local=True, external=True)
                await agents.agent.run(rollout, tools={self.config.toolset_name: server})
            finally:
                # Scoring already finished (and released) it; this frees the world when the rollout failed first.
                await control.release(created.id)


def load_environment(
    server: str | None = None, tasks: str | None = None, seeds: Sequence[int] = (0,), token_variable: str = "TOOLGYM_TOKEN"
) -> ToolgymEnv:
    """The verifiers environment of a running toolgym server, from Python (``vf-eval`` builds the same).

    Args:
        server: the server's base URL (default ``$TOOLGYM_URL``, else ``http://127.0.0.1:8000``).
        tasks: task selector (ids, ``split:X``, ``tag:Y``; default all).
        seeds: task seeds; every selected template gives one task per seed.
    """
    options: dict[str, object] = {"id": TASKSET_ID, "tasks": tasks, "seeds": list(seeds), "token_variable": token_variable}
    if server is not None:
        options["server"] = server
    return ToolgymEnv(ToolgymEnvConfig(taskset=ToolgymTasksetConfig(**options)))
