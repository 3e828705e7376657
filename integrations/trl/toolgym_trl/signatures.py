"""An MCP tool as a Python function TRL can show a model: typed parameters and a Google-style docstring.

TRL takes an environment's public methods as its tools and renders each one's schema with transformers'
``get_json_schema``, which reads type hints and the docstring's ``Args:``. toolgym's tools are known only at
run time (from the server), so each is given a signature and a docstring built from its JSON schema: scalar
types, arrays and objects map to ``str``/``int``/``float``/``bool``/``list``/``dict``, an ``enum`` to a
``(choices: [...])`` note (which transformers turns back into an enum), and a parameter the schema does not
require gets a ``None`` default (so it is not required either).
"""

from __future__ import annotations

import inspect
import json
import keyword
from collections.abc import Callable
from typing import Any, Optional

__all__ = ["as_function", "python_type"]

_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict}


def python_type(schema: dict[str, Any]) -> Any:
    """The Python annotation for a JSON schema (``anyOf`` with ``null`` becomes ``Optional``)."""
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        kinds = [o for o in options if o.get("type") != "null"]
        inner = python_type(kinds[0]) if len(kinds) == 1 else str
        return Optional[inner] if len(kinds) < len(options) else inner  # noqa: UP045 - transformers parses typing.Optional
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        inner = _SCALARS.get(kinds[0], str) if len(kinds) == 1 else str
        return Optional[inner] if "null" in kind else inner  # noqa: UP045
    if kind is None and "enum" in schema:
        return str
    return _SCALARS.get(kind, str)


def _describe(name: str, schema: dict[str, Any]) -> str:
    text = " ".join(str(schema.get("description") or schema.get("title") or name).split())
    options = schema.get("enum") or next((o.get("enum") for o in schema.get("anyOf") or [] if o.get("enum")), None)
    if options:
        text += f" (choices: {json.dumps(options)})"
    return text


def as_function(tool: dict[str, Any], call: Callable[[str, dict[str, Any]], Any]) -> Callable[..., Any]:
    """A method ``(self, **arguments)`` named after the MCP ``tool`` (name, description, inputSchema) whose
    signature and docstring state its parameters; calling it runs ``call(self, name, arguments)``.

    Raises:
        ValueError: the tool or one of its parameters has a name Python cannot use as one.
    """
    name = tool["name"]
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"tool {name!r}: not a Python identifier, so TRL cannot offer it as an environment method")
    schema = tool.get("inputSchema") or {}
    properties: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    lines = []
    for param, spec in sorted(properties.items(), key=lambda item: item[0] not in required):
        if not param.isidentifier() or keyword.iskeyword(param):
            raise ValueError(f"tool {name!r}: parameter {param!r} is not a Python identifier")
        annotation = python_type(spec)
        default = inspect.Parameter.empty if param in required else None
        if default is None and getattr(annotation, "__origin__", None) is None:
            annotation = Optional[annotation]  # noqa: UP045
        parameters.append(inspect.Parameter(param, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation))
        annotations[param] = annotation
        lines.append(f"    {param}: {_describe(param, spec)}")
    annotations["return"] = str
    summary = " ".join(str(tool.get("description") or name).split())
    doc = summary + ("\n\nArgs:\n" + "\n".join(lines) if lines else "") + "\n\nReturns:\n    The tool's result, as the model is shown it."

    def method(self: Any, **arguments: Any) -> str:
        return call(self, name, arguments)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = doc
    method.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    return method
