"""Homework: a round played alone before a deadline. Its rules (`services.py`, the entry point; its one-statement
paths in `at_once.py`, the host's overview in `overview.py`, what they share in `questions.py`; rows written out as
SQL in `rows.py`) and its pages and players' JSON endpoints (`views.py`).
"""
