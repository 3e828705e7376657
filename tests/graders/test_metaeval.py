"""Meta-evaluation catches broken templates: failing oracles, passing negatives and no-ops, nondeterminism."""

from __future__ import annotations

import itertools
import json
import random

import anyio
import pytest

from clients.cli import main
from fixtures.world import World
from graders.criteria import AnswerCheck, ChangeSetMatch, NoCollateral, ToolCalled, ToolNotCalled, allow, number, state
from graders.metaeval import check_environment
from graders.tasks import TaskDraft, TaskTemplate, call, negative, optional_call
from tests.graders.toy import environment as toy_environment
from tests.graders.toy.tasks import balance_lookup


def _victim(world: World, rng: random.Random) -> int:
    return rng.choice([r["id"] for r in world.query("SELECT id FROM accounts ORDER BY id")])


def _freeze(world: World, account: int, **changes: object) -> TaskDraft:
    base: dict[str, object] = {
        "prompt": f"Freeze account {account}.",
        "oracle": [call("freeze_account", account_id=account, reason="asked")],
        "rubric": [state("SELECT status FROM accounts WHERE id = ?", account, expect="frozen", gate=True), NoCollateral()],
        "allowed_changes": [allow("accounts", account, ops=["update"], columns=["status"])],
        "negatives": [negative("wrong", "freezes another account", call("freeze_account", account_id=account % 40 + 1, reason="x"))],
    }
    return TaskDraft.model_validate({**base, **changes})


def oracle_fails(world: World, rng: random.Random) -> TaskDraft:
    """The oracle moves more money than there is (and the rubric replays it for a change-set match)."""
    account = _victim(world, rng)
    wire = call("transfer", from_account=account, to_account=account % 40 + 1, amount="9999999.00")
    return _freeze(world, account, oracle=[wire], rubric=[ChangeSetMatch()])


def oracle_scores_low(world: World, rng: random.Random) -> TaskDraft:
    """The oracle only looks; the rubric wants a freeze."""
    account = _victim(world, rng)
    return _freeze(world, account, oracle=[call("get_account", account_id=account)])


def negative_passes(world: World, rng: random.Random) -> TaskDraft:
    """A 'negative' that is really a correct solution."""
    account = _victim(world, rng)
    return _freeze(world, account, negatives=[negative("same", "is the oracle in disguise", call("freeze_account", account_id=account, reason="other"))])


def noop_passes(world: World, rng: random.Random) -> TaskDraft:
    """A rubric that only forbids things: doing nothing satisfies it."""
    account = _victim(world, rng)
    return _freeze(world, account, rubric=[ToolNotCalled(tool="transfer")])


def noop_is_fine(world: World, rng: random.Random) -> TaskDraft:
    """Same rubric, but doing nothing is declared correct."""
    return noop_passes(world, rng).model_copy(update={"noop_may_pass": True, "negatives": []})


_CALLS = itertools.count()


def nondeterministic(world: World, rng: random.Random) -> TaskDraft:
    """Uses state outside its rng: each instantiation picks the next account, so two never agree (a random draw
    from 40 accounts would agree once in 40 runs and make this test flaky)."""
    return _freeze(world, 1 + next(_CALLS) % 40)


def typo(world: World, rng: random.Random) -> TaskDraft:
    """Forbids a tool that does not exist, which would pass vacuously."""
    account = _victim(world, rng)
    return _freeze(world, account, rubric=[ToolNotCalled(tool="transfr"), state("SELECT status FROM accounts WHERE id = ?", account, expect="frozen")])


