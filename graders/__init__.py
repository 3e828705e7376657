"""Rubric criteria, grading with evidence, tasks and meta-evaluation."""
