"""The host's round pages: the views (views.py) and the reads and writes of a host's own rounds, scoped to the
session's owner key (host_rounds.py)."""
