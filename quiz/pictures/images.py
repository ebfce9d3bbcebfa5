"""A question's picture: read, checked and re-encoded with Pillow, named by its content, kept in a storage.

Whatever comes in (an editor upload, a data URL in an imported round) goes through `image_process`: at most
QUIZ_IMAGE_MAX_BYTES, a PNG, JPEG, WebP or GIF (its first frame), not a decompression bomb; it is turned the
way its EXIF says, shrunk to QUIZ_IMAGE_MAX_SIDE pixels on its long side, and written anew without any metadata
(EXIF, ICC, text chunks, comments). A file that is already as it would be written (an exported round imported
back) is kept byte for byte: re-encoding a JPEG each round trip would make a new file with drifting pixels.
The stored file is named by the SHA-256 of what was written, so the same
picture twice is one file and a name can be served forever (`question_image` sends it with a year-long cache).

The files live in the storage STORAGES["question_images"] (the filesystem under MEDIA_ROOT unless set otherwise,
README "Pictures"); the database keeps only the name and the alt text.
"""

import base64
import binascii
import contextlib
import hashlib
import io
import re
import warnings
from dataclasses import dataclass, field

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import Storage, storages
from django.urls import reverse
from django.utils.translation import gettext as _
from PIL import Image, ImageOps, UnidentifiedImageError

from quiz.exceptions import InvalidQuestion

STORAGE_ALIAS = "question_images"
MAX_ALT = 250
# Pillow's name for what it read -> (what we write, the file's extension, its content type).
OUTPUT = {
    "PNG": ("PNG", "png", "image/png"),
    "GIF": ("PNG", "png", "image/png"),
    "JPEG": ("JPEG", "jpg", "image/jpeg"),
    "MPO": ("JPEG", "jpg", "image/jpeg"),
    "WEBP": ("WEBP", "webp", "image/webp"),
}
CONTENT_TYPES = {extension: content_type for _, extension, content_type in OUTPUT.values()}
NAME_PATTERN = re.compile(r"^[0-9a-f]{64}\.(png|jpg|webp)$")
DATA_URL = re.compile(r"^data:(?P<type>[\w.+-]+/[\w.+-]+)?(?P<params>(;[\w.+-]+=[\w.+-]+)*);base64,(?P<data>.*)$", re.S)


class InvalidImage(InvalidQuestion):
    """A picture that cannot be used; the message says why, for the host."""


@dataclass(frozen=True)
class QuestionImage:
    """A question's picture as a question carries it: the stored file's name and its alt text. `content` is the
    re-encoded file when it has not been stored yet (it plays no part in comparing two questions)."""

    name: str
    alt: str
    content: bytes = field(default=b"", compare=False, repr=False)

    @property
    def content_type(self) -> str:
        return CONTENT_TYPES[self.name.rsplit(".", 1)[1]]


def max_bytes() -> int:
    return settings.QUIZ_IMAGE_MAX_BYTES


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):g}"


def _open(raw: bytes) -> Image.Image:
    limit = settings.QUIZ_IMAGE_MAX_PIXELS
    too_big = _("the picture is too large to open safely (over %(pixels)s million pixels)") % {
        "pixels": f"{limit / 1_000_000:g}"
    }
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(raw), formats=["PNG", "GIF", "JPEG", "WEBP"])
            if image.width * image.height > limit:
                raise InvalidImage(too_big)
            image.seek(0)
            if image.format == "JPEG":  # decoded at the smallest scale that still covers the output's size
                side = settings.QUIZ_IMAGE_MAX_SIDE
                image.draft("RGB", (side, side))
            image.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
        raise InvalidImage(too_big) from error
    except UnidentifiedImageError as error:
        raise InvalidImage(_("the file is not a picture Quizgate can read (PNG, JPEG, WebP or GIF)")) from error
    except (OSError, SyntaxError, ValueError) as error:
        raise InvalidImage(_("the picture is damaged and cannot be read")) from error
    return image


def image_process(raw: bytes) -> tuple[bytes, str]:
    """The picture re-encoded without metadata and at most QUIZ_IMAGE_MAX_SIDE px on its long side, and the
    extension of its format. Raises InvalidImage with a message for the host."""
    if not raw:
        raise InvalidImage(_("the picture is empty"))
    if len(raw) > max_bytes():
        raise InvalidImage(_("the picture is larger than %(size)s MB") % {"size": _megabytes(max_bytes())})
    image = _open(raw)
    out_format, extension, _type = OUTPUT[image.format]
    if _already_clean(raw, image, out_format):
        # What this process writes (an exported round coming back): kept byte for byte. Re-encoding a JPEG
        # again would change its pixels and its name on every export and import.
        return raw, extension
    # Turned upright as its EXIF says; an unreadable orientation keeps the picture as it is stored.
    with contextlib.suppress(OSError, ValueError, SyntaxError):
        image = ImageOps.exif_transpose(image) or image
    keeps_alpha = out_format != "JPEG" and (image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info)
    image = image.convert("RGBA" if keeps_alpha else "RGB")
    side = settings.QUIZ_IMAGE_MAX_SIDE
    if max(image.size) > side:
        image.thumbnail((side, side), Image.Resampling.LANCZOS)
    image.info = {}  # nothing of the original's metadata goes with it
    buffer = io.BytesIO()
    options = {"PNG": {"optimize": True}, "JPEG": {"quality": 85, "optimize": True}, "WEBP": {"quality": 85}}
    image.save(buffer, format=out_format, **options[out_format])
    return buffer.getvalue(), extension


