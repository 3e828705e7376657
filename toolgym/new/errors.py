"""The error ``toolgym new`` raises for what a user gave it: a source it cannot read, a spec it cannot use."""

from __future__ import annotations

from fixtures.errors import ToolgymError

__all__ = ["NewError"]


class NewError(ToolgymError):
    """A source database or spec file ``toolgym new`` cannot use; the message names the thing and the fix."""
