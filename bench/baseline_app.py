"""The framework's own floor: a bare Channels consumer that only joins a room group and relays a
broadcast. bench/ws_load.py runs the same load against it and Quizgate at the same moment."""

import json
import os
import time

import django
from django.conf import settings

if not settings.configured:
    redis_url = os.environ.get("REDIS_URL", "")
    layer = os.environ.get("CHANNEL_LAYER", "pubsub")
    if redis_url and layer == "core":
        layers = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                              "CONFIG": {"hosts": [{"address": redis_url, "max_connections": 1000}], "capacity": 200,
                                         "prefix": "baseline"}}}  # fmt: skip
    elif redis_url:
        layers = {"default": {"BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
                              "CONFIG": {"hosts": [redis_url], "prefix": "baseline"}}}  # fmt: skip
    else:
        layers = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.configure(INSTALLED_APPS=["channels"], CHANNEL_LAYERS=layers, SECRET_KEY="bench", ALLOWED_HOSTS=["*"])
    django.setup()

from channels.generic.websocket import AsyncWebsocketConsumer  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import re_path  # noqa: E402


class RelayConsumer(AsyncWebsocketConsumer):
    async def connect(self):
        self.group = f"room.{self.scope['url_route']['kwargs']['code']}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code):
        await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data=None, bytes_data=None):
        message = json.loads(text_data)
        if message.get("type") == "broadcast":
            await self.channel_layer.group_send(
                self.group, {"type": "relay", "payload": {**message["payload"], "sent_at": time.time()}}
            )
        else:
            await self.send(text_data=json.dumps({"type": "ack"}))

    async def relay(self, event):
        await self.send(text_data=json.dumps(event["payload"]))


application = ProtocolTypeRouter(
    {"websocket": URLRouter([re_path(r"^ws/room/(?P<code>\w+)/$", RelayConsumer.as_asgi())])}
)
