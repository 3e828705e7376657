"""Trained-policy attacks and the counterfactual checks of ``toolgym check`` (graders/priors.py, issue 17).

A template that is always a refusal, names the ids its oracle needs and gates on any call of a tool is what
main f8bba47 shipped (``kyc_expired_wire`` passed after ``search_customers("zz")``); the check must now say
so four ways: a constant declaration, a prior that earns reward after generic reads, replays of other seeds
that pass, and a gate junk arguments satisfy. Its twin, where the world decides and the prompt names only a
person, must earn nothing from any of them.
"""

from __future__ import annotations

import random

from envs.finance import environment as finance
from graders.criteria import AnswerCheck, AnyToolCalled, seen
from graders.metaeval import check_environment
from graders.outcome import completed, refused
from graders.priors import (
    SeedInstance,
    distinct_required,
    generic_reads,
    instance_key,
    junk_arguments,
    nearest_seed,
    prior_answer,
    substitute,
)
from graders.rubric_lint import junk_satisfied_gates
from graders.setup import case, pick, rows
from graders.tasks import TaskDraft, TaskInstance, TaskTemplate, ToolCall, answer_call, call, negative, refusal_call

_CUSTOMERS = "SELECT * FROM customers WHERE kyc_status = 'verified' ORDER BY customer_id"


def memorisable(world: object, rng: random.Random) -> TaskDraft:
    """Always a refusal; the prompt hands over the id; the gate takes any call of get_customer."""
    customer = pick(rng, rows(world, _CUSTOMERS), "customer")  # type: ignore[arg-type]
    cid = customer["customer_id"]
    return TaskDraft(
        prompt=f"Customer {cid} asks whether their KYC allows a wire today. Handle it under the policy.",
        oracle=[call("get_customer", customer_id=cid), refusal_call("kyc_not_verified", "KYC is not current.")],
        outcome=refused("kyc_not_verified"),
        rubric=[AnyToolCalled(name="read the customer", patterns=["get_customer"], gate=True)],
        negatives=[negative("claims", "claims it is fine", answer_call("Fine."))],
    )


def world_decides(world: object, rng: random.Random) -> TaskDraft:
    """The world decides (KYC expired or current); the prompt names a person; the gate names the record."""
    customer = pick(rng, rows(world, "SELECT * FROM customers ORDER BY customer_id"), "customer")  # type: ignore[arg-type]
    cid, name = customer["customer_id"], f"{customer['first_name']} {customer['last_name']}"
    expired = case(rng, {"ok": 3, "expired": 2}) == "expired"
    world.execute("UPDATE customers SET kyc_status = ? WHERE customer_id = ?",  # type: ignore[attr-defined]
                  ("expired" if expired else "verified", cid))
    look = seen("read the customer's KYC", "customers", cid, "kyc_status")  # the search shows it as the record does
    final = (refusal_call("kyc_not_verified", "KYC expired.") if expired
             else answer_call("Here is the segment.", segment=customer["segment"], email=customer["email"]))
    rubric = [look] if expired else [look, AnswerCheck(name="gives the e-mail on file", field="values.email", expect=customer["email"])]
    return TaskDraft(
        prompt=f"{name} asks which segment they are in and the e-mail we hold, if their KYC allows us to serve them.",
        oracle=[call("search_customers", query=name), final],
        outcome=refused("kyc_not_verified") if expired else completed(),
        rubric=rubric,
        negatives=[negative("guess", "answers without reading", final)],
    )


def _instances(template: TaskTemplate, seeds: range) -> list[SeedInstance]:
    environment = finance.with_templates([template])
    found = []
    for seed in seeds:
        world, instance = environment.instantiate_task(template.id, seed)
        world.release()
        found.append(SeedInstance(seed=seed, instance=instance, final=instance.oracle[-1]))
    return found


def test_the_prior_is_the_usual_declaration_and_the_constant_values() -> None:
    others = [SeedInstance(seed=n, instance=None, final=ToolCall(tool="submit_answer", arguments=a))  # type: ignore[arg-type]
              for n, a in enumerate([
                  {"outcome": "refused", "reason_code": "x", "values": {"status": "open", "total": "1.00"}},
                  {"outcome": "refused", "reason_code": "x", "values": {"status": "open", "total": "2.00"}},
                  {"outcome": "completed", "values": {"status": "open", "total": "3.00"}},
              ])]
    prior = prior_answer("submit_answer", others)
    assert prior.arguments["outcome"] == "refused" and prior.arguments["reason_code"] == "x"
    assert prior.arguments["values"] == {"status": "open"}, "only values the same on every other seed are memorised"