BROKEN = toy_environment.with_templates(
    [
        TaskTemplate(oracle_fails, tools=["transfer"]),
        TaskTemplate(oracle_scores_low, tools=["get_account"]),
        TaskTemplate(negative_passes, tools=["freeze_account"]),
        TaskTemplate(noop_passes, tools=["freeze_account"]),
        TaskTemplate(noop_is_fine, tools=["freeze_account"]),
        TaskTemplate(nondeterministic, tools=["freeze_account"]),
        TaskTemplate(typo, tools=["freeze_account"]),
        TaskTemplate(oracle_scores_low, id="undeclared_tool", tools=["freeze_account"]),
    ]
)
"""Deliberately broken templates (importable as ``tests.graders.test_metaeval:BROKEN`` for the CLI test)."""


def _balance(draft: TaskDraft) -> str:
    return str(draft.oracle[-1].arguments["amount"])


def pays_for_the_answer(world: World, rng: random.Random) -> TaskDraft:
    """The balance look-up whose only check reads the answer: it pays for the claim, not the look-up."""
    draft = balance_lookup(world, rng)
    claim = AnswerCheck(name="right balance", field="amount", expect=number(_balance(draft)), gate=True)
    return draft.model_copy(update={"rubric": [claim]})


def optional_but_needed(world: World, rng: random.Random) -> TaskDraft:
    """The balance look-up whose oracle marks optional the read its rubric requires."""
    draft = balance_lookup(world, rng)
    find, read, answer = draft.oracle
    return draft.model_copy(update={"oracle": [find, optional_call(read.tool, **read.arguments), answer]})


def unchecked_read(world: World, rng: random.Random) -> TaskDraft:
    """A freeze whose oracle requires a read that nothing in the rubric checks."""
    account = _victim(world, rng)
    oracle = [call("get_account", account_id=account), call("freeze_account", account_id=account, reason="asked")]
    return _freeze(world, account, oracle=oracle)


def partial_credit_for_the_answer(world: World, rng: random.Random) -> TaskDraft:
    """The balance look-up with nothing gated: the answer alone earns half the reward."""
    draft = balance_lookup(world, rng)
    read = draft.oracle[1]
    return draft.model_copy(update={"rubric": [
        AnswerCheck(name="right balance", field="amount", expect=number(_balance(draft))),
        ToolCalled(name="looked it up", tool="get_account", args=read.arguments),
    ]})


def names_the_balance(world: World, rng: random.Random) -> TaskDraft:
    """The balance look-up whose answer check is named after the balance the agent must find."""
    draft = balance_lookup(world, rng)
    balance = _balance(draft)
    named = AnswerCheck(name=f"balance is {balance}", field="amount", expect=number(balance), gate=True)
    return draft.model_copy(update={"rubric": [named, *draft.rubric[1:]]})


GAMEABLE = toy_environment.with_templates(
    [
        TaskTemplate(balance_lookup),
        TaskTemplate(pays_for_the_answer),
        TaskTemplate(optional_but_needed),
        TaskTemplate(unchecked_read),
        TaskTemplate(partial_credit_for_the_answer),
        TaskTemplate(names_the_balance),
    ]
)
"""Templates whose oracles pass and whose negatives fail, but which a policy could still game."""


async def test_the_toy_environment_passes_every_check() -> None:
    report = await check_environment(toy_environment, seeds=2)
    assert report.ok, report.summary()
    rows = {t.template_id: t for t in report.templates}
    assert set(rows) == {"balance_lookup", "transfer_funds", "freeze_compromised", "explain_duplicate"}
    assert rows["transfer_funds"].oracle == "1.000" and rows["transfer_funds"].negatives == "6/6 fail"
    assert rows["transfer_funds"].noop == "2/2 fail" and rows["transfer_funds"].determinism == "ok"
    assert rows["explain_duplicate"].notes == ["not graded here: explains politely (set TOOLGYM_JUDGE_* and pass --judge)"]


