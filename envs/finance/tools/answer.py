"""The answer tool: how the agent hands in its final answer (graders read it from the call's arguments).

The kit's answer tool (:func:`servers.answer.answer_tool`) with the bank's choices and wording: its
``outcome`` and ``reason_code`` choices are the policy's (``rules.OUTCOMES`` / ``rules.REASON_CODES``), so the
schema the agent reads lists them, and graders accept exactly these (``Environment.outcomes``).
"""

from __future__ import annotations

from envs.finance import models as m
from envs.finance.rules import OUTCOMES, REASON_CODES, now_iso
from servers.answer import answer_tool

__all__ = ["submit_answer"]

submit_answer = answer_tool(
    outcomes=OUTCOMES,
    reason_codes=REASON_CODES,
    receipt=m.AnswerReceipt,
    now=now_iso,
    answer_help="Your final answer to the task, in plain words",
    values_help='Named figures the task asks for, as decimal strings, e.g. {"balance": "1234.56"}',
    description="Give your final answer when the task is done, or cannot be done under the policy. "
    "Declare the outcome\n"
    "(escalated if you escalated anything, even when you also did the rest; and, when refusing or escalating, the\n"
    "reason code of the rule); put the figures the task asks for in `values`. Call it once, last: it changes\n"
    "nothing in the bank's systems.",
)
