"""Environments: one package per domain. See envs/README.md for the contract."""
