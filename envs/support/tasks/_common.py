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
from graders.criteria import AnswerCheck, CallOrder, ToolCalled, ToolNotCalled, fact, number, seen, state
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
    "in_their_words",
    "ask",
    "offer",
    "verify",
    "answer",
    "refusal",
    "escalation",
    "asked",
    "agreed_first",
    "seen",
    "fact",
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


_FIRST_PERSON = {"their": "my", "they": "I", "them": "me", "themselves": "myself", "theirs": "mine"}


def in_their_words(wants: str) -> str:
    """What a persona wants (``"to know where their parcel is"``), as they would say it: ``"I'd like to know where my
    parcel is."``"""
    said = re.sub(r"\b(their|they|them|themselves|theirs)\b", lambda m: _FIRST_PERSON[m.group(1)], wants)
    return f"I'd like {said}."


def on_the_line(world: World, customer: dict[str, Any] | None, wants: str, *, identity: bool = True, name: str | None = None,
                terms: dict[str, Terms] | None = None, says: dict[str, str] | None = None, **facts: str) -> Persona:
    """Plant the customer the agent talks to: by default they know their name, e-mail and date of birth
    (``identity=False``: only their name), plus ``facts`` (topic → value), and answer ``terms``; ``says`` gives their
    words for a topic (for one they know nothing of: what they say instead, e.g. that they have no order number).

    Asked what they would like or why they got in touch, every customer answers (with ``facts`` when the story gives
    the answer, else with what they want, in their own words): a careful agent asks, and "Sorry, I don't have that to
    hand" would be an answer no customer gives about their own request (``Environment.persona_topics``)."""
    known: dict[str, str] = {}
    if customer is not None:
        known["full_name"] = full_name(customer)
        if identity:
            known["email"], known["date_of_birth"] = customer["email"], customer["date_of_birth"]
    known.update(facts)
    known.setdefault("preferred_resolution", in_their_words(wants))
    known.setdefault("reason", in_their_words(wants))
    persona = Persona(name=name or (full_name(customer) if customer else "the caller"), wants=wants, facts=known, terms=terms or {},
                      says=says or {})
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


def asked(topic: str, name: str | None = None, *, weight: float = 1.0, before_acting: bool = False) -> ToolCalled:
    """A gate: the agent asked the customer for ``topic`` (instead of guessing it from the records); with
    ``before_acting``, before its first act on the world (a passed identity check aside) or, when it never acts,
    before its answer — a question asked after acting on a guess is not the one the policy requires."""
    return ToolCalled(name=name or f"asked the customer for the {topic.replace('_', ' ')}", tool="ask_customer",
                      args={"topic": topic}, weight=weight, gate=True, before_acting=before_acting)


def agreed_first(resolution: str, then: dict[str, Any] | str, name: str, *, amount: str | None = None) -> CallOrder:
    """A gate: every ``then`` call comes after the customer agreed to ``resolution`` (at ``amount``, when given)."""
    args: dict[str, Any] = {"resolution": resolution}
    if amount is not None:
        args["amount"] = number(amount)
    return CallOrder(name=name, first={"tool": "propose_resolution", "args": args, "result": {"agreed": True}}, then=then,
                     require_then=True)


def never(tool: str, name: str, *, gate: bool = True, **args: Any) -> ToolNotCalled:
    """A forbidden call: even a refused attempt counts."""
    return ToolNotCalled(name=name, tool=tool, args=args, gate=gate)


def value_is(field: str, expected: str, *, weight: float = 2.0, name: str | None = None, gate: bool = False) -> AnswerCheck:
    """The answer's ``values.<field>`` equals ``expected`` as a Decimal (``gate``: when the figure is what the task asks)."""
    return AnswerCheck(name=name or f"answer gives {field.replace('_', ' ')}", field=f"values.{field}", expect=number(expected), weight=weight,
                       gate=gate)


def text_is(field: str, expected: str, *, weight: float = 1.0, name: str | None = None, gate: bool = False) -> AnswerCheck:
    """The answer's ``values.<field>`` is exactly ``expected`` (one value, not a list of candidates); ``gate``: when the
    value is what the task asks for (a question answered wrongly is not partly answered)."""
    return AnswerCheck(name=name or f"answer gives {field.replace('_', ' ')}", field=f"values.{field}", expect=expected, weight=weight, gate=gate)


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


IDENTITY_TOPICS = ("email", "date_of_birth")
"""What the caller says for an identity check: asked before any ``verify_identity`` (never read from the records)."""


def task(*, also_agreed: list[ToolCall] = (), **fields: Any) -> Any:  # type: ignore[assignment]
    """A :class:`TaskDraft` whose rubric also gates what talking to the customer must mean:

    * every question the oracle requires asking (``asked``), unless the rubric already checks that topic: a
      required question nobody checks would not be required at all;
    * each question the oracle asks before it acts comes before the agent acts (or, when it never acts, before
      its answer): a question asked after acting on a guess is not the one the policy requires. A passed identity
      check is process, not an act: verifying the caller before asking which order they mean is as good;
    * the caller's e-mail and date of birth are asked before any identity check (policy section 3: never the
      records' values);
    * every proposal the customer accepts is one the oracle makes — same resolution, same amount — so
      over-offering, offering without the amount, or collecting agreements to incompatible resolutions fails
      (``also_agreed``: further proposals the task accepts, e.g. an equally valid alternative).
    """
    from envs.support import environment
    from graders.criteria import Agreements, agreement_terms
    from graders.tasks import TaskDraft

    rubric = list(fields.pop("rubric"))
    oracle: list[ToolCall] = fields["oracle"]
    specs = environment.tool_specs
    first_act = next((i for i, step in enumerate(oracle) if (spec := specs.get(step.tool)) is not None and spec.mark.mutates
                      and not spec.mark.process and not spec.mark.answer), len(oracle))
    early = {step.arguments.get("topic") for step in oracle[:first_act] if step.tool == "ask_customer" and not step.optional}
    covered: set[str] = set()
    for index, criterion in enumerate(rubric):
        if isinstance(criterion, ToolCalled) and criterion.tool == "ask_customer" and "topic" in criterion.args:
            topic = criterion.args["topic"].value
            covered.add(topic)
            if topic in early and not criterion.before_acting:
                rubric[index] = criterion.model_copy(update={"before_acting": True})
    for step in oracle:
        topic = step.arguments.get("topic")
        if step.tool == "ask_customer" and not step.optional and topic not in covered:
            rubric.insert(0, asked(topic, before_acting=topic in early))
            covered.add(topic)
    verifies = [i for i, step in enumerate(oracle) if step.tool == "verify_identity"]
    for topic in IDENTITY_TOPICS:
        asked_at = [i for i, step in enumerate(oracle) if step.tool == "ask_customer" and step.arguments.get("topic") == topic
                    and not step.optional]
        if verifies and asked_at and asked_at[0] < verifies[0]:
            rubric.append(CallOrder(name=f"asked for the {topic.replace('_', ' ')} before verifying",
                                    first={"tool": "ask_customer", "args": {"topic": topic}}, then="verify_identity"))
    proposals = [step for step in [*oracle, *also_agreed] if step.tool == "propose_resolution"]
    rubric.append(Agreements(name="agreements bind what was done", tool="propose_resolution",
                             expected=[agreement_terms(step.arguments) for step in proposals]))
    return TaskDraft(rubric=rubric, **fields)
