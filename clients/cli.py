"""The toolgym command line (placeholder until the CLI lands)."""


def main() -> None:
    """Entry point of the ``toolgym`` console script."""
    raise SystemExit("toolgym: CLI not built yet")
