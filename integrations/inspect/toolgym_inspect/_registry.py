"""Imported by inspect through the ``inspect_ai`` entry point: registers the tasks (``toolgym_inspect/<name>``)."""

from toolgym_inspect.tasks import finance, support, toolgym, workspace  # noqa: F401
