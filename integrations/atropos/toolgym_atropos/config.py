"""The environment's configuration: Atropos's own ``BaseEnvConfig`` plus which toolgym server and tasks to use.

Every field is a CLI flag of Atropos's ``serve`` / ``process`` / ``evaluate`` commands (``--env.server``,
``--env.tasks``...) and a key of its YAML config (``env:``), as Atropos's config classes make them.
"""

from __future__ import annotations

import os

from atroposlib.envs.base import BaseEnvConfig
from pydantic import Field

__all__ = ["ToolgymEnvConfig"]


class ToolgymEnvConfig(BaseEnvConfig):
    """``BaseEnvConfig`` (group size, tokenizer, output paths...) and the toolgym server's tasks."""

    server: str = Field(
        default_factory=lambda: os.environ.get("TOOLGYM_URL", "http://127.0.0.1:8000"),
        description="Base URL of the running toolgym server (default $TOOLGYM_URL, else http://127.0.0.1:8000)",
    )
    token_variable: str = Field(default="TOOLGYM_TOKEN", description="Environment variable holding the control token")
    tasks: str | None = Field(
        default=None, description="Training tasks: template ids, split:X, tag:Y, comma-separated (default: every task)"
    )
    seeds: str = Field(default="0-99", description="Training task seeds, e.g. 0,1,2 or 0-99")
    eval_tasks: str = Field(default="split:test", description="Evaluation tasks (the `evaluate` command, steps_per_eval)")
    eval_seeds: str = Field(default="1000-1004", description="Evaluation task seeds (held out from training by default)")
    max_turns: int = Field(default=30, ge=1, description="Model calls per episode")
    max_tokens_per_turn: int | None = Field(default=None, description="max_tokens of each model call (default: the server's)")
    temperature: float = Field(default=1.0, ge=0.0, description="Sampling temperature of rollouts")
    records_dir: str | None = Field(
        default=None,
        description="Folder to write each rollout's toolgym record into (`toolgym grade FOLDER` grades them again); "
        "none by default",
    )
    max_failed_groups: int = Field(
        default=5, ge=1, description="Consecutive groups lost to infrastructure failures before the environment stops"
    )
