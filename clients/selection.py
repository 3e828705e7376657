"""What a run runs: the environment (a name, or ``module:attribute``), task selectors (``ids``, ``tag:X``,
``split:Y``, ``verified``) and seed lists (``0,1,2``, ``0-4``).

Every selector is checked against the environment before any episode starts, so a typo is a clear error
naming what exists rather than a run of nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator, Sequence

from clients.errors import RunError
from clients.validation import validation_path, verified_templates
from fixtures.errors import EnvironmentNotFound
from servers.environment import Environment
from servers.registry import load_environment

__all__ = ["resolve_environment", "select_tasks", "parse_seeds", "Seeds", "MAX_SEED", "template_tags", "template_split"]


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

    ``None`` (or ``all``) selects every template. A string is a comma-separated union of ids, ``tag:X``,
    ``split:Y`` and ``verified`` terms; ``verified`` names the templates the environment's validation file
    vouches for (played without the oracle, judged fair, no open defect: ``clients/validation.py``).

    Raises:
        RunError: the environment has no tasks, a term names nothing, or an id is unknown; a malformed
            validation file (``ValidationFileError``, naming its line).
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
        elif term == "verified":
            hits = verified_templates(environment)
            if not hits:
                where = validation_path(environment) or "(this environment has no package folder for one)"
                raise RunError(
                    f"no task of {environment.name!r} is verified yet (validation file: {where}); play one with "
                    f"`toolgym play {environment.name} --task ID --seed N --validate --player NAME`"
                )
            chosen.update(hits)
        elif term in templates:
            chosen.add(term)
        else:
            shown = ", ".join(order[:10]) + (", ..." if len(order) > 10 else "")
            raise RunError(f"environment {environment.name!r} has no task {term!r}; tasks: {shown} (`toolgym tasks {environment.name}`)")
    if not chosen:
        raise RunError(f"--tasks {selector!r} selects no task")
    return [tid for tid in order if tid in chosen]


MAX_SEED = 2**63 - 1
"""Largest seed: a 64-bit signed integer, as SQLite and every record reader store it."""


class Seeds:
    """A run's seeds as ranges, in the order given, each seed once: ``0-99999999`` costs a few bytes, never a
    list of a hundred million integers (``toolgym run --seeds`` once ate 6 GB planning such a range).

    Iterating yields the seeds lazily; ``len`` and ``in`` are arithmetic.
    """

    def __init__(self, parts: Iterable[range]) -> None:
        self.parts: tuple[range, ...] = tuple(part for part in parts if len(part))
        self._len = sum(len(part) for part in self.parts)

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[int]:
        for part in self.parts:
            yield from part

    def __contains__(self, seed: object) -> bool:
        return isinstance(seed, int) and any(seed in part for part in self.parts)

    def __repr__(self) -> str:
        shown = ",".join(str(p.start) if len(p) == 1 else f"{p.start}-{p.stop - 1}" for p in self.parts[:8])
        return f"Seeds({shown}{',...' if len(self.parts) > 8 else ''})"


def _without(part: range, taken: list[range]) -> list[range]:
    """``part`` minus every range in ``taken`` (all with step 1), as ascending ranges."""
    pieces = [part]
    for other in taken:
        kept: list[range] = []
        for piece in pieces:
            if other.stop <= piece.start or other.start >= piece.stop:
                kept.append(piece)
                continue
            if piece.start < other.start:
                kept.append(range(piece.start, other.start))
            if other.stop < piece.stop:
                kept.append(range(other.stop, piece.stop))
        pieces = kept
    return pieces


def parse_seeds(text: str | Sequence[int]) -> Seeds:
    """Seeds from ``0,1,2``, ``0-4`` or a mix (``0-2,7``); duplicates dropped, order kept, ranges never expanded.

    Raises:
        RunError: a term is not a seed in 0-2^63-1 or an ascending range of them.
    """
    if not isinstance(text, str):
        given = list(dict.fromkeys(text))
        bad = [s for s in given if not isinstance(s, int) or isinstance(s, bool) or not 0 <= s <= MAX_SEED]
        if bad:
            raise RunError(f"--seeds: {bad[0]!r} is not a seed (an integer within 0-{MAX_SEED})")
        seeds = Seeds(range(s, s + 1) for s in given)
    else:
        parts: list[range] = []
        for raw in text.split(","):
            term = raw.strip()
            if not term:
                continue
            low, dash, high = term.partition("-")
            try:
                start, stop = (int(low), int(high)) if dash else (int(term), int(term))
            except ValueError:
                raise RunError(f"--seeds: {term!r} is not a seed or an ascending range like 0-4") from None
            if stop < start:
                raise RunError(f"--seeds: {term!r} is not a seed or an ascending range like 0-4")
            if start < 0 or stop > MAX_SEED:
                raise RunError(f"--seeds: {term!r} is out of range; seeds are integers within 0-{MAX_SEED}")
            part = range(start, stop + 1)
            fresh = _without(part, parts)  # seeds an earlier term already gave are played once
            parts.extend(fresh)
        seeds = Seeds(parts)
    if not len(seeds):
        raise RunError("--seeds selects no seed")
    return seeds
