"""The host's web pages: making and running a room (`views.py`, `forms.py`), a game's results and the
host's past games (`results.py`), and a room's audit trail (`audit.py`).
"""