async def test_broken_templates_are_caught_with_a_reason_each() -> None:
    report = await check_environment(BROKEN, seeds=[0])
    assert not report.ok
    found = {t.template_id: t for t in report.templates}
    assert found["noop_is_fine"].ok, found["noop_is_fine"].violations

    def only(template: str) -> str:
        assert found[template].violations, template
        return " | ".join(found[template].violations)

    assert "seed 0: an oracle call failed: #1 transfer: refused:insufficient_funds" in only("oracle_fails")
    assert "GradingError: the oracle of task template 'oracle_fails' (seed 0) fails at call #1 transfer: insufficient_funds" in only("oracle_fails")
    assert found["oracle_fails"].oracle.startswith("FAIL")
    assert "seed 0: the oracle scores 0.000: state: SELECT status FROM accounts WHERE id = ?" in only("oracle_scores_low")
    assert "negative 'same' (is the oracle in disguise) passes with score 1.000: the rubric does not catch it" in only("negative_passes")
    assert found["negative_passes"].negatives == "0/1 fail"
    assert "the no-op passes (score 1.000): the rubric rewards doing nothing" in only("noop_passes")
    assert found["noop_passes"].noop == "PASSES (1/1)"
    assert "not deterministic: instantiating the same seed twice gives different instances" in only("nondeterministic")
    assert found["nondeterministic"].determinism == "FAIL"
    assert "criterion 'never calls transfr() [any]': tool_not_called names tool 'transfr', which environment 'grader-toy' does not have" in only("typo")
    assert "the oracle calls get_account, not listed in the template's tools" in only("undeclared_tool")
    template_violations = report.violations[len(report.env_violations):]
    assert all(v.split(": ", 1)[0] in found for v in template_violations)
    assert all(v.startswith("constant policy") for v in report.env_violations)


async def test_gameable_templates_are_caught_with_a_reason_each() -> None:
    report = await check_environment(GAMEABLE, seeds=[0])
    found = {t.template_id: t for t in report.templates}
    assert found["balance_lookup"].ok, found["balance_lookup"].violations
    assert found["balance_lookup"].attacks["skipped_step"].counted == 1 and found["balance_lookup"].worst_attack == 0.0

    def reasons(template: str) -> str:
        assert found[template].violations, template
        assert found[template].oracle == "1.000", found[template].oracle  # each oracle is right: only the grader is weak
        return " | ".join(found[template].violations)

    assert "seed 0: only criteria that read the answer earn credit ('right balance'): add one that checks the work" in reasons(
        "pays_for_the_answer")
    assert "attack answer_only: the final answer with no work passes with score 1.000" in reasons("pays_for_the_answer")
    assert "seed 0: oracle step #2 is marked optional, but the oracle fails without it (looked it up: " in reasons("optional_but_needed")
    assert "mark it required or relax the rubric" in reasons("optional_but_needed")
    assert "seed 0: attack skipped_step: skips required step #1 get_account passes with score 1.000" in reasons("unchecked_read")
    assert found["unchecked_read"].attacks["skipped_step"].passed == 1
    partial = reasons("partial_credit_for_the_answer")
    assert "seed 0: attack answer_only: the final answer with no work earns 0.500 (credited: right balance); it must earn nothing: " \
           "gate the work it skips" in partial
    assert "passes with score" not in partial  # it fails the threshold, yet a policy would learn to collect the half
    assert found["partial_credit_for_the_answer"].attacks["answer_only"].max_reward == 0.5
    world, named = GAMEABLE.instantiate_task("names_the_balance", 0)
    world.release()
    balance = named.oracle[-1].arguments["amount"]
    assert f"seed 0: criterion name 'balance is {balance}' contains the expected value '{balance}': name what is checked" in reasons(
        "names_the_balance")