# What Pillow reports of a file as `image_process` writes it; any other key is metadata (EXIF, ICC, XMP, text).
_CLEAN_INFO = {
    "JPEG": {"jfif", "jfif_version", "jfif_unit", "jfif_density", "dpi", "progressive", "progression"},
    "PNG": set(),
    "WEBP": {"loop", "background", "timestamp", "duration"},
}
_PNG_CHUNKS = {b"IHDR", b"IDAT", b"IEND"}
_WEBP_CHUNKS = {b"VP8 ", b"VP8L", b"VP8X", b"ALPH"}


def _already_clean(raw: bytes, image: Image.Image, out_format: str) -> bool:
    """Is `raw` a file as `image_process` writes it: its own format, upright, within the size, in RGB (RGBA
    but in a JPEG), one frame, and nothing in it but the picture (no metadata segment or chunk, nothing after
    its end)?"""
    side = settings.QUIZ_IMAGE_MAX_SIDE
    if image.format != out_format or max(image.size) > side or getattr(image, "n_frames", 1) != 1:
        return False
    if image.mode not in (("RGB",) if out_format == "JPEG" else ("RGB", "RGBA")):
        return False
    if not set(image.info) <= _CLEAN_INFO[out_format] or len(image.getexif()):
        return False
    if out_format == "JPEG":
        segments = getattr(image, "applist", [])
        return raw.endswith(b"\xff\xd9") and all(m == "APP0" and d.startswith(b"JFIF") for m, d in segments)
    if out_format == "PNG":
        return _chunks(raw, start=8, size_at=0, name_at=4, little=False, after=4) == _PNG_CHUNKS
    if raw[:4] != b"RIFF" or int.from_bytes(raw[4:8], "little") + 8 != len(raw):
        return False
    found = _chunks(raw, start=12, size_at=4, name_at=0, little=True, after=0)
    return bool(found) and found <= _WEBP_CHUNKS


def _chunks(raw: bytes, *, start: int, size_at: int, name_at: int, little: bool, after: int) -> set[bytes] | None:
    """The chunk names of a PNG (size, name, data, CRC) or a RIFF (name, size, data, padding), or None when the
    file does not end where its last chunk does."""
    names, at = set(), start
    order = "little" if little else "big"
    while at + 8 <= len(raw):
        size = int.from_bytes(raw[at + size_at : at + size_at + 4], order)
        names.add(raw[at + name_at : at + name_at + 4])
        at += 8 + size + after + (size % 2 if little else 0)
    return names if at == len(raw) else None


def image_from_bytes(raw: bytes, *, alt: str) -> QuestionImage:
    content, extension = image_process(raw)
    name = f"{hashlib.sha256(content).hexdigest()}.{extension}"
    return QuestionImage(name=name, alt=alt, content=content)


def data_url_bytes(value: str) -> bytes:
    """The bytes of a base64 data URL (data:image/png;base64,...)."""
    if not isinstance(value, str):
        raise InvalidImage(_('the picture\'s "data" must be a data URL (data:image/png;base64,...)'))
    # Base64 takes four characters for three bytes: refuse a longer text before decoding it.
    if len(value) > (max_bytes() // 3 + 1) * 4 + 200:
        raise InvalidImage(_("the picture is larger than %(size)s MB") % {"size": _megabytes(max_bytes())})
    match = DATA_URL.match(value.strip())
    if match is None:
        raise InvalidImage(_('the picture\'s "data" must be a data URL (data:image/png;base64,...)'))
    try:
        return base64.b64decode("".join(match["data"].split()), validate=True)
    except (binascii.Error, ValueError) as error:
        raise InvalidImage(_("the picture's data URL is not valid base64")) from error


def clean_alt(value) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InvalidImage(_("the picture's alt text must be text"))
    value = " ".join(value.split())
    if not value:
        raise InvalidImage(_("the picture needs an alt text: say what it shows for those who cannot see it"))
    if len(value) > MAX_ALT:
        raise InvalidImage(_("the picture's alt text is longer than %(max)s characters") % {"max": MAX_ALT})
    return value


def clean_image(raw) -> QuestionImage | None:
    """A question's "image" as the round JSON has it: absent or null, or {"data": data URL, "alt": text}."""
    if raw is None:
        return None
    if isinstance(raw, QuestionImage):  # already through the pipeline (an importer read it from its file)
        return raw
    if not isinstance(raw, dict):
        raise InvalidImage(_('"image" must be an object with "data" (a data URL) and "alt"'))
    alt = clean_alt(raw.get("alt"))
    return image_from_bytes(data_url_bytes(raw.get("data")), alt=alt)


# -- the storage ------------------------------------------------------------------------------------------------


def image_storage() -> Storage:
    return storages[STORAGE_ALIAS]


def image_store(image: QuestionImage | None) -> str:
    """Keep the picture's file (once: the name is its content's hash); returns the name, "" for no picture."""
    if image is None:
        return ""
    storage = image_storage()
    if image.content and not storage.exists(image.name):
        saved = storage.save(image.name, ContentFile(image.content))
        if saved != image.name:  # two processes stored the same picture at once: the same bytes, keep one
            storage.delete(saved)
    return image.name


def image_bytes(name: str) -> bytes:
    with image_storage().open(name, "rb") as file:
        return file.read()


def image_data_url(image: QuestionImage) -> str:
    content = image.content or image_bytes(image.name)
    return f"data:{image.content_type};base64,{base64.b64encode(content).decode('ascii')}"


def image_url(name: str) -> str:
    return reverse("quiz:question_image", kwargs={"name": name}) if name else ""


def image_forget(name: str, *, still_used: bool) -> bool:
    """Delete a picture's file unless another question still shows it; whether it was deleted."""
    if not name or still_used or not NAME_PATTERN.match(name):
        return False
    storage = image_storage()
    if storage.exists(name):
        storage.delete(name)
        return True
    return False