def test_substitution_maps_the_prompt_facts_onto_the_oracle() -> None:
    source = "Customer CUS-00042 (Dana Whitfield) asks to wire 8,400.00 USD to Acme."
    target = "Customer CUS-00117 (Omar Haddad) asks to wire 1,250.50 USD to Acme."
    calls = [ToolCall(tool="send_wire", arguments={"customer_id": "CUS-00042", "amount": "8400.00", "memo": "For Dana Whitfield",
                                                   "account": "ACC-000009"})]
    swapped = substitute(calls, source, target)[0].arguments
    assert swapped["customer_id"] == "CUS-00117" and swapped["amount"] == "1250.50"
    assert swapped["memo"] == "For Omar Haddad"
    assert swapped["account"] == "ACC-000009", "an id the prompt does not hold cannot be substituted"


def test_the_nearest_seed_is_the_most_similar_prompt() -> None:
    def seed(n: int, prompt: str) -> SeedInstance:
        return SeedInstance(seed=n, instance=TaskInstance(prompt=prompt, oracle=[call("x")], rubric=[AnyToolCalled(patterns=["x"])],
                                                          template_id="t", seed=n), final=None)
    others = [seed(1, "Completely different words here."), seed(2, "Customer Ann Lee wants a wire of 10.00 to Bob.")]
    chosen = nearest_seed("Customer Tom Ray wants a wire of 12.00 to Bob.", others)
    assert chosen is not None and chosen.seed == 2


def test_generic_reads_follow_the_schema_not_the_task() -> None:
    reads = generic_reads(finance, "Customer CUS-00042 (Dana Whitfield, dana@example.com) asks about ACC-000123.")
    made = {(r.tool, tuple(r.arguments.items())) for r in reads}
    assert ("get_customer", (("customer_id", "CUS-00042"),)) in made
    assert ("search_customers", (("query", "Dana Whitfield"),)) in made
    assert ("search_customers", (("query", "dana@example.com"),)) in made
    assert all(not finance.tool_specs[r.tool].mark.mutates for r in reads)


def test_a_gate_any_call_satisfies_is_linted_and_a_bound_one_is_not() -> None:
    loose = AnyToolCalled(name="read the KYC", patterns=["get_customer", {"tool": "search_customers"}], gate=True)
    bound = AnyToolCalled(name="read this customer's KYC", patterns=[{"tool": "get_customer", "args": {"customer_id": "CUS-00042"}}],
                          gate=True)
    problems = junk_satisfied_gates(finance, [loose, bound])
    assert len(problems) == 1 and "read the KYC" in problems[0] and "get_customer" in problems[0]
    assert {"customer_id": "CUS-00000"} in junk_arguments(finance, "get_customer")


def test_distinct_instances_required() -> None:
    assert [distinct_required(n) for n in (1, 3, 9, 10, 20, 40)] == [1, 3, 9, 9, 18, 36]


async def test_the_check_reports_a_memorisable_template_and_clears_its_twin() -> None:
    bad = TaskTemplate(memorisable, tools=["get_customer", "submit_answer"])
    good = TaskTemplate(world_decides, tools=["search_customers", "get_customer", "submit_answer"])
    keys: dict[str, int] = {}
    for item in _instances(good, range(30)):  # seeds that draw the same customer and case are one problem, replayable
        keys.setdefault(instance_key(item.instance), item.seed)
    seeds = sorted(keys.values())[:10]
    report = await check_environment(finance.with_templates([bad, good]), seeds=seeds)
    by_id = {t.template_id: t for t in report.templates}
    memo, twin = by_id["memorisable"], by_id["world_decides"]
    text = "\n".join(memo.violations)
    assert "on every seed" in text, "a constant declaration is reported"
    assert "satisfied by get_customer" in text, "a gate any call satisfies is linted"
    assert memo.prior_reward > 0.4, "the prior after generic reads is paid on the memorisable template"
    assert memo.replays_passed >= 8, "another seed's oracle is paid on the memorisable template"
    assert any("trained policy" in v for v in report.env_violations)
    assert not twin.violations, twin.violations
    assert twin.prior_reward == 0.0 and twin.replays_passed == 0
    assert twin.distinct == 10 and len(twin.declarations) == 2
    instances = _instances(good, seeds)
    assert len({i.final.arguments.get("outcome") for i in instances if i.final}) == 2
