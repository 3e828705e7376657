"""Whether a Ray cluster address answers at all, asked before ``ray.init`` is.

``ray.init(address="HOST:PORT")`` with nothing listening there does not fail: Ray's GCS client logs a
connection warning every few seconds and keeps waiting (a minute or more). A run given a wrong address
should fail within seconds with one line, as ``--ray auto`` does when this machine joined no cluster, so the
address is first tried with a plain TCP connection. Importable without Ray.
"""

from __future__ import annotations

import socket

from clients.errors import RunError

__all__ = ["check_reachable", "split_address", "PROBE_TIMEOUT", "DEFAULT_GCS_PORT"]

PROBE_TIMEOUT = 3.0
"""Seconds to wait for the cluster's GCS port to accept a connection."""

DEFAULT_GCS_PORT = 6379
"""The port ``ray start --head`` listens on unless told otherwise."""

_NOT_ADDRESSES = ("local", "auto")


def split_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a cluster address (``10.0.0.5:6379``, ``ray://host:10001``, ``[::1]:6379``), or None
    for the addresses that are not a place (``local``, ``auto``)."""
    text = address.strip()
    if text in _NOT_ADDRESSES:
        return None
    if "://" in text:
        text = text.split("://", 1)[1]
    text = text.split("/", 1)[0]
    if text.startswith("["):  # an IPv6 literal
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:
        host, port = text, ""
    try:
        number = int(port) if port else DEFAULT_GCS_PORT
    except ValueError:
        raise RunError(f"--ray {address!r}: not a cluster address (expected HOST:PORT, e.g. 10.0.0.5:6379)") from None
    return host or "127.0.0.1", number


def check_reachable(address: str, *, timeout: float = PROBE_TIMEOUT) -> None:
    """Raise a one-line :class:`RunError` unless something accepts connections at ``address``.

    Raises:
        RunError: a malformed address, a host that does not resolve, nothing listening, or no answer within
            ``timeout`` seconds.
    """
    place = split_address(address)
    if place is None:
        return
    host, port = place
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        why = "no answer" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)
        raise RunError(
            f"cannot reach a Ray cluster at {address} ({why} within {timeout:g}s); start one with "
            "`ray start --head` on its head node, or use --ray alone to start one on this machine"
        ) from None
