"""Long-horizon workspace templates: where the request is carried out, the oracle takes 10 to 20 calls."""

from __future__ import annotations

from envs.workspace import environment
from envs.workspace.tasks import TEMPLATES

LONG = [t for t in TEMPLATES if "long_horizon" in t.tags]


def test_enough_long_horizon_templates() -> None:
    assert len(LONG) >= 5, [t.id for t in LONG]


def test_long_horizon_oracles_take_10_to_20_calls() -> None:
    for template in LONG:
        lengths = []
        for seed in range(8):
            world, instance = environment.instantiate_task(template.id, seed)
            world.release()
            if instance.outcome is not None and instance.outcome.outcome != "refused":
                lengths.append(len(instance.oracle))
        assert lengths, f"{template.id}: no seed of 0-7 carries the request out"
        assert all(10 <= n <= 20 for n in lengths), f"{template.id}: oracle lengths {lengths}"
