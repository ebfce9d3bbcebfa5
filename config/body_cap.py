"""Every request's body is bounded before it is read whole (core/request_body.py says how far, per route).

`RequestBodyCap` wraps the HTTP app (ASGI). A body whose `Content-Length` is over its route's cap is never read: the
app gets an empty body and the request marked too large. A body that streams in without a length (or longer than
it said) is counted as it arrives; at the cap the app's body ends there, marked the same, and nothing more is read.
Either way the answer carries `Connection: close`, so the server drops the connection instead of reading the rest:
a 50 MB upload is refused while the client is still sending it.

`RequestTooLargeMiddleware` (last in MIDDLEWARE, so it runs before any view or the CSRF check reads the body)
answers a marked request with the 413 page, in the page's language; it answers a body over Django's own
DATA_UPLOAD_MAX_MEMORY_SIZE with the same page instead of a logged traceback, and checks `Content-Length` itself
where no ASGI server stands in front (the test client).
"""

import asyncio
import logging

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from core.request_body import cap_for_path, megabytes_text

logger = logging.getLogger(__name__)

SCOPE_KEY = "quizgate.body"
FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")


def _content_length(headers) -> int | None:
    for name, value in headers:
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class RequestBodyCap:
    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.application(scope, receive, send)
        path_info = scope["path"].removeprefix(scope.get("root_path", "")) or "/"
        state = {"cap": cap_for_path(path_info), "too_large": False}
        length = _content_length(scope.get("headers", []))
        if length is not None and length > state["cap"]:
            state["too_large"] = True
        scope = {**scope, SCOPE_KEY: state}
        received = 0
        cut = False
        end = {"type": "http.request", "body": b"", "more_body": False}

        async def capped_receive():
            nonlocal received, cut
            if state["too_large"]:
                if cut:
                    # The app's body ended at the cap; what the client still sends is never read.
                    await asyncio.Future()
                cut = True
                return end
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > state["cap"]:
                    state["too_large"] = cut = True
                    return end
            return message

        async def closing_send(message):
            if message["type"] == "http.response.start" and state["too_large"]:
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        await self.application(scope, capped_receive, closing_send)


def too_large_response(request: HttpRequest, cap: int) -> HttpResponse:
    logger.info("request body over %d bytes refused: %s %s", cap, request.method, request.path)
    response = render(request, "request_too_large.html", {"max_mb": megabytes_text(cap)}, status=413)
    response["Connection"] = "close"
    return response


class RequestTooLargeMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        state = getattr(request, "scope", {}).get(SCOPE_KEY)
        if state is not None:
            if state["too_large"]:
                return too_large_response(request, state["cap"])
            cap = state["cap"]
        else:
            cap = cap_for_path(request.path_info)
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > cap:
                return too_large_response(request, cap)
        if request.method in ("POST", "PUT", "PATCH") and request.content_type in FORM_TYPES:
            try:
                request.POST  # noqa: B018 - parsed here, so a body over Django's own limit gets the page too
            except RequestDataTooBig:
                return too_large_response(request, cap)
        return self.get_response(request)
