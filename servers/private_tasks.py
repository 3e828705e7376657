"""Private task templates: a held-out test split kept outside the package, loaded by whoever runs the tasks.

Templates inside an installed environment are readable by everyone who has the package, and so by an agent
author who wants to study them. An evaluation suite that must keep its tasks secret keeps them apart —
a folder (or an installed package) that only the runner's user reads — and names it when it runs:
``toolgym run ENV --private-tasks PATH`` (the same for ``toolgym check`` and ``toolgym serve``). The kit
merges them into the environment's templates; an environment needs nothing special for it.

A source is:

- a folder: every module in it whose name does not start with ``_`` contributes its ``TEMPLATES`` list;
  modules of the folder may import each other relatively (``from ._common import ...``), as in ``envs/*/tasks/``;
- a ``.py`` file: its ``TEMPLATES``;
- a dotted module name (an installed package): its ``TEMPLATES``.

The sandbox of ``cmd:`` agents hides every source folder (``clients/sandbox.py``).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from fixtures.errors import TaskError

if TYPE_CHECKING:
    from servers.environment import Environment

__all__ = ["load_private_templates", "with_private_tasks"]


def _package_name(folder: Path) -> str:
    """A module name of its own for a folder of templates (the same folder gets the same name)."""
    return f"_toolgym_private_{hashlib.sha1(str(folder).encode()).hexdigest()[:12]}"


def _folder_package(folder: Path) -> str:
    name = _package_name(folder)
    if name not in sys.modules:
        package = ModuleType(name)
        package.__path__ = [str(folder)]
        package.__spec__ = ModuleSpec(name, None, is_package=True)
        package.__spec__.submodule_search_locations = [str(folder)]
        sys.modules[name] = package
    return name


def _templates_of(module: ModuleType, where: str) -> list[Any]:
    templates = getattr(module, "TEMPLATES", None)
    if templates is None:
        return []
    if not isinstance(templates, (list, tuple)):
        raise TaskError(f"private tasks {where}: TEMPLATES must be a list of task templates")
    return list(templates)


def _import(name: str, where: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except TaskError:
        raise
    except Exception as exc:  # the private module's own failure, named as such
        raise TaskError(f"private tasks {where}: cannot import {name!r} ({type(exc).__name__}: {exc})") from exc


def load_private_templates(source: str | Path) -> list[Any]:
    """The task templates a private source holds (see the module docstring for what a source is).

    Raises:
        TaskError: the source does not exist, does not import, or holds no template.
    """
    text = str(source)
    path = Path(text).expanduser()
    if path.is_dir():
        folder = path.resolve()
        package = _folder_package(folder)
        templates: list[Any] = []
        for file in sorted(folder.glob("*.py")):
            if not file.stem.startswith("_"):
                templates += _templates_of(_import(f"{package}.{file.stem}", text), f"{text}/{file.name}")
    elif path.suffix == ".py" and path.is_file():
        folder = path.resolve().parent
        templates = _templates_of(_import(f"{_folder_package(folder)}.{path.stem}", text), text)
    elif "/" not in text and not text.endswith(".py") and importlib.util.find_spec(text.split(".")[0]) is not None:
        templates = _templates_of(_import(text, text), text)
    else:
        raise TaskError(f"private tasks {text}: no such folder, .py file or installed module")
    if not templates:
        raise TaskError(f"private tasks {text}: no module there defines TEMPLATES")
    return templates


def with_private_tasks(environment: Environment, sources: Sequence[str | Path]) -> Environment:
    """``environment`` with the templates of ``sources`` added after its own (itself when there are none).

    Raises:
        TaskError: a source cannot be loaded, or a private template's id is already taken.
    """
    if not sources:
        return environment
    templates = list(environment.task_templates().values())
    for source in sources:
        templates += load_private_templates(source)
    return environment.with_templates(templates)
