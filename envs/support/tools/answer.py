"""The answer tool: how the agent hands in its final answer (graders read it from the call's arguments).

The kit's answer tool (:func:`servers.answer.answer_tool`) with the shop's choices and wording: its
``outcome`` and ``reason_code`` choices are the policy's (``rules.OUTCOMES`` / ``rules.REASON_CODES``), so the
schema the agent reads lists them, and graders accept exactly these (``Environment.outcomes``).
"""

from __future__ import annotations

from envs.support import models as m
from envs.support.rules import OUTCOMES, REASON_CODES, now_iso
from servers.answer import answer_tool

__all__ = ["submit_answer"]

submit_answer = answer_tool(
    outcomes=OUTCOMES,
    reason_codes=REASON_CODES,
    receipt=m.AnswerReceipt,
    now=now_iso,
    answer_help="Your final answer, in plain words",
    values_help='Named figures the task asks for, as strings, e.g. {"refund": "42.50"}',
    description="Give your final answer when the case is done, or cannot be done under the policy. "
    "Declare the outcome (and,\n"
    "when refusing or escalating, the reason code of the rule); put the figures the task asks for in `values`, and\n"
    "nothing else there. Call it once, last: it changes nothing in the shop's systems.",
)
