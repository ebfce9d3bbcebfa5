"""The live socket and its plumbing: the room's WebSocket (`consumers.py`, routed by `routing.py`), what a
socket may send and when (`socket_guard.py`, `idle.py`, `ratelimit.py`), its way into the database
(`game_db.py`, `batching.py`), one subscription per room and process and its frames (`fanout.py`,
`frames.py`), the clock (`clock.py`), and the recovery from outages and lost processes (`heal.py`,
`rebalance.py`, `lost.py`).
"""
