"""Environments as Ray actors: large evaluations and RL trainers past one process and one machine.

One Python process uses one core; more cores and more machines come from environment actors on Ray (the
engine LLM RL trainers already run on), never from a scheduler of our own. Needs the ``toolgym[ray]`` extra;
nothing outside this package imports Ray.

- :class:`EnvironmentActor` (``actor.py``): a Ray actor hosting one environment's episodes — worlds,
  records, grading — with coarse methods (one call per episode step) and, on request, MCP over HTTP on its
  node for agents that speak MCP themselves.
- :class:`EnvPool` (``pool.py``): actors placed by Ray (resources, placement groups, ``SPREAD``), restarted
  or replaced when they die, handing out :class:`RemoteEpisode` objects (``episode.py``) to trainers.
- ``runs.py``: ``toolgym run --ray`` — the runner's attempts played on the actors, results streamed back
  to the driver, which writes results, records and the summary exactly as a local run does.
- :class:`RayOptions` (``options.py``): which cluster, how many actors, what each reserves (no Ray import).

Names are imported on first use, so ``from clients.ray import RayOptions`` works without Ray installed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clients.ray.actor import EnvironmentActor
    from clients.ray.episode import EpisodeLost, RemoteEpisode
    from clients.ray.options import RayOptions
    from clients.ray.pool import EnvPool
    from clients.ray.runs import connect

__all__ = ["EnvPool", "RemoteEpisode", "EpisodeLost", "EnvironmentActor", "RayOptions", "connect"]

_HOMES = {
    "EnvPool": "clients.ray.pool",
    "RemoteEpisode": "clients.ray.episode",
    "EpisodeLost": "clients.ray.episode",
    "EnvironmentActor": "clients.ray.actor",
    "RayOptions": "clients.ray.options",
    "connect": "clients.ray.runs",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'clients.ray' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
