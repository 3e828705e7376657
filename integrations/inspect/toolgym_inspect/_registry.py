"""Imported by inspect through the ``inspect_ai`` entry point: registers the tasks (``toolgym_inspect/<name>``), and
makes tiktoken's ``o200k_base`` available offline when the ``offline`` extra is installed (:mod:`.offline`)."""

from toolgym_inspect.offline import ensure_o200k
from toolgym_inspect.tasks import finance, support, toolgym, workspace  # noqa: F401

ensure_o200k()
