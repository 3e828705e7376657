"""Tests of graders/: task format, criteria, grading, meta-evaluation, the pytest plugin, CLI commands."""
