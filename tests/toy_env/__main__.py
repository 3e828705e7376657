"""``python -m tests.toy_env serve ...``: the toy bank through the same serve CLI as real environments."""

from __future__ import annotations

from servers.cli import serve_main
from tests.toy_env import environment

if __name__ == "__main__":
    serve_main(environment)
