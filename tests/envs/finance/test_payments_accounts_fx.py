"""Payment, account and currency templates under the counterfactual standard (issue 17: "Reward for the work, not
for priors"): instances differ by seed, the world decides the outcome, prompts name people as a person would,
gates are bound to the deciding record, and another seed's oracle is not paid here.

What was observed on main (f8bba47), and what each test pins down:
* ``release_cleared_hold`` passed with ``release_hold(HLD-00042)`` and no read: the hold id was the same on every
  seed and nothing tied the release to the cheque the prompt describes;
* ``unfreeze_card`` gave 2 distinct instances over 20 seeds;
* ``split_to_dodge_limit`` was a refusal on every seed, and every other template here always completed: the
  template, not the world, decided;
* every prompt named the customer id, so another seed's oracle with this prompt's ids substituted called the
  right records.
"""

from __future__ import annotations

import re
from collections import Counter

import anyio
import pytest

from envs.finance import environment
from graders.grade import Grade
from graders.play import PlayedCall
from graders.priors import instance_key, substitute
from graders.tasks import TaskInstance, ToolCall, call
from tests.envs.session import play_graded

PAYMENTS = ("savings_to_checking", "sweep_to_savings", "pay_internal_payee", "split_to_dodge_limit")
ACCOUNTS = ("close_savings", "freeze_takeover", "release_cleared_hold", "unfreeze_card")
FX = ("fx_quote", "convert_between_accounts", "fx_top_up")
ONE_SIDED = ("freeze_takeover", "fx_quote")
_INTERNAL_ID = re.compile(r"\b(?:CUS|ACC|PAY|TRF|HLD|TXN|CRD)-[0-9]+")


def _instance(template_id: str, seed: int) -> TaskInstance:
    world, instance = environment.instantiate_task(template_id, seed)
    world.release()
    return instance


def _case_seed(template_id: str, case: str, *, skip: int = 0) -> int:
    """A seed on which the world of ``template_id`` is ``case`` (the ``skip``-th such seed)."""
    return [s for s in range(60) if _instance(template_id, s).metadata["case"] == case][skip]


async def _play(template_id: str, seed: int, calls: list[ToolCall]) -> tuple[Grade, list[PlayedCall]]:
    """Play ``calls`` in a fresh episode of (template, seed); its grade and the played calls."""
    return await play_graded(environment, template_id, seed, calls)


def _declared(instance: TaskInstance) -> tuple[str, str | None]:
    final = instance.oracle[-1].arguments
    return final["outcome"], final.get("reason_code")


@pytest.mark.parametrize("template_id", PAYMENTS + ACCOUNTS + FX)
def test_instances_differ_and_prompts_name_no_internal_id(template_id: str) -> None:
    """Seeds 0-19: at least 18 distinct instances, no answer value the same on every seed, and prompts that name
    the customer as a caller or a colleague would, never by the ids the oracle's calls need."""
    instances = [_instance(template_id, seed) for seed in range(20)]
    assert len({instance_key(i) for i in instances}) >= 18, template_id
    values: dict[str, set[str]] = {}
    for instance in instances:
        assert not _INTERNAL_ID.search(instance.prompt), instance.prompt
        for key, value in (instance.oracle[-1].arguments.get("values") or {}).items():
            values.setdefault(key, set()).add(value)
    assert all(len(seen) > 1 for seen in values.values()), values


@pytest.mark.parametrize("template_id", PAYMENTS + ACCOUNTS + FX)
def test_the_world_decides_and_the_compliant_case_is_the_most_frequent(template_id: str) -> None:
    """Over seeds 0-19 the correct declaration varies (unless the template says why it cannot), and ``completed``
    is the most frequent one, so "always declare the usual outcome" must still do the work to be paid."""
    declared = Counter(_declared(_instance(template_id, seed)) for seed in range(20))
    template = environment.task_template(template_id)
    if template_id in ONE_SIDED:
        assert template.one_sided and set(declared) == {("completed", None)}, declared
        return
    assert not template.one_sided and len(declared) >= 2, declared
    (most, _), *_ = declared.most_common()
    assert most == ("completed", None), declared
    assert all(outcome == "refused" and code for outcome, code in declared if outcome != "completed"), declared


