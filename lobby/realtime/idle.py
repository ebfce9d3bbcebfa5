"""A room socket that has not said who it is (join, resume or host) within WS_JOIN_TIMEOUT seconds is closed:
until then it receives nothing and holds one of its address's WS_MAX_PER_IP places (config/socket_cap.py), so a
socket left idle (1,000 of them from one address were once accepted and kept) frees its place by itself.

Each attempt to say who it is stops the clock until it is answered, and one refused (a taken nickname, say) gives
the socket a new full window: the person is there, typing. The app's own player page opens its socket before the
nickname is typed; when that socket is closed for idling it reconnects only when the page next sends
(static/js/live.js), so a slow typist loses nothing.
"""

import asyncio

from django.conf import settings

JOIN_TIMEOUT_CLOSE_CODE = 4408  # an application code in the 4000s, like HTTP's 408 Request Timeout
JOIN_TIMEOUT_REASON = "say who you are (join, resume or host) sooner"
IDENTIFYING = {"join", "resume", "host"}


class JoinDeadline:
    """Closes `consumer` (a RoomConsumer) unless its `role` is set before the deadline."""

    def __init__(self, consumer):
        self.consumer = consumer
        self.loop = asyncio.get_running_loop()
        self.timer: asyncio.TimerHandle | None = None
        self.closing: asyncio.Task | None = None
        self._arm()

    def _arm(self) -> None:
        self.cancel()
        self.timer = self.loop.call_later(settings.WS_JOIN_TIMEOUT, self._expire)

    def _expire(self) -> None:
        self.timer = None
        if self.consumer.role is None:
            self.closing = self.loop.create_task(
                self.consumer.close(code=JOIN_TIMEOUT_CLOSE_CODE, reason=JOIN_TIMEOUT_REASON)
            )

    def attempt(self, message_type: str) -> None:
        """A frame arrived: a try at joining, resuming or hosting stops the clock while the server works on it.
        Thousands joining at once queue for the database: a phone that has said who it is, waiting for its
        answer, is not idle (a room of 10,000 filling up closed its joins in flight, bench/ws_load.py)."""
        if message_type in IDENTIFYING and self.consumer.role is None:
            self.cancel()

    def settled(self) -> None:
        """A frame has been handled: a socket still nobody (a join refused) gets a new full window."""
        if self.consumer.role is None and self.timer is None:
            self._arm()

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
