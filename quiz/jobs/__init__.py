"""What a generation job runs on, whether it writes a round or checks one: the writer's settings (conf.py) and their
start-up checks (checks.py), the state every job shares (job_state.py: heartbeat, staleness, broadcast, failing),
its events (events.py) and the signed token of its page (tokens.py)."""
