"""toolgym environments for TRL's ``GRPOTrainer``, over a running toolgym server.

::

    from trl import GRPOConfig, GRPOTrainer
    from toolgym_trl import toolgym_dataset, toolgym_environment

    server = "http://127.0.0.1:8000"                      # toolgym serve finance --transport http; $TOOLGYM_TOKEN
    trainer = GRPOTrainer(
        model="Qwen/Qwen3-0.6B", args=GRPOConfig(...),
        train_dataset=toolgym_dataset(server, "split:train", "0-99"),
        environment_factory=toolgym_environment(server),  # one toolgym episode per rollout; reward = its grade
    )

TRL's environment interface (``environment_factory``): each rollout gets an instance, ``reset`` opens its
episode, the tools are the instance's methods, ``get_reward`` is the grade (:mod:`toolgym_trl.environment`).
``toolgym-trl-example`` trains a tiny model made at run time for a few steps on CPU (:mod:`toolgym_trl.example`).
"""

from toolgym_trl.dataset import instructions_of, toolgym_dataset
from toolgym_trl.environment import ToolgymEnvironment, toolgym_environment

__all__ = ["toolgym_environment", "toolgym_dataset", "instructions_of", "ToolgymEnvironment"]
