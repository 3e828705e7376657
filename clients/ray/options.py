"""How a run or a pool uses Ray: which cluster, how many environment actors, what each one reserves.

Plain data, importable without Ray installed (``RunConfig.ray`` holds one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RayOptions", "LOCAL"]

LOCAL = "local"
"""The ``address`` that starts a Ray cluster on this machine for the run (and stops it afterwards)."""


@dataclass(frozen=True)
class RayOptions:
    """Where and how many environment actors run.

    An actor hosts one environment's episodes (worlds, records, grading) and plays the built-in agents
    beside them; each reserves ``num_cpus`` of the cluster, and Ray places them (``SPREAD`` across nodes by
    default, or into the bundles of a placement group the caller made).
    """

    address: str = LOCAL
    """``local`` (a cluster started here for the run), ``auto`` (the cluster this machine belongs to, as
    ``ray start`` made it), or a cluster address (``10.0.0.5:6379``). Ignored when Ray is already
    initialised in this process (inside a Ray job or task)."""
    actors: int | None = None
    """Environment actors; None: one per CPU the cluster has available (at least one)."""
    num_cpus: float = 1.0
    """CPUs each actor reserves: an actor runs its episodes on one event loop, so one core is what it uses."""
    resources: Mapping[str, float] = field(default_factory=dict)
    """Custom resources each actor needs (e.g. ``{"toolgym": 1}`` to keep actors on nodes started with it)."""
    episodes_per_actor: int = 4
    """Episodes in flight per actor when the run gives no ``concurrency``: a few keep an actor busy while
    results travel back."""
    runtime_env: Mapping[str, Any] | None = None
    """Ray runtime environment for the actors (``ray.init(runtime_env=...)``), e.g. ``{"working_dir": "."}``
    when the nodes do not have this checkout installed. Used only when this process starts or joins the cluster."""
    start_timeout: float = 180.0
    """Seconds to wait for every actor to start (a cluster short of CPUs leaves actors pending)."""
