"""Agents, the runner, metrics, results and the toolgym CLI."""
