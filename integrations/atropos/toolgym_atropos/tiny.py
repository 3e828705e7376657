"""``--env.tokenizer_name toolgym-tiny``: a tiny chat tokenizer made at run time, for trying the environment where
no model hub is reachable (nothing is downloaded). Train with your policy model's own tokenizer instead.

A word-level vocabulary (ChatML's special tokens, a few words, ``[UNK]`` for the rest) and a ChatML chat template
that renders tool schemas, assistant tool calls and tool results, prefix-preserving. It is written once to
``$TOOLGYM_CACHE_DIR/tokenizers`` (default ``~/.cache/toolgym/tokenizers``) and loaded from there like any other.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["TINY", "tiny_tokenizer_dir", "write_tiny_tokenizer"]

TINY = "toolgym-tiny"
"""The ``tokenizer_name`` that asks for this tokenizer."""
VERSION = 1

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


def write_tiny_tokenizer(folder: str | Path) -> None:
    """Write the tokenizer's files into ``folder``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {token: index for index, token in enumerate(SPECIAL + WORDS)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.decoder = decoders.WordPiece()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="[UNK]", eos_token="<|im_end|>", pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL[1:],
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(str(folder))


def tiny_tokenizer_dir() -> Path:
    """The tokenizer's folder, written on first use (atomically: concurrent processes each write, one wins)."""
    root = Path(os.environ.get("TOOLGYM_CACHE_DIR") or Path.home() / ".cache" / "toolgym") / "tokenizers"
    folder = root / f"{TINY}-{VERSION}"
    if (folder / "tokenizer_config.json").exists():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{TINY}-", dir=root))
    write_tiny_tokenizer(scratch)
    try:
        scratch.rename(folder)
    except OSError:  # another process got there first
        shutil.rmtree(scratch, ignore_errors=True)
    return folder
