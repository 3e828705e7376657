"""``toolgym check --jobs N``: the meta-evaluation of one environment split over N processes.

One Python process uses one core; the check is thousands of independent episodes, so its templates are
dealt round-robin to N worker processes (spawned, each loading the environment by the same reference and
the fixture from the template cache), and their template reports are put back in the environment's order.
Every constant answer is built from the first seed's vocabulary in each worker, so the pooled constant
policies are exactly those of a one-process check.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

import anyio

from graders.metaeval import DEFAULT_SEEDS, CheckReport, assemble_report, check_environment
from graders.resolve import resolve_environment
from servers.private_tasks import with_private_tasks

__all__ = ["check_in_processes"]


def _part(
    env_ref: str, seeds: int | Sequence[int], templates: list[str], attacks: bool, use_judge: bool, private_tasks: Sequence[str] = ()
) -> CheckReport:
    environment = with_private_tasks(resolve_environment(env_ref), private_tasks)
    return anyio.run(lambda: check_environment(environment, seeds=seeds, templates=templates, attacks=attacks, use_judge=use_judge))


def check_in_processes(
    env_ref: str,
    *,
    jobs: int,
    seeds: int | Sequence[int] = DEFAULT_SEEDS,
    templates: Sequence[str] | None = None,
    attacks: bool = True,
    use_judge: bool = False,
    private_tasks: Sequence[str] = (),
) -> CheckReport:
    """Check the environment named ``env_ref`` (a registered name or ``module:attribute``) in ``jobs`` processes.

    ``private_tasks`` (``servers.private_tasks``) are merged into it in every process.

    Raises:
        TaskError: a requested template id is unknown.
        EnvironmentNotFound: ``env_ref`` names no environment.
    """
    environment = with_private_tasks(resolve_environment(env_ref), private_tasks)
    ids = [environment.task_template(t).id for t in templates] if templates else list(environment.task_templates())
    parts = [ids[i::jobs] for i in range(max(1, jobs)) if ids[i::jobs]]
    if len(parts) <= 1:
        return anyio.run(lambda: check_environment(environment, seeds=seeds, templates=ids, attacks=attacks, use_judge=use_judge))
    with ProcessPoolExecutor(max_workers=len(parts), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_part, env_ref, seeds, part, attacks, use_judge, tuple(private_tasks)) for part in parts]
        results = [t for future in futures for t in future.result().templates]
    order = {template_id: n for n, template_id in enumerate(ids)}
    results.sort(key=lambda t: order[t.template_id])
    return assemble_report(environment.name, results)
