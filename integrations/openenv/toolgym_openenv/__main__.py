"""``python -m toolgym_openenv --server URL``: serve a toolgym server's environment to OpenEnv clients."""

from toolgym_openenv.server import main

main()
