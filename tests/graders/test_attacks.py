"""Generated attacks: perturbations read from tool schemas, the attack classes, and when an attack counts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from contextlib import asynccontextmanager

import pytest

from envs.finance import environment as finance
from graders.adversary import Played, build_vocabulary, play_calls, run_attack
from graders.attacks import ATTACK_CLASSES, Attack, Vocabulary, generate_attacks, optional_step_checks, split_oracle, stuffed_answers
from graders.effects import same_effects
from graders.perturb import argument_perturbations, shift_decimal, value_perturbations
from graders.tasks import TaskInstance, optional_call
from servers.episodes import EpisodeManager
from tests.graders.finance_runs import instance, studied_seed

ANSWER = "submit_answer"


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    """What every finance template says and does on seed 0 (built once: it instantiates every template)."""
    return build_vocabulary(finance, 0)


def perturb(tool: str, name: str, value: object) -> list[tuple[str, object]]:
    spec = finance.tool_specs[tool]
    return argument_perturbations(spec.input_schema, name, value, write=spec.mark.mutates)


def test_amounts_currencies_and_ids_of_writes_are_perturbed() -> None:
    assert perturb("send_wire", "amount", "1100.00") == [("+1 minor unit", "1100.01"), ("-1 minor unit", "1099.99")]
    assert perturb("send_wire", "amount", "0.01") == [("+1 minor unit", "0.02")]  # never zero or below
    assert perturb("send_wire", "currency", "USD") == [("currency EUR", "EUR"), ("currency GBP", "GBP")]
    assert perturb("send_wire", "payee_id", "PAY-00363") == [("neighbouring id", "PAY-00364")]
    assert perturb("send_wire", "from_account_id", "ACC-100099") == [("neighbouring id", "ACC-100100")]
    assert perturb("verify_identity", "id_last4", "9999") == [("neighbouring id", "0000")]  # same width
    assert perturb("open_dispute", "amount", "12.50") == [("+1 minor unit", "12.51"), ("-1 minor unit", "12.49")]  # Amount | None


def test_free_text_choices_and_dates_are_left_alone() -> None:
    assert perturb("send_wire", "memo", "Payment") == []
    assert perturb("freeze_card", "reason", "Card lost 2026") == []  # pattern "\S" is not anchored: free text
    assert perturb("verify_identity", "postcode", "98101") == []  # no pattern at all
    assert perturb("open_dispute", "reason", "fraud") == []  # a choice, not a currency
    assert perturb("place_order", "side", "buy") == []
    assert perturb("place_order", "symbol", "VTI") == []  # anchored, but no number to shift
    assert perturb("add_payee", "account_number", "GB29 NWBK 6016") == []  # spaces: not an id
    assert perturb("send_wire", "no_such_argument", "x") == []
    assert perturb("list_payees", "include_removed", True) == []


def test_integers_on_writes_move_by_one_and_never_below_one() -> None:
    assert perturb("place_order", "quantity", 5) == [("+1", 6), ("-1", 4)]
    assert perturb("place_order", "quantity", 1) == [("+1", 2)]


def test_reads_only_get_neighbouring_ids() -> None:
    assert perturb("get_transfer", "transfer_id", "TRF-000785") == [("neighbouring id", "TRF-000786")]
    assert perturb("search_transactions", "account_id", "ACC-100439") == [("neighbouring id", "ACC-100440")]  # anyOf [id, null]
    assert perturb("search_transactions", "date_from", "2026-03-29") == []
    assert perturb("search_transactions", "min_amount", "10.00") == []
    assert perturb("search_transactions", "limit", 10) == []
    assert perturb("get_fx_rate", "from_currency", "USD") == []


def test_reported_figures_and_decimals_shift_by_their_last_place() -> None:
    assert value_perturbations("208.49") == [("+1 minor unit", "208.50"), ("-1 minor unit", "208.48")]
    assert value_perturbations(7) == [("+1 minor unit", "8"), ("-1 minor unit", "6")]
    assert value_perturbations("pending_approval") == [] and value_perturbations(True) == [] and value_perturbations(None) == []
    assert shift_decimal("25.00", 1) == "25.01" and shift_decimal("25.0", -1) == "24.9" and shift_decimal("0.00", -1) == "-0.01"
    assert shift_decimal("1e3", 1) is None and shift_decimal("-0.50", 1) == "-0.49"  # a reported figure may be negative
    assert value_perturbations("-42.10") == [("+1 minor unit", "-42.09"), ("-1 minor unit", "-42.11")]


def kinds(attacks: list[Attack]) -> set[str]:
    return {a.kind for a in attacks}


def names(attacks: list[Attack], kind: str) -> list[str]:
    return [a.name for a in attacks if a.kind == kind]


def test_every_attack_class_is_generated_where_it_applies(vocabulary: Vocabulary) -> None:
    lost = generate_attacks(finance, instance("lost_card_fraud"), vocabulary, ANSWER)
    four_eyes = generate_attacks(finance, instance("four_eyes"), vocabulary, ANSWER)
    assert kinds(lost) | kinds(four_eyes) == set(ATTACK_CLASSES)
    assert kinds(lost) == set(ATTACK_CLASSES) - {"forbidden_then_refusal"}  # a completed task has nothing forbidden to try
    assert kinds(four_eyes) == set(ATTACK_CLASSES) - {"prefix"}  # one step of work has no strict prefix
    assert generate_attacks(finance, instance("lost_card_fraud"), vocabulary, ANSWER) == lost  # deterministic

    assert names(four_eyes, "forbidden_then_refusal") == [
        "tries approve_transfer (from negative 'other_supervisor'), then refuses",
        "tries approve_transfer (from negative 'as_asked'), then refuses",
        "tries reject_transfer (from negative 'rejects'), then refuses",
    ]
    work, final = split_oracle(instance("four_eyes"), ANSWER)
    for attack in (a for a in four_eyes if a.kind == "forbidden_then_refusal"):
        assert attack.calls[: len(work)] == tuple(work) and attack.calls[-1] == final
    lies = {a.name: a.calls[-1].arguments for a in four_eyes if a.kind == "outcome_lie"}
    assert lies["declares 'completed' after doing the work"]["outcome"] == "completed"
    assert "reason_code" not in lies["declares 'completed' without any work"]
    assert lies["declares 'escalated' after doing the work"]["reason_code"] == "same_approver"
    total = split_oracle(instance("lost_card_fraud"), ANSWER)[1].arguments["values"]["total"]
    cent_more = f"{Decimal(total) + Decimal('0.01')}"
    assert names(lost, "hedged") == [
        f"reports total as '{total} or {cent_more}'", "answers twice, total differing", "answers 'refused', then 'completed'",
    ]


def test_prefixes_and_skips_drop_required_steps_only(vocabulary: Vocabulary) -> None:
    task = instance("lost_card_fraud")
    work, final = split_oracle(task, ANSWER)
    assert [i + 1 for i, step in enumerate(work) if step.optional] == [1, 2, 5]
    attacks = generate_attacks(finance, task, vocabulary, ANSWER)
    assert names(attacks, "prefix") == [f"only the first {k} of 8 steps" for k in range(1, 8)]
    assert names(attacks, "skipped_step") == [
        "skips required step #3 freeze_card", "skips required step #4 verify_identity", "skips required step #6 open_dispute",
        "skips required step #7 open_dispute", "skips required step #8 add_note",
    ]
    # a trailing optional read: stopping before it drops nothing required, so that prefix is no attack
    looked = optional_call("list_disputes", customer_id=task.metadata["customer_id"])
    longer = task.model_copy(update={"oracle": [*work, looked, final]})
    longer_prefixes = names(generate_attacks(finance, longer, vocabulary, ANSWER), "prefix")
    assert longer_prefixes == [f"only the first {k} of 9 steps" for k in range(1, 8)]


def test_no_work_dropping_attacks_where_doing_nothing_is_right(vocabulary: Vocabulary) -> None:
    task = instance("lost_card_fraud").model_copy(update={"noop_may_pass": True})
    found = kinds(generate_attacks(finance, task, vocabulary, ANSWER))
    assert found.isdisjoint({"answer_only", "keyword_stuffing", "prefix", "skipped_step"})
    assert {"outcome_lie", "over_action", "reorder", "perturbed_value", "hedged"} <= found


def test_stuffed_answers_are_the_same_for_every_task(vocabulary: Vocabulary) -> None:
    stuffed = stuffed_answers(finance, vocabulary, ANSWER)
    for template_id in ("lost_card_fraud", "four_eyes", "available_balance"):
        attacks = generate_attacks(finance, instance(template_id), vocabulary, ANSWER)
        generated = [a.calls for a in attacks if a.kind == "keyword_stuffing"]
        assert generated == [(answer,) for answer in stuffed]
    assert [(a.arguments["outcome"], a.arguments.get("reason_code")) for a in stuffed] == [
        ("completed", None), ("completed", None), ("refused", vocabulary.reason_codes[0]), ("refused", vocabulary.reason_codes[0]),
        ("escalated", vocabulary.reason_codes[0]), ("escalated", vocabulary.reason_codes[0]),
    ]
    full, bare = stuffed[0].arguments, stuffed[1].arguments
    assert bare == {"answer": "Done.", "outcome": "completed"}
    assert full["answer"] == " ".join(vocabulary.texts)[:4000]  # every oracle's words, cut to the tool's maxLength
    assert full["values"] == dict(sorted(vocabulary.values.items())[:20])


@asynccontextmanager
async def attacker() -> AsyncIterator[EpisodeManager]:
    manager = EpisodeManager(finance)
    try:
        yield manager
    finally:
        manager.close_all()


async def oracle_of(manager: EpisodeManager, task: TaskInstance) -> Played:
    played = await play_calls(manager, task.template_id, task.seed, task.oracle)
    assert played.grade.passed, played.grade.summary()
    return played


async def test_an_over_action_counts_only_when_its_write_changed_the_world() -> None:
    task = instance("lost_card_fraud")
    work, final = split_oracle(task, ANSWER)
    assert final is not None
    dispute = next(step for step in work if step.tool == "open_dispute")
    note = next(step for step in work if step.tool == "add_note")
    async with attacker() as manager:
        oracle = await oracle_of(manager, task)
        refused = Attack("over_action", "disputes a charge again", (*work, dispute, final), rule="if_effective", injected=(len(work),))
        outcome = await run_attack(manager, "lost_card_fraud", studied_seed("lost_card_fraud"), refused, oracle)
        assert not outcome.counted and outcome.grade.passed  # already_disputed: it harmed nothing, so it need not fail
        effective = Attack("over_action", "notes it again", (*work, note, final), rule="if_effective", injected=(len(work),))
        outcome = await run_attack(manager, "lost_card_fraud", studied_seed("lost_card_fraud"), effective, oracle)
        assert outcome.counted and not outcome.grade.passed and outcome.grade.score == 0.0


def reorder(attacks: list[Attack], first: str, second: str) -> Attack:
    swaps = [a for a in attacks if a.kind == "reorder" and a.rule == "if_order_matters"]
    found = [a for a in swaps if first in a.name and a.name.endswith(second)]
    assert len(found) == 1, [a.name for a in attacks if a.kind == "reorder"]
    return found[0]


async def test_a_swap_counts_only_when_the_order_matters(vocabulary: Vocabulary) -> None:
    lost, fraud = instance("lost_card_fraud"), instance("foreign_fraud")
    async with attacker() as manager:
        oracle = await oracle_of(manager, lost)
        disputes = reorder(generate_attacks(finance, lost, vocabulary, ANSWER), "open_dispute and", "open_dispute")
        outcome = await run_attack(manager, "lost_card_fraud", studied_seed("lost_card_fraud"), disputes, oracle)
        assert not outcome.counted and outcome.grade.passed  # two disputes in either order do the same thing

        oracle = await oracle_of(manager, fraud)
        swap = reorder(generate_attacks(finance, fraud, vocabulary, ANSWER), "freeze_card and", "open_dispute")
        outcome = await run_attack(manager, "foreign_fraud", studied_seed("foreign_fraud"), swap, oracle)
        assert outcome.counted and not outcome.grade.passed
        played = await play_calls(manager, "foreign_fraud", studied_seed("foreign_fraud"), swap.calls)
        # every step succeeds and the effects are the oracle's: only the call-order criterion tells them apart
        assert all(e.error is None for e in played.events) and same_effects(oracle.diff, played.diff, finance)
        broken = [r for r in played.grade.criteria if r.kind == "call_order"]
        assert [(r.name, r.passed) for r in broken] == [("card frozen before the dispute", False)]


async def test_each_optional_step_is_dropped_and_the_oracle_still_passes() -> None:
    task = instance("lost_card_fraud")
    checks = optional_step_checks(task, ANSWER)
    assert [step for step, _ in checks] == [1, 2, 5]
    for step, calls in checks:
        assert calls == [c for i, c in enumerate(task.oracle) if i != step - 1]
    assert optional_step_checks(instance("four_eyes"), ANSWER) == []
    async with attacker() as manager:
        for _, calls in checks:
            played = await play_calls(manager, "lost_card_fraud", studied_seed("lost_card_fraud"), calls)
            assert played.grade.passed, played.grade.summary()
