"""Writes a tiny chat tokenizer to a folder (run with a python that has ``transformers``); nothing is downloaded.

A word-level vocabulary (ChatML's special tokens, a few words, ``[UNK]`` for the rest) and a ChatML chat template
that renders tool schemas, assistant tool calls and tool results, prefix-preserving: what an Atropos environment
tokenizes a tool conversation with, made at run time instead of fetched from a hub.

Usage: ``python tiny_tokenizer.py FOLDER``.
"""

from __future__ import annotations

import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]
WORDS = ["[UNK]", "system", "user", "assistant", "tool", "tools", "#", "{", "}", ":", ",", '"', "name", "arguments"]

CHAT_TEMPLATE = """\
{%- if tools or (messages and messages[0].role == 'system') %}<|im_start|>system
{% if messages and messages[0].role == 'system' %}{{ messages[0].content }}
{% endif %}{% if tools %}# Tools
{% for tool in tools %}{{ tool | tojson }}
{% endfor %}{% endif %}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == 'system' %}
{%- elif message.role == 'assistant' %}<|im_start|>assistant
{% if message.content %}{{ message.content }}{% endif %}{% for call in message.tool_calls or [] %}<tool_call>{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}</tool_call>{% endfor %}<|im_end|>
{% else %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""


def main(folder: str) -> None:
    vocab = {token: index for index, token in enumerate(SPECIAL + WORDS)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.decoder = decoders.WordPiece()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="[UNK]", eos_token="<|im_end|>", pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL[1:],
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)


if __name__ == "__main__":
    main(sys.argv[1])