def test_toolgym_check_exits_zero_on_the_toy_and_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["check", "tests.graders.toy:environment", "--seeds", "1", "--templates", "transfer_funds", "freeze_compromised"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "toolgym check grader-toy" in out and "transfer_funds" in out and "freeze_compromised" in out
    assert "ok: 2 templates × 1 seed, no violation" in out


def test_toolgym_check_exits_non_zero_listing_each_violation(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["check", "tests.graders.test_metaeval:BROKEN", "--seeds", "1", "--templates", "negative_passes", "noop_passes"])
    assert exited.value.code == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "violation(s):" in out
    assert "✗ negative_passes: seed 0: negative 'same'" in out
    assert "✗ noop_passes: seed 0: the no-op passes" in out
    assert "✗ noop_passes: seed 0: no criterion earns credit" in out  # the rubric only forbids: inaction satisfies it
    assert "✗ constant policy 'no-op' averages a reward of 0.5000" in out  # one of the two templates pays for nothing


def test_toolgym_check_takes_held_out_seed_ranges_and_lists(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["check", "tests.graders.toy:environment", "--seeds", "1000-1001", "--templates", "freeze_compromised", "--json"])
    assert exited.value.code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["templates"][0]["seeds"] == [1000, 1001]
    assert {"alternative_paths", "guessing"} <= set(report) and "majority_share" in report["templates"][0]
    with pytest.raises(SystemExit) as exited:
        main(["check", "tests.graders.toy:environment", "--seeds", "7,3", "--templates", "freeze_compromised", "--json"])
    assert exited.value.code == 0 and json.loads(capsys.readouterr().out)["templates"][0]["seeds"] == [7, 3]
    for bad in ("5-2", "x", "0", "-1"):
        with pytest.raises(SystemExit) as exited:
            main(["check", "tests.graders.toy:environment", "--seeds", bad])
        assert exited.value.code == 2
        assert "--seeds" in capsys.readouterr().err


def test_toolgym_check_json_and_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["check", "tests.graders.toy:environment", "--seeds", "1", "--templates", "freeze_compromised", "--json"])
    assert exited.value.code == 0
    assert '"ok": true' in capsys.readouterr().out
    with pytest.raises(SystemExit) as exited:
        main(["check", "tests.graders.toy:environment", "--templates", "nope"])
    assert exited.value.code == 2
    assert "has no task template 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["check", "no_such_env"])
    assert exited.value.code == 2
    assert "no environment 'no_such_env'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["check", "tests.graders.toy:nothing"])
    assert exited.value.code == 2
    assert "has no Environment named 'nothing'" in capsys.readouterr().err


def test_toolgym_tasks_lists_templates(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["tasks", "tests.graders.toy:environment", "--json"])
    assert exited.value.code == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in rows] == ["balance_lookup", "transfer_funds", "freeze_compromised", "explain_duplicate"]
    assert rows[1] == {
        "id": "transfer_funds",
        "difficulty": "medium",
        "category": "payments",
        "split": "train",
        "tags": ["write", "policy"],
        "tools": ["verify_identity", "transfer"],
        "description": "Verify the customer, then move money from checking to savings.",
        "one_sided": "",
        "validation": {"plays": 0, "fair": 0, "instances": 0, "players": [], "passed": 0, "open_defects": [], "verified": False},
    }
    with pytest.raises(SystemExit):
        main(["tasks", "tests.graders.toy:environment", "--split", "test"])
    table = capsys.readouterr().out
    assert "freeze_compromised" in table and "transfer_funds" not in table and "2 task templates" in table



@pytest.mark.slow
def test_check_in_processes_gives_the_one_process_report() -> None:
    """``--jobs 2`` deals templates to two spawned processes; the report is the same, in the same order."""
    from graders.parallel import check_in_processes

    split = check_in_processes("tests.graders.toy:environment", jobs=2, seeds=[0])
    single = anyio.run(lambda: check_environment(toy_environment, seeds=[0]))

    def view(report: object) -> list[tuple[object, ...]]:
        return [(t.template_id, t.oracle, t.noop, t.negatives, t.attack_summary, t.worst_attack, t.violations)
                for t in report.templates]  # type: ignore[attr-defined]

    assert view(split) == view(single) and split.constant_policies == single.constant_policies
    assert split.ok == single.ok
