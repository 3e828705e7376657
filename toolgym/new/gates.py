"""The one place a generated template says which read justifies its answer or its refusal.

Every look-up and refusal gate of a generated template is built by :func:`read_gate`: "the agent saw row ``key`` of
``entity`` (its ``fields``)". Today that is a successful call of any tool whose result shows that row: ``get_<entity>``
with its key, or ``search_<plural>`` filtered to the row by its natural key when the search summary shows every
deciding field. When dispatch records which rows and fields each result showed (read provenance), this function
becomes "a result showed (entity, key, fields)", satisfied by any tool — the templates do not change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graders.criteria import AnyToolCalled

if TYPE_CHECKING:
    from toolgym.new.runtime import GeneratedEnvironment

__all__ = ["read_gate"]


def read_gate(gen: GeneratedEnvironment, entity: str, key: Any, fields: list[str], name: str, *, weight: float = 2,
              also: list[dict[str, Any]] = ()) -> AnyToolCalled:  # type: ignore[assignment]
    """A gate: the agent saw row ``key`` of ``entity`` including ``fields`` (see the module docstring); ``also``: other
    calls whose results show the same fact (another chosen row's read, the listing of a row's children)."""
    e = gen.spec.entities[entity]
    patterns: list[dict[str, Any]] = [{"tool": f"get_{entity}", "args": {e.key or "": key}}]
    shown = set(gen.summary_fields(e))
    natural = e.natural_key if e.natural_key in (e.key, None) or e.natural_key in shown else None
    if natural == e.key and e.key is not None and all(f in shown for f in fields) and not gen.is_int(e, e.fields[e.key]):
        patterns.append({"tool": f"search_{e.plural}", "args": {"query": str(key)}})
    return AnyToolCalled(name=name, patterns=[*patterns, *also], gate=True, weight=weight)
