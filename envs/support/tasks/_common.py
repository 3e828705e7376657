"""Helpers every support task template shares: putting a customer on the line, standard calls and criteria,
and the task builder that gates what talking to the customer must mean.

A template reads the world to choose its subject with the task's rng, plants what its story needs (the
persona of the customer on the line above all: what they know and what they agree to), and builds its
oracle, rubric and negatives from what it read — never from hard-coded ids. The standard criteria (declared
outcome, claims consistent with the world, no collateral changes) are added by the grader, so a template
lists only what is specific to its task: the end state, the forbidden calls, the questions the agent had to
ask, the agreement it had to get before acting, the reads that justify its answer, and the figures it asks for.
Picking and planting rows lives beside this module: ``customer_setup``, ``order_setup``, ``parcel_setup`` and
``subscription_setup`` (see ``__init__``).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from envs.support.catalog import NOW, TODAY
from envs.support.ledger import next_world_id as next_id
from fixtures.money import format_minor
from fixtures.persona import Persona, Terms, plant_persona
from fixtures.world import World
from graders.criteria import AnswerCheck, AnyToolCalled, CallOrder, ToolCalled, ToolNotCalled, number, state
from graders.setup import need, one, pick, rows
from graders.tasks import ToolCall, call, optional_call
from graders.tasks import answer_call as answer
from graders.tasks import escalation_call as escalation
from graders.tasks import refusal_call as refusal

__all__ = [
    "NOW",
    "TODAY",
    "AGENT",
    "rows",
    "one",
    "pick",
    "need",
    "next_id",
    "money",
    "full_name",
    "stamp",
    "agree",
    "decline",
    "on_the_line",
    "ask",
    "offer",
    "verify",
    "answer",
    "refusal",
    "escalation",
    "asked",
    "agreed_first",
    "looked_up",
    "never",
    "value_is",
    "text_is",
    "not_mentioning",
    "not_disclosing",
    "state",
    "optional_call",
    "call",
    "task",
]

AGENT = "STF-0100"
"""The support agent the agent acts as (``catalog.AGENT_STAFF_ID``)."""


def money(minor: int) -> str:
    """Cents → the decimal string tools take and return."""
    return format_minor(minor, "USD")


def full_name(customer: dict[str, Any]) -> str:
    """``First Last``."""
    return f"{customer['first_name']} {customer['last_name']}"


def stamp(moment: datetime) -> str:
    """An instant as the tables store it."""
    return moment.isoformat()


# -- the customer on the line ------------------------------------------------------------------------


def agree(reply: str = "Yes, please do that.", min_amount: str | None = None) -> Terms:
    """The customer agrees to this resolution (with ``min_amount``: only at or above it)."""
    return Terms(agrees=True, reply=reply, min_amount=min_amount)


def decline(reply: str = "No, I'd rather not.") -> Terms:
    """The customer declines this resolution."""
    return Terms(agrees=False, reply=reply)


def on_the_line(world: World, customer: dict[str, Any] | None, wants: str, *, identity: bool = True, name: str | None = None,
                terms: dict[str, Terms] | None = None, **facts: str) -> Persona:
    """Plant the customer the agent talks to: by default they know their name, e-mail and date of birth
    (``identity=False``: only their name), plus ``facts`` (topic → value), and answer ``terms``."""
    known: dict[str, str] = {}
    if customer is not None:
        known["full_name"] = full_name(customer)
        if identity:
            known["email"], known["date_of_birth"] = customer["email"], customer["date_of_birth"]
    known.update(facts)
    persona = Persona(name=name or (full_name(customer) if customer else "the caller"), wants=wants, facts=known, terms=terms or {})
    plant_persona(world, persona)
    return persona


def ask(topic: str, *, optional: bool = False) -> ToolCall:
    """``ask_customer(topic)``."""
    return (optional_call if optional else call)("ask_customer", topic=topic)


def offer(resolution: str, amount: str | None = None, *, optional: bool = False) -> ToolCall:
    """``propose_resolution(resolution, amount)``."""
    arguments: dict[str, Any] = {"resolution": resolution}
    if amount is not None:
        arguments["amount"] = amount
    return (optional_call if optional else call)("propose_resolution", **arguments)


def verify(customer: dict[str, Any], *, optional: bool = False) -> ToolCall:
    """``verify_identity`` with what the customer says (their e-mail and date of birth)."""
    return (optional_call if optional else call)("verify_identity", customer_id=customer["customer_id"], email=customer["email"], date_of_birth=customer["date_of_birth"])


# -- criteria ----------------------------------------------------------------------------------------


def asked(topic: str, name: str | None = None, *, weight: float = 1.0) -> ToolCalled:
    """A gate: the agent asked the customer for ``topic`` (instead of guessing it from the records)."""
    return ToolCalled(name=name or f"asked the customer for the {topic.replace('_', ' ')}", tool="ask_customer",
                      args={"topic": topic}, weight=weight, gate=True)


def agreed_first(resolution: str, then: dict[str, Any] | str, name: str, *, amount: str | None = None) -> CallOrder:
    """A gate: every ``then`` call comes after the customer agreed to ``resolution`` (at ``amount``, when given)."""
    args: dict[str, Any] = {"resolution": resolution}
    if amount is not None:
        args["amount"] = number(amount)
    return CallOrder(name=name, first={"tool": "propose_resolution", "args": args, "result": {"agreed": True}}, then=then,
                     require_then=True)


def looked_up(name: str, *patterns: dict[str, Any], weight: float = 1.0) -> AnyToolCalled:
    """A gate: some successful call matches one of ``patterns`` — the read that justifies the answer."""
    return AnyToolCalled(name=name, patterns=list(patterns), weight=weight, gate=True)


def never(tool: str, name: str, *, gate: bool = True, **args: Any) -> ToolNotCalled:
    """A forbidden call: even a refused attempt counts."""
    return ToolNotCalled(name=name, tool=tool, args=args, gate=gate)


def value_is(field: str, expected: str, *, weight: float = 2.0, name: str | None = None) -> AnswerCheck:
    """The answer's ``values.<field>`` equals ``expected`` as a Decimal."""
    return AnswerCheck(name=name or f"answer gives {field.replace('_', ' ')}", field=f"values.{field}", expect=number(expected), weight=weight)


