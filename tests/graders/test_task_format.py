"""The task format: templates validate on load, instantiate deterministically, instances serialise."""

from __future__ import annotations

import random
from typing import Any

import pytest

from fixtures.errors import TaskError
from fixtures.world import World
from graders.criteria import (
    AnswerCheck,
    AnyToolCalled,
    CallBudget,
    CallOrder,
    ChangeSetMatch,
    CustomCheck,
    LLMJudge,
    NoCollateral,
    ToolCalled,
    ToolNotCalled,
    allow,
    facts,
    number,
    state,
    text,
)
from graders.tasks import TaskDraft, TaskInstance, TaskTemplate, call, negative
from servers.environment import Environment
from servers.episodes import EpisodeManager


def freeze_one(world: World, rng: random.Random) -> TaskDraft:
    return TaskDraft(prompt="Freeze account 1.", oracle=[call("freeze_account", account_id=1, reason="x")], rubric=[NoCollateral()])


def test_template_id_defaults_to_function_name_and_lists_become_tuples() -> None:
    template = TaskTemplate(freeze_one, tags=["a", "b"], tools=["freeze_account"])
    assert template.id == "freeze_one"
    assert template.tags == ("a", "b") and template.tools == ("freeze_account",)
    assert template.summary()["description"] == ""

@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"id": "Bad Id"}, "'id'"),
        ({"id": "ok", "split": "dev"}, "'split'"),
        ({"id": "ok", "difficulty": "trivial"}, "'difficulty'"),
        ({"id": "ok", "category": ""}, "'category'"),
        ({"id": "ok", "tags": "payments"}, "'tags'"),
        ({"id": "ok", "tools": ["transfer", ""]}, "'tools'"),
    ],
)
def test_malformed_template_names_the_template_and_field(options: dict[str, object], field: str) -> None:
    with pytest.raises(TaskError) as caught:
        TaskTemplate(freeze_one, **options)  # type: ignore[arg-type]
    message = str(caught.value)
    assert f"task template {options['id']!r}" in message
    assert f"field {field}" in message


def test_build_with_wrong_signature_is_refused() -> None:
    def build(world: World) -> TaskDraft:
        raise AssertionError("never called")

    with pytest.raises(TaskError, match=r"task template 'one_arg': field 'build' must take exactly \(world, rng\)"):
        TaskTemplate(build, id="one_arg")  # type: ignore[arg-type]


def test_unknown_declared_tool_is_refused_when_the_environment_loads(toy: Environment) -> None:
    template = TaskTemplate(freeze_one, id="typo", tools=["freeze_acount"])
    with pytest.raises(TaskError, match=r"task template 'typo': field 'tools' names unknown tool\(s\) 'freeze_acount'"):
        toy.with_templates([template])


def test_duplicate_template_ids_are_refused(toy: Environment) -> None:
    with pytest.raises(TaskError, match="duplicate task template id 'same'"):
        toy.with_templates([TaskTemplate(freeze_one, id="same"), TaskTemplate(freeze_one, id="same")])


def test_unknown_template_id_lists_known_ones(toy: Environment) -> None:
    with pytest.raises(TaskError, match=r"no task template 'nope' \(known: balance_lookup, explain_duplicate"):
        EpisodeManager(toy).create(task="nope")


