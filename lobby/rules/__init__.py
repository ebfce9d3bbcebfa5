"""The game's rules: phases, transitions, scoring, streaks, voids and the crowd's verdict (`machine.py`),
teams' names, places and scores (`teams.py`), what a nickname may be (`nicknames.py`), the order a room
shows a question's options in (`showing.py`) and the ways to play a host sets, one entry each (`ways.py`).
`machine.py` and `teams.py` are pure (import-linter checks it: no Django, Channels or asgiref); nothing here
reads or writes the database, and `lobby.models` builds on it.
"""
