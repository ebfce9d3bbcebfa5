"""A homework player's JSON requests, served in front of Django's request stack (config/asgi.py).

Joining, opening and answering are 21 of the 22 requests a homework player sends (the page is the other), and with
2,000 players over a minute the server's CPU per request was the limit: most of it was the request stack (the ASGI
request, every middleware, the thread each sync request gets), not the work (bench/homework_load.py,
docs/benchmarks.md "Homework at scale"). This app answers `POST /hw/<code>/api/join`, `/api/state`, `/api/start`
and `/api/answer` itself, with the checks those endpoints have in Django, made by Django's own code:

- the body: read up to the endpoint's cap (lobby/homework/views.py MAX_BODY); a longer one goes to Django;
- the middleware that acts on such a request, called as Django calls it: SecurityMiddleware (the https redirect
  and its headers), the CSP header, LocaleMiddleware (the refusal's language), CommonMiddleware (the host check, the
  refused client programs), CsrfViewMiddleware (the Origin check and the token against the csrftoken cookie), the
  X-Frame-Options header. The others do nothing for these endpoints: the probes and the static files answer other
  paths; the session, the user, the one-time code and the messages are never read by them (so they set no cookie);
  the 413 page is for bodies this app hands to Django;
- then the endpoint's own handler (views.api_join and the others: the code-guess limit, the token, the game's
  errors as 400 or 403 with {"error", "code"}, the reply with Cache-Control: no-store) on the threads that keep
  their database connections.

The page itself (`GET /hw/<code>/`, every player's first request) goes through Django's whole request stack, every
middleware and the view as Django runs them (a handler of Django's own, `BaseHandler.get_response`), but on a
homework thread rather than on the one thread Django's ASGI handler gives every sync view of the process, where
each page waited for the one before it and then for a homework thread (the view reads the room there): with
2,000 players arriving over 12 s, that queue was where the longest waits of the bench were.

Anything else, and any request a check refuses (the CSRF failure page, a bad host, the https redirect), is passed
to Django unchanged (its body replayed), which answers it exactly as before: this app only ever answers a request
Django would have answered the same way.
"""

import asyncio
import io
import logging
import re

from django.conf import settings
from django.core.handlers.asgi import ASGIRequest, get_script_prefix
from django.core.handlers.base import BaseHandler
from django.core.handlers.exception import response_for_exception
from django.http import HttpResponse
from django.middleware.clickjacking import XFrameOptionsMiddleware
from django.middleware.common import CommonMiddleware
from django.middleware.csrf import CsrfViewMiddleware
from django.middleware.locale import LocaleMiddleware
from django.middleware.security import SecurityMiddleware
from django.urls import set_script_prefix
from django.utils import translation
from django.utils.log import log_response

from config.csp import QuizgateCSPMiddleware
from lobby.exceptions import GameError
from lobby.homework import views

logger = logging.getLogger(__name__)

PATH = re.compile(r"^/hw/(?P<code>[^/]+)/api/(?P<action>join|state|start|answer)$")
PAGE = re.compile(r"^/hw/[^/]+/$")
VIEWS = {"join": views.api_join, "state": views.api_state, "start": views.api_start, "answer": views.api_answer}


def _unused(request):  # a middleware's get_response: never called, the middleware's hooks are called one by one
    raise AssertionError("not called")


class _Stack:
    """The middleware that acts on these requests (see above), in MIDDLEWARE's order."""

    def __init__(self) -> None:
        self.security = SecurityMiddleware(_unused)
        self.csp = QuizgateCSPMiddleware(_unused)
        self.locale = LocaleMiddleware(_unused)
        self.common = CommonMiddleware(_unused)
        self.csrf = CsrfViewMiddleware(_unused)
        self.xframe = XFrameOptionsMiddleware(_unused)
        # The policy django-csp writes on these replies is the same on every one (no nonce, no per-view policy: the
        # endpoints set neither), and building it was a third of this app's own time: built once, as it builds it.
        self.csp_headers: list[tuple[str, str]] | None = None

    def refuses(self, request, view) -> bool:
        """Whether a check refuses the request (or wants to answer it some other way): Django answers it then."""
        try:
            for hook in (self.security.process_request, self.csp.process_request, self.common.process_request):
                if hook(request) is not None:
                    return True
            if self.csrf.process_request(request) is not None:
                return True
            return self.csrf.process_view(request, view, (), {}) is not None
        except Exception:  # a bad host, a refused client program: Django's answer, and its log
            return True

    def respond(self, request, response: HttpResponse) -> HttpResponse:
        # Reverse order, as Django runs them: X-Frame-Options, the CSRF cookie (only if rotated), Content-Length,
        # Content-Language and Vary, the CSP header, the security headers.
        for hook in (
            self.xframe.process_response,
            self.csrf.process_response,
            self.common.process_response,
            self.locale.process_response,
            self._csp,
            self.security.process_response,
        ):
            response = hook(request, response)
        return response

    def _csp(self, request, response: HttpResponse) -> HttpResponse:
        if self.csp_headers is None:
            before = set(response.headers)
            response = self.csp.process_response(request, response)
            self.csp_headers = [(name, response[name]) for name in response.headers if name not in before]
            return response
        for name, value in self.csp_headers:
            response[name] = value
        return response


