"""A tiny chat model made at run time — random weights and a word-level tokenizer, nothing downloaded — that
issues real tool calls, for showing the toolgym ↔ TRL loop on a CPU in seconds.

The tokenizer speaks TRL's own Qwen3 chat template (shipped inside the ``trl`` package), so TRL renders the
tools and parses the model's tool calls exactly as it does for Qwen3. Its vocabulary is ChatML's special
tokens and roles, ``[UNK]`` (every other prompt word), Qwen3's ``<tool_call>`` / ``</tool_call>`` delimiters,
and one token per *move*: the JSON of a whole tool call. The moves come from the caller (the example uses the
calls of each training instance's reference solution, read with the control token by the operator who runs
it). Decoding is constrained the way serving stacks constrain structured output (:func:`decoding`: suppressed
tokens and bigram biases for ``generate``), so a completion is a well-formed run of tool calls — random moves in
a random order, repeated or none at all — and rollouts earn toolgym grades across the range. A real run uses a
real model and its own tokenizer, and nothing here.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["tiny_tokenizer", "tiny_model", "move_text", "decoding"]

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_response>", "</tool_response>"]


OPEN, CLOSE = "<tool_call>", "</tool_call>"


def move_text(tool: str, arguments: dict[str, Any]) -> str:
    """A tool call's JSON as Qwen3 writes it between ``<tool_call>`` and ``</tool_call>``."""
    return "\n" + json.dumps({"name": tool, "arguments": arguments}, ensure_ascii=False) + "\n"


def tiny_tokenizer(moves: list[str]) -> Any:
    """A ``PreTrainedTokenizerFast`` with TRL's Qwen3 chat template, ChatML's special tokens and one token per move."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen3_chat_template

    words = ["[UNK]", "system", "user", "assistant", "tool"]  # the roles: TRL finds turns by "<|im_start|>assistant"
    core = Tokenizer(models.WordLevel(vocab={word: index for index, word in enumerate(words)}, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.decoder = decoders.Fuse()  # added tokens are whole texts: joined as they are
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="[UNK]", eos_token="<|im_end|>", pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL,
    )
    tokenizer.add_tokens([OPEN, CLOSE, "\n"] + sorted(set(moves)))
    tokenizer.chat_template = qwen3_chat_template
    tokenizer.padding_side = "left"
    return tokenizer


def tiny_model(tokenizer: Any, seed: int = 0) -> Any:
    """A two-layer Qwen3 with random weights sized for ``tokenizer`` (a few thousand parameters)."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, max_position_embeddings=32768, tie_word_embeddings=True,
        bos_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
    )
    return Qwen3ForCausalLM(config)


def decoding(tokenizer: Any, moves: list[str], calls: float = 2.0) -> dict[str, Any]:
    """``generate`` arguments that keep the tiny model to the grammar ``(<tool_call> MOVE </tool_call>)* <|im_end|>``:
    every other token suppressed, and bigram biases (``sequence_bias``) large enough to outweigh random logits;
    about ``calls`` calls per turn on average."""
    ids = {text: tokenizer.convert_tokens_to_ids(text) for text in (OPEN, CLOSE, "\n")}
    move_ids = sorted({tokenizer.convert_tokens_to_ids(move) for move in moves})
    eos = tokenizer.eos_token_id
    allowed = {ids[OPEN], ids[CLOSE], eos, *move_ids}
    strong, go = 40.0, 20.0
    stop = go - math.log(calls)  # after a call: another one or the end, ``calls`` to 1
    bias = [[[ids[OPEN], move], strong] for move in move_ids] + [[[move, ids[CLOSE]], strong] for move in move_ids]
    for previous in (ids["\n"], ids[CLOSE]):  # the turn starts after the generation prompt's newline
        bias += [[[previous, ids[OPEN]], go], [[previous, eos], stop]]
    return {"suppress_tokens": [i for i in range(len(tokenizer)) if i not in allowed], "sequence_bias": bias}
