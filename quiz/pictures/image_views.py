"""A question's picture, served by the app from whatever storage keeps it (so the pages' CSP stays img-src 'self').

The name is the hash of the file's content: a name never shows another picture, so browsers keep it a year."""

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase, HttpResponseNotModified
from django.views.decorators.http import require_GET

from quiz.pictures.images import CONTENT_TYPES, NAME_PATTERN, image_bytes

CACHE_CONTROL = "public, max-age=31536000, immutable"


@require_GET
def question_image(request: HttpRequest, name: str) -> HttpResponseBase:
    if not NAME_PATTERN.match(name):
        raise Http404("No such picture.")
    etag = f'"{name.split(".")[0]}"'
    if request.headers.get("If-None-Match") == etag:
        response: HttpResponseBase = HttpResponseNotModified()
    else:
        # Whole (a re-encoded picture is a few hundred KB): an async server need not stream a sync file.
        try:
            content = image_bytes(name)
        except (FileNotFoundError, OSError) as error:
            raise Http404("No such picture.") from error
        response = HttpResponse(content, content_type=CONTENT_TYPES[name.rsplit(".", 1)[1]])
    response["Cache-Control"] = CACHE_CONTROL
    response["ETag"] = etag
    return response
