"""One self-contained HTML page: inline CSS and JS, the report's data as one JSON block, nothing fetched.

Safety, in layers, since every value in a record is untrusted (agent output, world data):

1. The data travels as JSON inside ``<script type="application/json">``, with ``<``, ``>``, ``&`` and the
   JS line separators written as ``\\uXXXX`` escapes — so no ``</script>`` or ``<!--`` can ever appear in
   the block, whatever a memo holds — and the page reads it with ``JSON.parse``.
2. The page's script inserts values only as text (``textContent``, ``createTextNode``, attributes set
   one by one); it never builds HTML from strings.
3. A Content-Security-Policy allows only the page's own inline script and style (by hash) and no network at
   all, so even a slip in 2 could not run a script or fetch anything.

Episode details are big and read one at a time, so past ``compress_over`` bytes they are packed in chunks
of ``CHUNK`` episodes, each deflated and base64-encoded; the page inflates a chunk with the browser's
``DecompressionStream`` when one of its episodes is opened.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import zlib
from collections.abc import Sequence
from importlib import resources
from typing import Any

__all__ = ["script_json", "pack_details", "render_page", "CHUNK", "COMPRESS_OVER"]

CHUNK = 32
"""Episodes per packed chunk: small enough to inflate in milliseconds, big enough to share vocabulary."""

COMPRESS_OVER = 1_000_000
"""Bytes of episode details (as JSON) above which they are packed by default."""

_SCRIPTS = ("util.js", "timeline.js", "episode.js", "run.js", "compare.js", "main.js")
"""The page's script, in order (one IIFE once concatenated)."""

_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def script_json(value: Any) -> str:
    """``value`` as JSON safe to place inside a ``<script type="application/json">`` element.

    Raises:
        ValueError: the value holds NaN or infinity (not JSON; readers of records turn them into strings).
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
    return text.translate(_ESCAPES)


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)


def pack_details(details: Sequence[dict[str, Any]], *, compress: bool | None = None) -> dict[str, Any]:
    """Episode details as the page reads them: inline (``plain``) or in deflated base64 chunks (``deflate``).

    Args:
        details: one dict per episode, in the run's episode order.
        compress: force packing on or off; None packs when the details exceed :data:`COMPRESS_OVER` bytes.
    """
    if compress is None:
        compress = sum(len(_json_text(d)) for d in details) > COMPRESS_OVER
    if not compress:
        return {"mode": "plain", "items": list(details)}
    chunks = []
    for start in range(0, len(details), CHUNK):
        raw = _json_text(list(details[start : start + CHUNK])).encode("utf-8")
        chunks.append(base64.b64encode(zlib.compress(raw, 6)).decode("ascii"))
    return {"mode": "deflate", "chunk": CHUNK, "chunks": chunks}


def _asset(name: str) -> str:
    return resources.files("clients.view").joinpath("assets", name).read_text(encoding="utf-8")


def _script() -> str:
    body = "\n".join(_asset(name) for name in _SCRIPTS)
    return f'\n(function () {{\n"use strict";\n{body}\n}})();\n'


def _hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def render_page(data: dict[str, Any], *, title: str) -> str:
    """The whole HTML document for ``data`` (a report payload: kind, runs, comparison...)."""
    script = _script()
    style = "\n" + _asset("report.css")
    policy = (
        f"default-src 'none'; script-src '{_hash(script)}'; style-src '{_hash(style)}'; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy, quote=False)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="toolgym view">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{style}</style>\n</head>\n<body>\n"
        '<header id="bar"><a id="home" href="#/">toolgym</a><nav id="crumbs"></nav></header>\n'
        '<main id="app"><p class="muted">Loading the report…</p></main>\n'
        "<noscript><p>This report is drawn by JavaScript; enable it to read the report.</p></noscript>\n"
        f'<script type="application/json" id="toolgym-data">{script_json(data)}</script>\n'
        f"<script>{script}</script>\n"
        "</body>\n</html>\n"
    )
