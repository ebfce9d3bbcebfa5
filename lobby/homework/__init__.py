"""Homework: a round played alone before a deadline. Its rules (`services.py`) and its pages and players'
JSON endpoints (`views.py`).
"""
