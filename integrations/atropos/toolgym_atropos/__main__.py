"""``python -m toolgym_atropos serve|process|evaluate ...``."""

from toolgym_atropos.env import main

main()
