"""``python -m envs.support serve ...``: serve the support environment over MCP (see ``servers.cli``)."""

from servers.cli import serve_main

serve_main("support")
