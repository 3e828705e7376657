"""``python -m envs.finance serve ...``: serve the finance environment over MCP (see ``servers.cli``)."""

from servers.cli import serve_main

serve_main("finance")
