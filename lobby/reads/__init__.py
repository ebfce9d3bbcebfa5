"""The game's reads: a room's picture (`selectors.py`) and what it is made of (the host's view
`host_view.py`, the team board `team_board.py`, the picture's rows `picture_rows.py` read straight from a
cursor by `rows.py`), and each server process's newest picture of each room (`standings.py`).
"""
