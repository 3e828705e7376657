"""The customer on the line: ask them for a piece of information, or propose a resolution and hear their answer.

The customer is simulated from the persona the task planted (``fixtures.persona``): they know some things
(their order number, e-mail, date of birth, a photo) and not others, and they agree to some resolutions and
not others. The structured part of each reply is deterministic; the words may come from a model when
``TOOLGYM_CUSTOMER_BASE_URL`` and ``TOOLGYM_CUSTOMER_MODEL`` are set.
"""

from __future__ import annotations

from envs.support.types import Amount, Resolution, Topic
from fixtures.persona import CustomerAnswer, CustomerResponse, CustomerVoice, Persona, ask, load_persona, propose
from servers.tools import DomainError, ToolContext, tool

__all__ = ["ask_customer", "propose_resolution"]


def _persona(ctx: ToolContext) -> Persona:
    persona = load_persona(ctx.world)
    if persona is None:
        raise DomainError("no_customer_on_line", "no customer is on the line in this episode (free play): there is nobody to ask")
    return persona


async def _voiced(ctx: ToolContext, persona: Persona, agent_said: str, scripted: str) -> str:
    voice = CustomerVoice.from_env()
    if voice is None:
        return scripted
    ctx.reached_outside()  # a model words it: this answer is never remembered or taken over by another episode
    try:
        return await voice.say(persona, agent_said, scripted)
    finally:
        await voice.aclose()


@tool(title="Ask the customer", pure=CustomerVoice.scripted)
async def ask_customer(ctx: ToolContext, topic: Topic) -> CustomerAnswer:
    """Ask the customer you are helping for one piece of information: their order number, the e-mail on their account,
    their date of birth (for identity checks), which item, a photo (you get its attachment id), the reason, what
    they would like, a new address, another account's e-mail, a coupon code or a ticket number. They tell you only
    what they know. Ask instead of guessing: ids from the records are not proof of what the customer means."""
    persona = _persona(ctx)
    answer = ask(persona, topic)
    text = await _voiced(ctx, persona, f"Could you give me your {topic.replace('_', ' ')}?", answer.text)
    return answer.model_copy(update={"text": text})


@tool(title="Propose a resolution", pure=CustomerVoice.scripted)
async def propose_resolution(ctx: ToolContext, resolution: Resolution, amount: Amount | None = None) -> CustomerResponse:
    """Propose a resolution to the customer (with the amount, for money) and hear whether they agree. Agree every
    refund, credit, replacement, exchange, cancellation or account change with the customer before you make it;
    if they decline, do not make it."""
    persona = _persona(ctx)
    response = propose(persona, resolution, amount)
    offer = resolution.replace("_", " ") + (f" of {amount} USD" if amount else "")
    text = await _voiced(ctx, persona, f"I can offer you a {offer}.", response.text)
    return response.model_copy(update={"text": text})
