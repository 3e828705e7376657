"""A tool-calling conversation as the tokens and masks an Atropos trainer takes.

Atropos environments tokenize (``atroposlib.utils.tokenize_for_trainer``), but its helper renders the chat
without the tool schemas the model was shown; here the tools go into every rendering, and the mask keeps
exactly the assistant turns (what the policy produced) — system, user and tool results are ``-100``.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["for_template", "tokens_and_masks"]


def for_template(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI chat messages as Hugging Face chat templates read them (tool-call arguments as objects)."""
    out = []
    for message in messages:
        message = dict(message)
        if message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                function = dict(call.get("function") or {})
                try:
                    function["arguments"] = json.loads(function.get("arguments") or "{}")
                except (TypeError, ValueError):
                    pass  # kept as the model wrote it
                calls.append({**call, "function": function})
            message["tool_calls"] = calls
        if message.get("content") is None:
            message["content"] = ""
        out.append(message)
    return out


def _ids(tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]], prompt: bool) -> list[int]:
    ids = tokenizer.apply_chat_template(messages, tools=tools or None, add_generation_prompt=prompt, tokenize=True, return_dict=False)
    return list(ids)


def tokens_and_masks(tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> tuple[list[int], list[int]]:
    """The whole conversation's token ids, and the same with every position outside an assistant turn at -100.

    An assistant turn spans from the end of the rendering of the messages before it (with the generation
    prompt) to the end of the rendering that includes it; the chat template must be prefix-preserving, as
    training templates are.
    """
    chat = for_template(messages)
    tokens = _ids(tokenizer, chat, tools, prompt=False)
    masks = [-100] * len(tokens)
    for index, message in enumerate(chat):
        if message["role"] != "assistant":
            continue
        start = len(_ids(tokenizer, chat[:index], tools, prompt=True))
        end = len(_ids(tokenizer, chat[: index + 1], tools, prompt=False))
        masks[start:end] = tokens[start:end]
    return tokens, masks