def test_malformed_draft_names_template_seed_and_field(toy: Environment) -> None:
    def no_oracle(world: World, rng: random.Random) -> TaskDraft:
        return TaskDraft(prompt="p", oracle=[], rubric=[NoCollateral()])

    def bad_dict(world: World, rng: random.Random) -> dict[str, object]:
        return {"prompt": "p", "oracle": [{"tool": "get_account"}], "rubric": [{"kind": "state", "sql": "DELETE FROM accounts", "expect": 1}]}

    def crashes(world: World, rng: random.Random) -> TaskDraft:
        raise KeyError("customer")

    def wrong_type(world: World, rng: random.Random) -> TaskDraft:
        return "a prompt"  # type: ignore[return-value]

    world = toy.fixture.world(0)
    try:
        with pytest.raises(TaskError, match=r"task template 'no_oracle' \(seed 4\): malformed task: field 'oracle'"):
            TaskTemplate(no_oracle).instantiate(world, 4)
        with pytest.raises(TaskError, match=r"task template 'bad_dict' \(seed 0\): malformed task: field 'rubric.0.state.sql': .*single SELECT"):
            TaskTemplate(bad_dict).instantiate(world, 0)
        with pytest.raises(TaskError, match=r"task template 'crashes' \(seed 0\): build failed: KeyError: 'customer'"):
            TaskTemplate(crashes).instantiate(world, 0)
        with pytest.raises(TaskError, match=r"task template 'wrong_type' \(seed 0\): build must return a TaskDraft, got str"):
            TaskTemplate(wrong_type).instantiate(world, 0)
    finally:
        world.close()


def test_duplicate_criterion_names_are_refused() -> None:
    with pytest.raises(ValueError, match="two rubric criteria are named 'no collateral changes'"):
        TaskDraft(prompt="p", oracle=[call("get_account", account_id=1)], rubric=[NoCollateral(), NoCollateral()])


def test_same_template_and_seed_give_the_same_instance_and_world(toy: Environment) -> None:
    instances, hashes = [], []
    for _ in range(2):
        world, instance = toy.instantiate_task("freeze_compromised", 7)
        instances.append(instance.model_dump_json())
        hashes.append(world.hash())
        world.close()
    assert instances[0] == instances[1]
    assert hashes[0] == hashes[1]
    other_world, other = toy.instantiate_task("freeze_compromised", 8)
    other_world.close()
    assert other.model_dump_json() != instances[0]


def test_setup_is_applied_to_the_world_and_kept_out_of_the_episode_diff(manager: EpisodeManager) -> None:
    episode = manager.create(task="freeze_compromised", seed=1)
    planted = episode.world.query("SELECT count(*) AS n FROM transfers WHERE memo = 'card test'")
    assert planted == [{"n": 3}]
    assert episode.world.diff() == []


def test_instance_with_every_criterion_kind_round_trips_through_json() -> None:
    rubric: list[Any] = [
        state("SELECT status FROM accounts WHERE id = ?", 3, expect="frozen", gate=True),
        ChangeSetMatch(ignore_columns={"transfers": ["id"]}),
        NoCollateral(also_allowed=[allow("transfers", ops=["insert"], from_account=3)]),
        ToolCalled(tool="get_account", args={"account_id": 3}),
        AnyToolCalled(patterns=["find_customer", {"tool": "get_account", "status": "any"}]),
        ToolNotCalled(tool="transfer", args={"amount": number("10.00")}),
        CallOrder(first="verify_identity", then={"tool": "transfer", "args": {"memo": text("Rent")}}),
        CallBudget(max_calls=10, max_errors=1),
        AnswerCheck(field="answer", expect=facts(all_of=["tr-1"], any_of=["dup", "twice"])),
        LLMJudge(instructions="Polite."),
        CustomCheck(function="tests.graders.checks:balanced", params={"account_id": 3}, weight=2.5),
    ]
    instance = TaskInstance(
        template_id="t",
        seed=3,
        prompt="p",
        oracle=[call("get_account", account_id=3)],
        rubric=rubric,
        negatives=[negative("n", "does nothing useful", call("get_account", account_id=4))],
        allowed_changes=[allow("accounts", 3, ops=["update"], columns=["status"])],
        metadata={"k": [1, "two"]},
    )
    text_form = instance.model_dump_json()
    again = TaskInstance.model_validate_json(text_form)
    assert again == instance
    assert again.model_dump_json() == text_form
    assert [c.kind for c in again.rubric] == [c.kind for c in rubric]