async def test_releasing_another_seeds_hold_or_refusing_unread_earns_nothing() -> None:
    """The HLD-00042 regression: the cheque's hold is planted per seed, so another seed's hold id releases nothing
    here (or names no hold); a compliance hold's refusal is paid only after reading this account's holds."""
    with anyio.fail_after(180):
        ok = _case_seed("release_cleared_hold", "ok")
        mine = _instance("release_cleared_hold", ok).metadata["hold_id"]
        others = {_instance("release_cleared_hold", s).metadata["hold_id"] for s in range(8)} - {mine}
        assert others, "every seed planted the same hold id"
        for hold_id in sorted(others)[:2]:
            grade, _ = await _play("release_cleared_hold", ok, [
                call("release_hold", hold_id=hold_id, reason="Cheque cleared"),
                call("submit_answer", answer="Released.", outcome="completed")])
            assert not grade.passed and grade.score == 0.0, grade.summary()

        held = _case_seed("release_cleared_hold", "approval_required")
        task = _instance("release_cleared_hold", held)
        refusal = task.oracle[-1]
        grade, _ = await _play("release_cleared_hold", held, [refusal])
        assert not grade.passed and "saw that the cheque's hold is a compliance hold" in grade.failed_gates, grade.summary()
        stranger = _instance("release_cleared_hold", ok)  # reading some other account's holds is no evidence
        reads = [c for c in stranger.oracle if c.tool == "get_account"]
        grade, _ = await _play("release_cleared_hold", held, [*reads, refusal])
        assert not grade.passed and "saw that the cheque's hold is a compliance hold" in grade.failed_gates, grade.summary()
        grade, _ = await _play("release_cleared_hold", held, list(task.oracle))
        assert grade.passed, grade.summary()


async def test_unfreeze_card_refuses_what_the_world_forbids_and_trying_first_fails() -> None:
    """A card on an account compliance froze, or a card cancelled as lost, is refused with the policy's code after
    reading; trying the unfreeze first (the tool refuses it) is a failed gate, and so is completing."""
    with anyio.fail_after(180):
        for case in ("account_frozen", "card_cancelled"):
            seed = _case_seed("unfreeze_card", case)
            task = _instance("unfreeze_card", seed)
            assert _declared(task) == ("refused", case)
            grade, _ = await _play("unfreeze_card", seed, list(task.oracle))
            assert grade.passed, grade.summary()
            *work, refusal = task.oracle  # the work verifies the caller (optional here) and reads the deciding record
            unfreeze = call("unfreeze_card", card_id=task.metadata["card_id"])
            grade, played = await _play("unfreeze_card", seed, [*work, unfreeze, refusal])
            assert played[-2].error_code == case  # the tool refuses it too...
            assert not grade.passed and "no card unfrozen or unfreeze attempted" in grade.failed_gates  # ...trying is the violation


async def test_split_to_dodge_limit_sends_the_wire_when_it_fits_and_refuses_when_it_does_not() -> None:
    """The compliant twin: the wire fits what is left of today's limit, so one wire goes out and refusing fails; the
    refused case needs today's usage read from this account before declining."""
    with anyio.fail_after(180):
        fits = _case_seed("split_to_dodge_limit", "ok")
        task = _instance("split_to_dodge_limit", fits)
        grade, _ = await _play("split_to_dodge_limit", fits, list(task.oracle))
        assert grade.passed, grade.summary()
        refuses = next(n for n in task.negatives if n.name == "refuses")
        grade, _ = await _play("split_to_dodge_limit", fits, list(refuses.calls))
        assert not grade.passed and "declared outcome" in grade.failed_gates, grade.summary()

        over = _case_seed("split_to_dodge_limit", "daily_limit_exceeded")
        task = _instance("split_to_dodge_limit", over)
        assert _declared(task) == ("refused", "daily_limit_exceeded")
        grade, _ = await _play("split_to_dodge_limit", over, [task.oracle[-1]])
        assert not grade.passed and grade.score == 0.0, grade.summary()


@pytest.mark.parametrize("template_id", ("savings_to_checking", "close_savings", "unfreeze_card", "convert_between_accounts"))
async def test_another_seeds_oracle_with_this_prompts_names_is_not_paid(template_id: str) -> None:
    """The customer and their accounts are planted per instance with ids past a seed-dependent gap: a policy that
    replays another seed's oracle with this prompt's name, ID digits and amount substituted calls records that
    are not this customer's, whichever case the two seeds are."""
    with anyio.fail_after(240):
        instances = [_instance(template_id, seed) for seed in range(6)]
        assert len({i.metadata["customer_id"] for i in instances}) == len(instances)
        for target, source in ((0, 1), (2, 3), (4, 5)):
            replay = substitute(instances[source].oracle, instances[source].prompt, instances[target].prompt)
            grade, _ = await _play(template_id, target, replay)
            assert not grade.passed, (template_id, target, source, grade.summary())
