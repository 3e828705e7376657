"""Finding environments by name without importing all of them up front.

An environment is a package ``envs/<name>/`` whose ``__init__`` defines ``environment``. Listing names
only scans the folder; loading imports exactly the one asked for.
"""

from __future__ import annotations

import importlib
import pkgutil

from fixtures.errors import EnvironmentNotFound
from servers.environment import Environment

__all__ = ["environment_names", "load_environment"]


def environment_names() -> list[str]:
    """Names of the environments under ``envs/``, sorted (no imports of their code)."""
    import envs

    return sorted(m.name for m in pkgutil.iter_modules(envs.__path__) if m.ispkg and not m.name.startswith("_"))


def load_environment(name: str) -> Environment:
    """Import ``envs.<name>`` and return its ``environment``.

    Raises:
        EnvironmentNotFound: no such package, or it defines no ``environment``.
    """
    names = environment_names()
    if name not in names:
        raise EnvironmentNotFound(f"no environment {name!r}; available: {', '.join(names) or 'none'}")
    module = importlib.import_module(f"envs.{name}")
    environment = getattr(module, "environment", None)
    if not isinstance(environment, Environment):
        raise EnvironmentNotFound(f"envs/{name}/__init__.py defines no 'environment = Environment(...)'")
    return environment
