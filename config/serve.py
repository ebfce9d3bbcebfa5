"""Start Quizgate's ASGI app under uvicorn with the server-side limits from settings.

    python -m config.serve --host 127.0.0.1 --port 8000 [any other uvicorn option]

Every way the app is started (`make run`, `make serve`, the Procfile, the test and bench servers) goes through
here, so the server's frame limit is set in one place: `WS_SERVER_MAX_BYTES`. uvicorn's own default is 16 MiB,
which it reads whole before the app's 16 KB cap can refuse the message. So is its WebSocket implementation,
`SERVER_WS_IMPLEMENTATION` (websockets-sansio: a cheaper send per frame, which a fan-out pays once per socket).
"""

import os
import socket
import sys
from typing import Any

import uvicorn

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
from django.conf import settings  # noqa: E402

APP = "config.asgi:application"


def server_options() -> dict[str, Any]:
    """The limits as `uvicorn.Config` keyword arguments, for a server started in-process (the browser tests)."""
    return {
        "ws_max_size": settings.WS_SERVER_MAX_BYTES,
        "backlog": settings.SERVER_BACKLOG,
        "ws": settings.SERVER_WS_IMPLEMENTATION,
    }


# The options read from settings, and the setting each comes from.
_FROM_SETTINGS = {
    "--ws-max-size": "WS_SERVER_MAX_BYTES",
    "--backlog": "SERVER_BACKLOG",
    "--timeout-worker-healthcheck": "SERVER_WORKER_HEALTHCHECK_SECONDS",
    "--ws": "SERVER_WS_IMPLEMENTATION",
}


def command_line(args: list[str]) -> list[str]:
    """uvicorn's arguments: the app, the limits, then the caller's own options."""
    for arg in args:
        if arg.split("=")[0] in _FROM_SETTINGS:
            name = _FROM_SETTINGS[arg.split("=")[0]]
            raise SystemExit(f"set {name} instead of {arg.split('=')[0]}: the app's limits live in settings")
    limits = [[option, str(getattr(settings, name))] for option, name in _FROM_SETTINGS.items()]
    return [APP, *(part for pair in limits for part in pair), *args]


def _option(args: list[str], name: str, default: str) -> str:
    for position, arg in enumerate(args):
        if arg == name and position + 1 < len(args):
            return args[position + 1]
        if arg.startswith(f"{name}="):
            return arg.split("=", 1)[1]
    return default


def banner(args: list[str]) -> str:
    """Where the host opens the game and, on a local network game, where the phones join."""
    host, port = _option(args, "--host", "127.0.0.1"), _option(args, "--port", "8000")
    local = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    lines = [f"Quizgate on http://{local}:{port}/"]
    if settings.QUIZ_PUBLIC_URL:
        lines.append(f"Players join at {settings.QUIZ_PUBLIC_URL}")
    elif settings.QUIZ_LOCAL_NETWORK and settings.QUIZ_LAN_ADDRESS and host in ("0.0.0.0", "::"):
        lines.append(f"Phones on this network join at http://{settings.QUIZ_LAN_ADDRESS}:{port}/ (the QR code)")
    elif settings.QUIZ_LOCAL_NETWORK:
        lines.append("Only this machine can join: no network address was found, or the server binds loopback only.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    # The server its workers belong to, as the load balancer sees it (lobby/realtime/rebalance.py spreads by server).
    address = f"{_option(args, '--host', '127.0.0.1')}:{_option(args, '--port', '8000')}"
    os.environ["QUIZGATE_SERVER"] = f"{socket.gethostname()}@{address}"
    if settings.QUIZ_LOCAL_NETWORK:
        print(banner(args), flush=True)
    uvicorn.main.main(args=command_line(args), prog_name="python -m config.serve")


if __name__ == "__main__":
    main()
