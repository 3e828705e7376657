"""One module per ``toolgym`` subcommand; see clients/cli.py for the contract and the list."""
