"""Finding environments by name without importing all of them up front.

Two sources, both listed without importing any environment's code:

- **Folders**: a package ``envs/<name>/`` whose ``__init__`` defines ``environment``.
- **Installed packages**: an entry point in the ``toolgym.environments`` group, so ``pip install some-env``
  makes ``toolgym run some-env`` work. Its name is the environment's name; its value names the module and,
  optionally, the attribute holding the ``Environment`` (``some_env`` or ``some_env:environment``)::

      [project.entry-points."toolgym.environments"]
      some-env = "some_env:environment"

Loading imports exactly the one asked for. A folder wins over an installed package of the same name; two
installed packages claiming one name, or an entry point that does not import or does not give an
``Environment`` of its own name, is an :class:`EnvironmentNotFound` that names the package and the fix.
"""

from __future__ import annotations

import importlib
import pkgutil
from importlib.metadata import EntryPoint, entry_points

from fixtures.errors import EnvironmentNotFound
from servers.environment import Environment

__all__ = ["ENTRY_POINT_GROUP", "environment_names", "installed_environments", "load_environment"]

ENTRY_POINT_GROUP = "toolgym.environments"
"""Entry-point group through which installed packages register environments."""


def _folder_names() -> list[str]:
    import envs

    return sorted(m.name for m in pkgutil.iter_modules(envs.__path__) if m.ispkg and not m.name.startswith("_"))


def installed_environments() -> dict[str, list[EntryPoint]]:
    """Entry points of the ``toolgym.environments`` group by environment name (nothing is imported).

    A name maps to several entry points only when several installed packages claim it.
    """
    found: dict[str, list[EntryPoint]] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if any(point.value == seen.value for seen in found.get(point.name, [])):
            continue  # one distribution seen twice on sys.path (e.g. an editable install and its build dir)
        found.setdefault(point.name, []).append(point)
    return found


def environment_names() -> list[str]:
    """Names of every environment: folders under ``envs/`` and installed packages, sorted (no imports)."""
    return sorted(set(_folder_names()) | set(installed_environments()))


def load_environment(name: str) -> Environment:
    """Import the environment ``name`` (a folder under ``envs/``, else an installed package) and return it.

    Raises:
        EnvironmentNotFound: no such environment; or it defines no ``environment``; or its package's entry
            point is ambiguous, does not import, or does not give an ``Environment`` named ``name``.
    """
    if name in _folder_names():
        module = importlib.import_module(f"envs.{name}")
        environment = getattr(module, "environment", None)
        if not isinstance(environment, Environment):
            raise EnvironmentNotFound(f"envs/{name}/__init__.py defines no 'environment = Environment(...)'")
        return environment
    points = installed_environments().get(name)
    if not points:
        names = environment_names()
        raise EnvironmentNotFound(f"no environment {name!r}; available: {', '.join(names) or 'none'}")
    if len(points) > 1:
        owners = ", ".join(f"{_owner(p)} ({p.value})" for p in points)
        raise EnvironmentNotFound(
            f"environment {name!r} is registered by several installed packages: {owners}; uninstall all but one"
        )
    return _load_entry_point(name, points[0])


def _owner(point: EntryPoint) -> str:
    """The distribution that declared ``point``, for error messages."""
    dist = getattr(point, "dist", None)
    return f"package {dist.name!r}" if dist is not None else "an installed package"


def _load_entry_point(name: str, point: EntryPoint) -> Environment:
    where = f"{_owner(point)}, entry point {ENTRY_POINT_GROUP}:{name} = {point.value!r}"
    try:
        loaded = point.load()
    except Exception as exc:  # an installed package's import failure must read as its problem, not ours
        raise EnvironmentNotFound(
            f"environment {name!r} cannot be imported ({where}): {type(exc).__name__}: {exc}; "
            "reinstall the package or fix its module"
        ) from exc
    environment = loaded if point.attr else getattr(loaded, "environment", None)
    if not isinstance(environment, Environment):
        target = point.value if point.attr else f"{point.value}.environment"
        raise EnvironmentNotFound(
            f"environment {name!r}: {target} is not a toolgym Environment ({where}); point the entry point at "
            "the module's `environment = Environment(...)`"
        )
    if environment.name != name:
        raise EnvironmentNotFound(
            f"environment {name!r}: the package's Environment is named {environment.name!r} ({where}); the entry "
            "point's name must equal Environment.name, since records and results refer to it by name"
        )
    return environment
