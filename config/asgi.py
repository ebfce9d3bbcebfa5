import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from config.body_cap import RequestBodyCap  # noqa: E402
from config.homework_fastpath import HomeworkFastPath  # noqa: E402
from config.origin import SameOriginValidator  # noqa: E402
from config.socket_cap import PerIpSocketCap  # noqa: E402
from core import collector, metrics, processes  # noqa: E402
from core.server_loop import server_loop_started, server_loop_stopped  # noqa: E402
from lobby.realtime import rebalance  # noqa: E402
from lobby.realtime.clock import clock_start, clock_stop  # noqa: E402
from lobby.realtime.routing import websocket_urlpatterns  # noqa: E402
from quiz.generation.routing import websocket_urlpatterns as quiz_websocket_urlpatterns  # noqa: E402


class Lifespan:
    """The ASGI lifespan around the app. What lives as long as the server process starts with it and stops with
    it: the record of the loop the server runs on (core/server_loop.py) and the game clock (lobby/realtime/clock.py),
    which closes due questions whether or not anyone is connected, and the process's entry in the registry that
    spreads sockets over the processes (lobby/realtime/rebalance.py). Every other scope goes to the app."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] != "lifespan":
            return await self.application(scope, receive, send)
        recorded_loop = started_clock = False
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                # Once per process, however many lifespans it runs: the first one owns both, and stops them.
                recorded_loop = server_loop_started()
                if recorded_loop:
                    collector.tune()  # once per process: a room of thousands is not stopped by the collector
                    processes.follow_parent()  # a worker outlives no supervisor (core/processes.py)
                started_clock = clock_start()
                if started_clock:
                    processes.this()  # beating from the start: the others see it die (core/processes.py)
                    rebalance.start()  # in the registry of processes from the start (lobby/realtime/rebalance.py)
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if started_clock:
                    await clock_stop()
                    await rebalance.stop()
                    await processes.stop()
                if recorded_loop:
                    server_loop_stopped()
                metrics.process_exited()  # its open sockets leave the metrics' sum
                await send({"type": "lifespan.shutdown.complete"})
                return


# Every HTTP request's body is capped by its route before it is read (config/body_cap.py); a homework player's
# opening and answering are answered in front of Django's stack, with its checks (config/homework_fastpath.py).
# Every WebSocket route, the game's and the generation page's: the origin is checked first (a foreign page is
# refused before it counts), then the socket takes one of its IP's WS_MAX_PER_IP places.
application = Lifespan(
    ProtocolTypeRouter(
        {
            "http": HomeworkFastPath(RequestBodyCap(django_asgi_app)),
            "websocket": SameOriginValidator(
                PerIpSocketCap(URLRouter(websocket_urlpatterns + quiz_websocket_urlpatterns))
            ),
        }
    )
)
