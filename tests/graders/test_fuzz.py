"""The hostile-value fuzz of ``toolgym check``: it finds a grader that raises, and the kit's graders survive it."""

from __future__ import annotations


import anyio
import pytest

from envs.finance import environment as finance
from graders.fuzz import HOSTILE_VALUES, PER_TEMPLATE, fuzz_seed, hostile_variants
from graders.metaeval import check_environment
from servers.environment import Environment
from servers.episodes import EpisodeManager
from tests.graders.fragile import environment as fragile
from tests.graders.toy import environment as toy


async def _fuzz(environment: Environment, template_id: str, seeds: list[int]) -> tuple[int, list[str]]:
    """Variants played and violations found over ``seeds``, as ``toolgym check`` fuzzes one template."""
    manager = EpisodeManager(environment, max_live=16)
    played, violations = 0, []
    try:
        for seed in seeds:
            world, instance = environment.instantiate_task(template_id, seed)
            world.release()
            result = await fuzz_seed(manager, instance, "submit_answer", seeds)
            played += result.played
            violations += result.violations
    finally:
        manager.close_all()
    return played, violations


async def test_the_check_fuzz_finds_a_grader_that_raises_on_hostile_values() -> None:
    """A custom check reading the answer with ``Decimal`` arithmetic: ``toolgym check`` reports every crash."""
    with anyio.fail_after(60):
        report = await check_environment(fragile, seeds=2)
    fuzzed = [v for v in report.violations if "hostile value" in v]
    assert fuzzed and len(fuzzed) == len(report.violations), report.summary()
    assert all("in amount: playing or grading raised GradingError: custom check 'tests.graders.fragile:careless_amount' crashed"
               in v for v in fuzzed), fuzzed
    assert any("(huge exponent) in amount" in v and "Overflow" in v for v in fuzzed), fuzzed
    stats = report.templates[0].attacks["hostile_value"]
    assert stats.generated == PER_TEMPLATE and stats.counted == 0  # fuzzed, not attacks that must fail
    assert f"attack hostile_value: {PER_TEMPLATE} generated" in report.summary()


@pytest.mark.parametrize(
    ("environment", "template_id", "seeds"),
    [(toy, "balance_lookup", [0, 1]), (toy, "transfer_funds", [3]), (finance, "available_balance", [0]), (finance, "small_wire", [0, 1])],
    ids=lambda value: getattr(value, "name", None) or str(value),
)
async def test_the_kits_graders_survive_the_fuzz(environment: Environment, template_id: str, seeds: list[int]) -> None:
    """No exception, no internal tool error, whatever value an agent sends (issue 17: "1e999999999" raised Overflow)."""
    with anyio.fail_after(60):
        played, violations = await _fuzz(environment, template_id, seeds)
    assert played >= PER_TEMPLATE and violations == []


def test_variants_cover_the_answers_figures_its_declaration_and_the_required_arguments() -> None:
    world, instance = finance.instantiate_task("available_balance", 0)
    world.release()
    seeds = list(range(20))
    variants = [v for seed in seeds for v in hostile_variants(instance, "submit_answer", seeds, seed)]
    assert len(variants) >= PER_TEMPLATE
    targets = {v.target for v in variants}
    figures = {f"values.{name}" for name in instance.oracle[-1].arguments["values"]}
    assert figures | {"values", "answer", "outcome", "reason_code"} <= targets
    required = {(step.tool, name) for step in instance.oracle[:-1] if not step.optional for name in step.arguments}
    assert required and all(any(t.endswith(f"{tool}.{name}") for t in targets) for tool, name in required)
    on_figures = {v.label for v in variants if v.target in figures}
    assert {"huge exponent", "NaN", "Infinity", "hex", "misplaced grouping", "another currency"} <= on_figures
    assert {v.label for v in variants} == {label for label, _ in HOSTILE_VALUES}
    one_seed = hostile_variants(instance, "submit_answer", [5], 5)
    assert len(one_seed) == PER_TEMPLATE  # a check of one seed fuzzes it fully
    again = [v for seed in seeds for v in hostile_variants(instance, "submit_answer", seeds, seed)]
    assert [(v.target, v.label) for v in again] == [(v.target, v.label) for v in variants]  # deterministic
