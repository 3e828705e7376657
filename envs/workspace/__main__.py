"""``python -m envs.workspace serve ...``: serve the workspace environment over MCP (see ``servers.cli``)."""

from servers.cli import serve_main

serve_main("workspace")
