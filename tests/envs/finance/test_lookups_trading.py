"""Look-up and wealth-desk templates under the counterfactual standard (issue 17: "Reward for the work, not for
priors"): instances differ by seed, the world decides the trades, prompts name people as a person would, gates
are bound to the deciding record, and another seed's oracle is not paid here.

What was observed on main (f8bba47), and what each test pins down:
* ``pending_wire_status`` gave 9 distinct instances over 20 seeds and its status was always ``pending_approval``;
* ``buy_suitable`` always completed and ``unsuitable_buy`` always refused: the template, not the world, decided;
* every prompt named the customer id (``Wealth desk, customer CUS-00042``), so a replay of another seed's oracle
  with this prompt's ids substituted called the right records.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import pairwise

import anyio
import pytest

from envs.finance import environment
from graders.grade import Grade
from graders.play import PlayedCall
from graders.priors import instance_key, substitute
from graders.tasks import TaskInstance, ToolCall, call
from tests.envs.session import play_graded

LOOKUPS = ("available_balance", "category_spend", "position_value", "portfolio_total", "pending_wire_status")
TRADING = ("buy_suitable", "unsuitable_buy", "sell_for_cash", "rebalance")
_INTERNAL_ID = re.compile(r"\b(?:CUS|ACC|PAY|TRF|HLD|TXN|ORD)-[0-9]+")


def _instance(template_id: str, seed: int) -> TaskInstance:
    world, instance = environment.instantiate_task(template_id, seed)
    world.release()
    return instance


async def _play(template_id: str, seed: int, calls: list[ToolCall]) -> tuple[Grade, list[PlayedCall]]:
    """Play ``calls`` in a fresh episode of (template, seed); its grade and the played calls."""
    return await play_graded(environment, template_id, seed, calls)


def _declared(instance: TaskInstance) -> tuple[str, str | None]:
    final = instance.oracle[-1].arguments
    return final["outcome"], final.get("reason_code")


@pytest.mark.parametrize("template_id", LOOKUPS + TRADING)
def test_instances_differ_and_prompts_name_no_internal_id(template_id: str) -> None:
    """Seeds 0-19: at least 18 distinct instances, no answer value the same on every seed, and prompts that name the
    customer by name (and e-mail or what they state on the phone), never by the ids the oracle's calls need."""
    keys, values = set(), {}
    for seed in range(20):
        instance = _instance(template_id, seed)
        keys.add(instance_key(instance))
        for key, value in (instance.oracle[-1].arguments.get("values") or {}).items():
            values.setdefault(key, set()).add(value)
        assert not _INTERNAL_ID.search(instance.prompt), (seed, instance.prompt)
        assert instance.metadata["customer_id"] not in instance.prompt
    assert len(keys) >= 18, len(keys)
    assert all(len(v) > 1 for v in values.values()), values


@pytest.mark.parametrize("template_id", TRADING)
def test_the_world_decides_the_trade(template_id: str) -> None:
    """The same request is completed on some seeds and refused with the policy's code on others; completing is the
    most frequent declaration, so neither "always refuse" nor "always trade" is paid."""
    declared = Counter(_declared(_instance(template_id, seed)) for seed in range(20))
    assert len(declared) >= 2 and declared.most_common(1)[0][0] == ("completed", None), declared
    assert {code for outcome, code in declared if outcome == "refused"} <= {
        "unsuitable_instrument", "kyc_not_verified", "insufficient_funds", "insufficient_position", "account_frozen"}


def test_lookups_are_one_sided_but_the_wire_status_varies() -> None:
    """A question about one's own money is always answered (the templates say why); what the world decides is the
    answer — pending_wire_status's status takes every value a decided wire can have."""
    for template_id in LOOKUPS:
        assert environment.task_template(template_id).one_sided
    statuses = Counter(_instance("pending_wire_status", s).oracle[-1].arguments["values"]["status"] for s in range(20))
    assert set(statuses) == {"pending_approval", "completed", "rejected"}, statuses
    assert max(statuses.values()) <= 12, statuses  # no status a policy could bet on


def _case_seed(template_id: str, case: str) -> int:
    """The first seed whose world is ``case`` (a trade's case, or the status of pending_wire_status's wire)."""
    key = "case" if template_id in TRADING else "status"
    return next(s for s in range(60) if _instance(template_id, s).metadata[key] == case)