def text_is(field: str, expected: str, *, weight: float = 1.0, name: str | None = None) -> AnswerCheck:
    """The answer's ``values.<field>`` is exactly ``expected`` (one value, not a list of candidates)."""
    return AnswerCheck(name=name or f"answer gives {field.replace('_', ' ')}", field=f"values.{field}", expect=expected, weight=weight)


def not_mentioning(secret: str, name: str) -> AnswerCheck:
    """A gate: the final answer's text does not contain ``secret`` (another customer's data)."""
    from graders.criteria import regex

    return AnswerCheck(name=name, field="answer", expect=regex(f"(?is)(?!.*{re.escape(secret)}).*"), weight=0, gate=True)


def not_disclosing(name: str, *secrets: str, address: dict[str, Any] | None = None) -> Any:
    """A gate: no answer call (any field, normalised) says ``secrets`` or the delivery ``address`` of an order row
    (``ship_line1``... columns) — the street line, the postcode alone, the city (``graders.criteria.AnswerOmits``)."""
    from graders.criteria import AnswerOmits, address_secrets

    protected: dict[str, list[Any]] = {"secrets": [], "together": []}
    if address is not None:
        protected = address_secrets(address["ship_line1"], address["ship_city"], address["ship_postcode"], region=address["ship_region"],
                                    line2=address.get("ship_line2"))
    return AnswerOmits(name=name, secrets=[*secrets, *protected["secrets"]], together=protected["together"])


# -- the task ----------------------------------------------------------------------------------------


def task(*, also_agreed: list[ToolCall] = (), **fields: Any) -> Any:  # type: ignore[assignment]
    """A :class:`TaskDraft` whose rubric also gates what talking to the customer must mean:

    * every question the oracle requires asking (``asked``), unless the rubric already checks that topic: a
      required question nobody checks would not be required at all;
    * each question the oracle asks before its first write comes before *any* write (a question asked after
      acting on a guess is not the one the policy requires);
    * every proposal the customer accepts is one the oracle makes — same resolution, same amount — so
      over-offering, offering without the amount, or collecting agreements to incompatible resolutions fails
      (``also_agreed``: further proposals the task accepts, e.g. an equally valid alternative).
    """
    from envs.support import environment
    from graders.criteria import Agreements, BeforeWrites, agreement_terms
    from graders.tasks import TaskDraft

    rubric = list(fields.pop("rubric"))
    oracle: list[ToolCall] = fields["oracle"]
    covered = {c.args["topic"].value for c in rubric if isinstance(c, ToolCalled) and c.tool == "ask_customer" and "topic" in c.args}
    for step in oracle:
        topic = step.arguments.get("topic")
        if step.tool == "ask_customer" and not step.optional and topic not in covered:
            rubric.insert(0, asked(topic))
            covered.add(topic)
    specs = environment.tool_specs
    for step in oracle:
        spec = specs.get(step.tool)
        if spec is not None and spec.mark.mutates and not spec.mark.answer:
            break
        topic = step.arguments.get("topic")
        if step.tool == "ask_customer" and not step.optional:
            rubric.append(BeforeWrites(name=f"asked for the {str(topic).replace('_', ' ')} before acting",
                                       first={"tool": "ask_customer", "args": {"topic": topic}}))
    proposals = [step for step in [*oracle, *also_agreed] if step.tool == "propose_resolution"]
    rubric.append(Agreements(name="agreements bind what was done", tool="propose_resolution",
                             expected=[agreement_terms(step.arguments) for step in proposals]))
    return TaskDraft(rubric=rubric, **fields)
