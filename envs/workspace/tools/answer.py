"""The answer tool: how the agent hands in its final answer (graders read it from the call's arguments).

The kit's answer tool (:func:`servers.answer.answer_tool`) with the workspace's choices and wording: its
``outcome`` and ``reason_code`` choices are the policy's (``rules.OUTCOMES`` / ``rules.REASON_CODES``).
"""

from __future__ import annotations

from envs.workspace import models as m
from envs.workspace.rules import OUTCOMES, REASON_CODES, now_iso
from servers.answer import answer_tool

__all__ = ["submit_answer"]

submit_answer = answer_tool(
    outcomes=OUTCOMES,
    reason_codes=REASON_CODES,
    receipt=m.AnswerReceipt,
    now=now_iso,
    answer_help="Your final answer to the person who asked, in plain words",
    values_help='Named values the request asks for, as strings, e.g. {"issue": "ISS-00412"}',
    description="Give your final answer when the request is done, or cannot be done under the policy. Declare the "
    "outcome (and,\nwhen refusing or escalating, the reason code of the rule); put the values the request asks for in "
    "`values`, and\nnothing else there. Call it once, last: it changes nothing in the workspace.",
)
