"""Start Quizgate's ASGI app under uvicorn with the server-side limits from settings.

    python -m config.serve --host 127.0.0.1 --port 8000 [any other uvicorn option]

Every way the app is started (`make run`, `make serve`, the Procfile, the test and bench servers) goes through
here, so the server's frame limit is set in one place: `WS_SERVER_MAX_BYTES`. uvicorn's own default is 16 MiB,
which it reads whole before the app's 16 KB cap can refuse the message.
"""

import os
import sys
from typing import Any

import uvicorn

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
from django.conf import settings  # noqa: E402

APP = "config.asgi:application"


def server_options() -> dict[str, Any]:
    """The limits as `uvicorn.Config` keyword arguments, for a server started in-process (the browser tests)."""
    return {"ws_max_size": settings.WS_SERVER_MAX_BYTES}


def command_line(args: list[str]) -> list[str]:
    """uvicorn's arguments: the app, the limits, then the caller's own options."""
    if any(arg.split("=")[0] == "--ws-max-size" for arg in args):
        raise SystemExit("set WS_SERVER_MAX_BYTES instead of --ws-max-size: the app's limits live in settings")
    return [APP, "--ws-max-size", str(server_options()["ws_max_size"]), *args]


def main(argv: list[str] | None = None) -> None:
    uvicorn.main.main(args=command_line(sys.argv[1:] if argv is None else argv), prog_name="python -m config.serve")


if __name__ == "__main__":
    main()
