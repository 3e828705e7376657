"""A toolgym environment served as an OpenEnv environment, bridged to a running toolgym server.

OpenEnv (``fastmcp>=3``) and toolgym (``mcp>=2.3``) cannot share a virtual environment, so this package
talks to toolgym over HTTP only (``toolgym-remote``): start ``toolgym serve ENV --transport http``, then
``toolgym-openenv --server URL`` (or :func:`create_toolgym_app` in your own ASGI server), and drive it with
any OpenEnv client: ``reset``, ``step`` with ``call_tool`` / ``list_tools`` actions, ``state``.
"""

from toolgym_openenv.environment import ToolgymEnvironment, ToolgymObservation, ToolgymState
from toolgym_openenv.server import create_toolgym_app, main

__all__ = ["ToolgymEnvironment", "ToolgymObservation", "ToolgymState", "create_toolgym_app", "main"]
