import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from config.origin import SameOriginValidator  # noqa: E402
from config.socket_cap import PerIpSocketCap  # noqa: E402
from lobby.routing import websocket_urlpatterns  # noqa: E402
from quiz.routing import websocket_urlpatterns as quiz_websocket_urlpatterns  # noqa: E402

# Every WebSocket route, the game's and the generation page's: the origin is checked first (a foreign page is
# refused before it counts), then the socket takes one of its IP's WS_MAX_PER_IP places.
application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": SameOriginValidator(PerIpSocketCap(URLRouter(websocket_urlpatterns + quiz_websocket_urlpatterns))),
    }
)
