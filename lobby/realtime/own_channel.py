"""A socket takes a channel of its own on the channel layer only when something is sent to it there.

Channels gives every consumer a channel at connect and then waits on two things for each message: the phone's
frames and that channel (`await_many_dispatch`: an `asyncio.wait` and a new task per message). A player's socket
needs no channel: its room's events reach it from its process's one subscription (lobby/realtime/fanout.py) and
the heal calls it directly (lobby/realtime/heal.py). Only a host's screen joins a group (the host group's
coalesced lobby and answer counts). On the Redis layer each channel was a subscription of its own: a room of
10,000 phones was 10,000 subscriptions made at join and dropped at leave, and each answer paid for the wait on
two sources (issue 47).

So a socket reads its phone's frames alone until `own_channel()` is called (a host saying who it is); from then on
it reads both, as Channels does."""

import functools

from channels.exceptions import StopConsumer
from channels.layers import get_channel_layer
from channels.utils import await_many_dispatch


class ChannelOnDemand:
    """Put before Channels' consumer class in the bases; `dispatch` and `channel_layer_alias` are the consumer's."""

    channel_name: str | None = None

    async def __call__(self, scope, receive, send):
        self.scope = scope
        self.channel_layer = get_channel_layer(self.channel_layer_alias)
        self.base_send = send
        try:
            while self.channel_name is None:
                await self.dispatch(await receive())
            await await_many_dispatch(
                [receive, functools.partial(self.channel_layer.receive, self.channel_name)], self.dispatch
            )
        except StopConsumer:
            pass

    async def own_channel(self) -> str:
        """This socket's channel on the layer, made at the first call."""
        if self.channel_name is None:
            self.channel_name = await self.channel_layer.new_channel()
        return self.channel_name
