"""What a run runs: the environment (a name, or ``module:attribute``), task selectors (``ids``, ``tag:X``,
``split:Y``) and seed lists (``0,1,2``, ``0-4``).

Every selector is checked against the environment before any episode starts, so a typo is a clear error
naming what exists rather than a run of nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence

from clients.errors import RunError
from fixtures.errors import EnvironmentNotFound
from servers.environment import Environment
from servers.registry import load_environment

__all__ = ["resolve_environment", "select_tasks", "parse_seeds", "template_tags", "template_split"]


def resolve_environment(spec: str | Environment) -> Environment:
    """The environment named ``spec``: a name under ``envs/``, or ``package.module:attribute`` for one
    that lives elsewhere (an environment being developed outside this repository, a test's toy).

    Raises:
        RunError: no such environment, module or attribute, or the attribute is not an Environment.
    """
    if isinstance(spec, Environment):
        return spec
    if ":" not in spec:
        try:
            return load_environment(spec)
        except EnvironmentNotFound as exc:
            raise RunError(str(exc)) from None
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise RunError(f"environment {spec!r}: cannot import module {module_name!r} ({exc})") from None
    found = getattr(module, attribute or "environment", None)
    if not isinstance(found, Environment):
        raise RunError(f"environment {spec!r}: {module_name}.{attribute or 'environment'} is not an Environment")
    return found


def template_tags(template: object) -> set[str]:
    """The tags a task template declares (none when it declares none)."""
    tags = getattr(template, "tags", None) or ()
    return {str(t) for t in tags}


def template_split(template: object) -> str | None:
    """The split a task template belongs to (``train``, ``test``...), if it declares one."""
    split = getattr(template, "split", None)
    return None if split is None else str(split)


def select_tasks(environment: Environment, selector: str | Sequence[str] | None) -> list[str]:
    """Task template ids of ``environment`` named by ``selector``, in the environment's order.

    ``None`` (or ``all``) selects every template. A string is a comma-separated union of ids, ``tag:X`` and
    ``split:Y`` terms.

    Raises:
        RunError: the environment has no tasks, a term names nothing, or an id is unknown.
    """
    templates = environment.task_templates()
    if not templates:
        raise RunError(f"environment {environment.name!r} has no task templates to run")
    order = list(templates)
    if selector is None:
        return order
    terms: Iterable[str] = selector.split(",") if isinstance(selector, str) else selector
    chosen: set[str] = set()
    for raw in terms:
        term = raw.strip()
        if not term:
            continue
        if term == "all":
            chosen.update(order)
        elif term.startswith("tag:"):
            tag = term[4:]
            hits = {tid for tid, t in templates.items() if tag in template_tags(t)}
            if not hits:
                known = sorted(set().union(*(template_tags(t) for t in templates.values())))
                raise RunError(f"no task of {environment.name!r} has tag {tag!r}; tags: {', '.join(known) or 'none'}")
            chosen.update(hits)
        elif term.startswith("split:"):
            split = term[6:]
            hits = {tid for tid, t in templates.items() if template_split(t) == split}
            if not hits:
                known = sorted({s for t in templates.values() if (s := template_split(t)) is not None})
                raise RunError(f"no task of {environment.name!r} is in split {split!r}; splits: {', '.join(known) or 'none'}")
            chosen.update(hits)
        elif term in templates:
            chosen.add(term)
        else:
            shown = ", ".join(order[:10]) + (", ..." if len(order) > 10 else "")
            raise RunError(f"environment {environment.name!r} has no task {term!r}; tasks: {shown} (`toolgym tasks {environment.name}`)")
    if not chosen:
        raise RunError(f"--tasks {selector!r} selects no task")
    return [tid for tid in order if tid in chosen]


def parse_seeds(text: str | Sequence[int]) -> list[int]:
    """Seeds from ``0,1,2``, ``0-4`` or a mix (``0-2,7``); duplicates dropped, order kept.

    Raises:
        RunError: a term is not a non-negative integer or an ascending range.
    """
    if not isinstance(text, str):
        seeds = list(text)
    else:
        seeds = []
        for raw in text.split(","):
            term = raw.strip()
            if not term:
                continue
            low, dash, high = term.partition("-")
            try:
                if dash:
                    start, stop = int(low), int(high)
                    if stop < start:
                        raise ValueError
                    seeds.extend(range(start, stop + 1))
                else:
                    seeds.append(int(term))
            except ValueError:
                raise RunError(f"--seeds: {term!r} is not a seed or an ascending range like 0-4") from None
    if not seeds:
        raise RunError("--seeds selects no seed")
    if any(s < 0 for s in seeds):
        raise RunError("--seeds: seeds are non-negative integers")
    return list(dict.fromkeys(seeds))
