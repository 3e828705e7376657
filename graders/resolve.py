"""Finding an environment from what a user typed: a registered name, or ``module:attribute`` for one elsewhere.

``toolgym check finance`` loads ``envs.finance``; ``toolgym check mypkg.bank:environment`` (or a test's own
toy environment) imports that module — from the current folder too, as ``python -m`` would — and takes the
attribute, so environments outside ``envs/`` can be checked and tested with the same tools.
"""

from __future__ import annotations

import importlib
import os
import sys

from fixtures.errors import EnvironmentNotFound
from servers.environment import Environment
from servers.registry import load_environment

__all__ = ["resolve_environment"]


def resolve_environment(ref: str | Environment) -> Environment:
    """The environment named by ``ref`` (an Environment passes through).

    Raises:
        EnvironmentNotFound: no such registered name, module or attribute, or it is not an Environment.
    """
    if isinstance(ref, Environment):
        return ref
    if ":" not in ref:
        return load_environment(ref)
    module_name, _, attr = ref.partition(":")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` and uvicorn do: modules of the current folder are found
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise EnvironmentNotFound(f"cannot import module {module_name!r} for environment {ref!r}: {exc}") from exc
    value = getattr(module, attr or "environment", None)
    if not isinstance(value, Environment):
        raise EnvironmentNotFound(f"{ref!r}: module {module_name!r} has no Environment named {attr or 'environment'!r}")
    return value
