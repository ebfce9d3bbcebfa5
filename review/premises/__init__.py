"""Premise groups (premise.py: questions that share a premise) and their blind re-check (premise_recheck.py, run by the
task in review/tasks.py)."""