async def test_the_wire_status_is_read_not_remembered() -> None:
    """On a wire the supervisor already decided, the usual answer (pending, amount and fee held back) fails even
    after reading the wire; and reading another wire does not justify the right answer."""
    seed = _case_seed("pending_wire_status", "completed")
    instance = _instance("pending_wire_status", seed)
    *work, final = instance.oracle
    usual = call("submit_answer", answer="Pending approval.", outcome="completed",
                 values={"status": "pending_approval", "reserved": final.arguments["values"]["reserved"]})
    with anyio.fail_after(120):
        grade, _ = await _play("pending_wire_status", seed, [*work, usual])
        assert not grade.passed and "answer gives the status" in grade.failed_gates
        other = _instance("pending_wire_status", _case_seed("pending_wire_status", "pending_approval")).metadata["transfer_id"]
        assert other != instance.metadata["transfer_id"]
        grade, _ = await _play("pending_wire_status", seed, [call("get_transfer", transfer_id=other), final])
        assert not grade.passed and "saw the wire's status" in grade.failed_gates
        grade, _ = await _play("pending_wire_status", seed, instance.oracle)
        assert grade.passed, grade.summary()


@pytest.mark.parametrize(("template_id", "read"), [("available_balance", "list_accounts"), ("position_value", "get_positions"),
                                                   ("portfolio_total", "get_positions"), ("category_spend", "search_transactions")])
async def test_a_lookup_of_another_customer_does_not_justify_the_figure(template_id: str, read: str) -> None:
    """Observed on main: look-up gates accepted any call of the tool. Reading another customer's record and giving
    this one's figure fails the gate bound to this customer's record."""
    instance, other = _instance(template_id, 0), _instance(template_id, 1)
    assert other.metadata["account_id"] != instance.metadata["account_id"]
    foreign = next(step for step in other.oracle if step.tool == read)
    with anyio.fail_after(60):
        grade, _ = await _play(template_id, 0, [foreign, instance.oracle[-1]])
    assert not grade.passed and grade.gated, grade.summary()


_ATTEMPTS = ("attempts_order", "attempts_sale")


@pytest.mark.parametrize("template_id", TRADING)
async def test_the_tools_refuse_with_the_code_each_refusal_declares(template_id: str) -> None:
    """On each refusal seed the world really holds the deciding fact: the order the customer asked for is refused by
    the tool with exactly the code the oracle declares, and trying it fails the task even when the refusal follows."""
    codes = set()
    with anyio.fail_after(300):
        for seed in range(20):
            instance = _instance(template_id, seed)
            outcome, code = _declared(instance)
            if outcome != "refused" or code in codes:
                continue
            attempt = next(n for n in instance.negatives if n.name in _ATTEMPTS)
            grade, played = await _play(template_id, seed, list(attempt.calls))
            order = next(p for p in played if p.call.tool == "place_order")
            assert order.error_code == code, (seed, order)
            assert not grade.passed and grade.gated, grade.summary()
            codes.add(code)
    assert len(codes) >= 1


@pytest.mark.parametrize("template_id", TRADING)
async def test_the_compliant_twin_is_not_refused(template_id: str) -> None:
    """Where the world allows the trade, the oracle passes and declining it (after reading) fails the declared outcome."""
    seed = _case_seed(template_id, "ok")
    instance = _instance(template_id, seed)
    refusal = next(n for n in instance.negatives if n.name.startswith("refuses_"))
    with anyio.fail_after(120):
        grade, _ = await _play(template_id, seed, list(refusal.calls))
        assert not grade.passed and "declared outcome" in grade.failed_gates
        grade, _ = await _play(template_id, seed, instance.oracle)
        assert grade.passed, grade.summary()


@pytest.mark.parametrize("template_id", TRADING + ("pending_wire_status",))
async def test_another_seeds_oracle_with_this_prompts_facts_fails(template_id: str) -> None:
    """A policy replaying another instance of the same case, with this prompt's names, amounts and symbols put in,
    calls the other instance's customer and account (each seed plants its own client): it fails."""
    instances = [_instance(template_id, s) for s in range(12)]
    label = "case" if template_id in TRADING else "status"
    played = 0
    with anyio.fail_after(300):
        for case in sorted({i.metadata[label] for i in instances}):
            same = [(s, i) for s, i in enumerate(instances) if i.metadata[label] == case]
            for (_, source), (seed, target) in list(pairwise(same))[:1]:
                calls = substitute(source.oracle, source.prompt, target.prompt)
                if (template_id, case) in _SHOWN_BY_THE_NAME_SEARCH:
                    # the prompt's name, searched, lists this customer with their KYC status: that search read this
                    # instance's deciding fact (issue 25: what was seen counts); without it the replay has nothing
                    calls = [c for c in calls if c.tool != "search_customers"]
                grade, _ = await _play(template_id, seed, calls)
                assert not grade.passed, (template_id, case, seed, grade.summary())
                played += 1
    assert played >= 2, template_id


_SHOWN_BY_THE_NAME_SEARCH = {("buy_suitable", "kyc_lapsed")}
"""Cases whose deciding fact a search by the customer's name shows (a search hit carries the KYC status)."""
