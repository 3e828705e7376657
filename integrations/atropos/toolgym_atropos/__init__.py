"""toolgym as an Atropos environment (``atroposlib``'s ``BaseEnv``), over a running toolgym server.

Rollouts are toolgym episodes played by the configured OpenAI-compatible inference server and scored by
toolgym's grade; ``toolgym-atropos process`` writes scored groups without Atropos's API server, ``serve``
feeds a trainer through it. See :mod:`toolgym_atropos.env`.
"""

from toolgym_atropos.config import ToolgymEnvConfig
from toolgym_atropos.env import ToolgymEnv, main
from toolgym_atropos.rollout import Rollout, RolloutFailed, Toolset, play
from toolgym_atropos.tokens import tokens_and_masks

__all__ = ["ToolgymEnv", "ToolgymEnvConfig", "Rollout", "RolloutFailed", "Toolset", "play", "tokens_and_masks", "main"]