class _SyncDjango(BaseHandler):
    """Django's request stack as its sync handler runs it: every middleware, the URL's view, the exceptions made
    into Django's pages, the refusals logged."""

    def __init__(self) -> None:
        super().__init__()
        self.load_middleware(is_async=False)

    def respond(self, scope, request):
        # Not Django's request_started and request_finished: they close and health-check the thread's connection,
        # which a homework thread keeps and checks itself (lobby/homework/views.py: _kept), as for the JSON above.
        set_script_prefix(get_script_prefix(scope))
        return self.get_response(request)


class HomeworkFastPath:
    def __init__(self, application) -> None:
        self.application = application
        self.stack: _Stack | None = None
        self.django: _SyncDjango | None = None

    async def page(self, scope, receive, send):
        body, more = b"", True
        while more and not body:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body, more = message.get("body", b""), message.get("more_body", False)
        if body:  # a GET with a body: Django's, as it would be
            return await self.application(scope, _replay(body, more, receive), send)
        if self.django is None:
            self.django = _SyncDjango()
        request = ASGIRequest(scope, io.BytesIO(b""))
        try:
            response = await asyncio.wrap_future(views.run_kept(None, self.django.respond, scope, request))
        except Exception as error:  # outside Django's own handling (its stack makes its errors into pages)
            response = response_for_exception(request, error)
        await _send(send, response)

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "GET" and PAGE.match(scope["path"]):
            return await self.page(scope, receive, send)
        match = PATH.match(scope["path"]) if scope["type"] == "http" and scope["method"] == "POST" else None
        if match is None:
            return await self.application(scope, receive, send)
        body, more = b"", True
        while more and len(body) <= views.MAX_BODY:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if more or len(body) > views.MAX_BODY:
            return await self.application(scope, _replay(body, more, receive), send)
        if self.stack is None:
            self.stack = _Stack()
        view = VIEWS[match["action"]]
        request = ASGIRequest(scope, io.BytesIO(body))
        if self.stack.refuses(request, view):
            return await self.application(scope, _replay(body, False, receive), send)
        with translation.override(settings.LANGUAGE_CODE):  # this request's language, undone after it
            self.stack.locale.process_request(request)
            response = await _answer(view.handler, request, match["code"])
            response = self.stack.respond(request, response)
        if response.status_code >= 400:  # logged as Django logs a refusal
            log_response("%s: %s", response.reason_phrase, request.path, response=response, request=request)
        await _send(send, response)


async def _answer(handler, request, code: str) -> HttpResponse:
    """As views._api's view, but the handler awaited on the homework threads (views._kept) without a thread of
    the loop's waiting for it."""
    try:
        data = views.request_data(request)
        reply = await asyncio.wrap_future(views.run_kept(translation.get_language(), handler, request, code, data))
    except GameError as error:
        return views.refused(error)
    except Exception as error:  # as Django answers it: its 500 page, logged, got_request_exception sent
        return response_for_exception(request, error)
    return views.replied(reply)


def _replay(body: bytes, more: bool, receive):
    """The request's body as read so far, then the rest from the client: for Django, as if unread."""
    replayed = False

    async def again():
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": more}
        return await receive()

    return again


async def _send(send, response: HttpResponse) -> None:
    headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in response.items()]
    for cookie in response.cookies.values():
        headers.append((b"Set-Cookie", cookie.output(header="").strip().encode("latin-1")))
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": response.content})
