"""The colleague in chat: ask them for a piece of information, or propose a decision and hear whether they confirm.

The colleague is simulated from the persona the task planted (``fixtures.persona``): they know some things and
not others, and confirm some decisions and not others. The structured part of each reply is deterministic; the
words may come from a model when ``TOOLGYM_CUSTOMER_BASE_URL`` and ``TOOLGYM_CUSTOMER_MODEL`` are set.
"""

from __future__ import annotations

from envs.workspace.types import Proposal, Topic
from fixtures.persona import CustomerAnswer, CustomerResponse, CustomerVoice, Persona, ask, load_persona, propose
from servers.tools import DomainError, ToolContext, tool

__all__ = ["ask_colleague", "propose_to_colleague"]


def _persona(ctx: ToolContext) -> Persona:
    persona = load_persona(ctx.world)
    if persona is None:
        raise DomainError("no_colleague_in_chat", "nobody is waiting on you in chat in this episode (free play): there is nobody to ask")
    return persona


async def _voiced(ctx: ToolContext, persona: Persona, agent_said: str, scripted: str) -> str:
    voice = CustomerVoice.from_env(role="a colleague asking an assistant for help in the company's chat")
    if voice is None:
        return scripted
    ctx.reached_outside()  # a model words it: this answer is never remembered or taken over by another episode
    try:
        return await voice.say(persona, agent_said, scripted)
    finally:
        await voice.aclose()


@tool(title="Ask colleague", pure=CustomerVoice.scripted)
async def ask_colleague(ctx: ToolContext, topic: Topic) -> CustomerAnswer:
    """Ask the colleague who brought you this request for one piece of information (what happened, which service, the
    error, which issue or page, how long the meeting should be, who takes over...). They tell you only what they know.
    Ask before you act: what the request leaves out is theirs to tell, and an answer heard after acting does not count."""
    persona = _persona(ctx)
    answer = ask(persona, topic)
    text = await _voiced(ctx, persona, f"Could you tell me the {topic.replace('_', ' ')}?", answer.text)
    return answer.model_copy(update={"text": text})


@tool(title="Propose to colleague", pure=CustomerVoice.scripted)
async def propose_to_colleague(ctx: ToolContext, proposal: Proposal) -> CustomerResponse:
    """Propose a decision to the colleague who brought you this request and hear whether they confirm it. Confirm a
    decision the request leaves open (closing, reassigning, rescheduling, handing over) before acting on it."""
    persona = _persona(ctx)
    response = propose(persona, proposal)
    text = await _voiced(ctx, persona, f"Shall I {proposal.replace('_', ' ')}?", response.text)
    return response.model_copy(update={"text": text})
