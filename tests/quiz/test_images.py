"""A question's picture: re-encoded by Pillow (no metadata, bounded, its format), refused clearly when it is not a
picture or a decompression bomb, carried whole through a JSON import and export, uploaded in the editor, served
with a long cache, marked "checked without its picture", and deleted when no question shows it."""

import base64
import io
import json
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone, translation
from PIL import Image

from quiz.check_labels import mark_label
from quiz.checking.rounds import CheckMark
from quiz.image_retention import orphan_images_purge
from quiz.importing import export_json, parse_json
from quiz.models import Question, Round
from quiz.pictures import images
from quiz.services import round_create_for_host
from tests.quiz.test_views import editor_data


@pytest.fixture(autouse=True)
def _own_picture_storage(settings, tmp_path):
    """Each test its own directory of pictures, so that it counts only the files it made."""
    settings.STORAGES = {
        **settings.STORAGES,
        "question_images": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "pictures")},
        },
    }


def picture(size=(2400, 1200), format="JPEG", *, exif: bool = False, mode: str = "RGB", **save) -> bytes:
    image = Image.new(mode, size, "teal" if mode != "1" else 0)
    if exif:
        data = Image.Exif()
        data[0x010F] = "PhoneMaker"  # Make
        data[0x0110] = "Model X"  # Model
        data[0x8825] = {2: (52.0, 31.0, 12.0)}  # GPS latitude
        save["exif"] = data.tobytes()
    buffer = io.BytesIO()
    image.save(buffer, format=format, **save)
    return buffer.getvalue()


def data_url(raw: bytes, kind: str = "image/jpeg") -> str:
    return f"data:{kind};base64,{base64.b64encode(raw).decode()}"


QUESTION = {"question": "Which city is this?", "options": ["Paris", "Rome"], "correct": "A"}


def test_a_phone_photo_is_re_encoded_without_its_exif_and_bounded_to_1600_px():
    raw = picture((3200, 2000), exif=True)
    assert Image.open(io.BytesIO(raw)).getexif()[0x010F] == "PhoneMaker"
    content, extension = images.image_process(raw)
    out = Image.open(io.BytesIO(content))
    assert (out.format, extension) == ("JPEG", "jpg")
    assert out.size == (1600, 1000)
    assert len(out.getexif()) == 0 and "exif" not in out.info
    assert b"PhoneMaker" not in content and b"Model X" not in content


@pytest.mark.parametrize(
    ("format", "mode", "out_format"),
    [("PNG", "RGBA", "PNG"), ("WEBP", "RGB", "WEBP"), ("GIF", "P", "PNG")],
)
def test_each_format_comes_out_as_itself_and_a_gif_as_its_first_frame_in_png(format, mode, out_format):
    content, _ = images.image_process(picture((400, 300), format, mode=mode))
    out = Image.open(io.BytesIO(content))
    assert out.format == out_format and out.size == (400, 300)
    assert getattr(out, "n_frames", 1) == 1


def test_a_png_keeps_no_text_chunks():
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    info.add_text("Author", "Secret Person")
    content, _ = images.image_process(picture((100, 100), "PNG", pnginfo=info))
    assert b"Secret Person" not in content and "Author" not in Image.open(io.BytesIO(content)).info


def test_a_decompression_bomb_is_refused_with_a_clear_message(settings):
    # A 1-bit PNG of 20000 x 20000 pixels is a few kilobytes on disk and 400 million pixels decoded.
    bomb = picture((20000, 20000), "PNG", mode="1")
    assert len(bomb) < 200_000
    with pytest.raises(images.InvalidImage, match="too large to open safely"):
        images.image_process(bomb)
    # Under Pillow's own limit but over ours.
    settings.QUIZ_IMAGE_MAX_PIXELS = 1_000_000
    with pytest.raises(images.InvalidImage, match=r"over 1 million pixels"):
        images.image_process(picture((1200, 1000), "PNG"))


def test_pillows_own_bomb_warning_is_an_error(settings, monkeypatch):
    settings.QUIZ_IMAGE_MAX_PIXELS = 10**9
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100_000)
    with pytest.raises(images.InvalidImage, match="too large to open safely"):
        images.image_process(picture((400, 300), "PNG"))  # 120,000 px: Pillow warns, the warning is an error


def test_a_file_that_is_not_a_picture_is_refused_clearly():
    with pytest.raises(images.InvalidImage, match="not a picture Quizgate can read"):
        images.image_process(b"%PDF-1.7 not a picture at all")
    with pytest.raises(images.InvalidImage, match="not a picture Quizgate can read"):
        images.image_process(picture((50, 50), "BMP"))  # a picture, not one of the four formats
    with pytest.raises(images.InvalidImage, match="damaged"):
        images.image_process(picture((300, 300), "PNG")[:200])


def test_a_picture_over_5_mb_is_refused_before_it_is_opened():
    with pytest.raises(images.InvalidImage, match="larger than 5 MB"):
        images.image_process(b"\x89PNG" + b"0" * (5 * 1024 * 1024))


@pytest.mark.django_db
def test_a_data_url_picture_goes_through_import_export_import_whole():
    raw = picture((2000, 1000), exif=True)
    result = parse_json(json.dumps([{**QUESTION, "image": {"data": data_url(raw), "alt": " The  Colosseum "}}]))
    assert result.errors == []
    [question] = result.questions
    assert question.image.alt == "The Colosseum"
    round_ = round_create_for_host(title="Cities", questions=result.questions, owner_key="k")
    stored = Question.objects.get(rounds=round_)
    assert stored.image_name == question.image.name and images.image_storage().exists(stored.image_name)

    exported = json.loads(export_json(title="Cities", questions=[stored.as_data()]))
    item = exported["questions"][0]
    assert item["image"]["alt"] == "The Colosseum"
    assert item["image"]["data"].startswith("data:image/jpeg;base64,")
    again = parse_json(json.dumps(exported))
    assert again.errors == [] and again.questions == [stored.as_data()]
    # The same bytes, so the same name: the picture is not re-encoded into a different file each time.
    assert again.questions[0].image.name == stored.image_name
    assert Image.open(io.BytesIO(images.image_bytes(stored.image_name))).size == (1600, 800)


@pytest.mark.parametrize(
    ("image", "reason"),
    [
        ({"data": "data:image/png;base64,iVBOR"}, "needs an alt text"),
        ({"data": "http://example.com/a.png", "alt": "A"}, "must be a data URL"),
        ({"data": "data:image/png;base64,@@@", "alt": "A"}, "not valid base64"),
        ({"data": data_url(b"GIF89a nonsense"), "alt": "A"}, "damaged|not a picture"),
        ("cat.png", '"image" must be an object'),
    ],
)
def test_a_bad_picture_in_an_import_is_refused_with_the_item_and_the_reason(image, reason):
    good = {**QUESTION, "question": "Kept"}
    result = parse_json(json.dumps([good, {**QUESTION, "image": image}]))
    assert [question.text for question in result.questions] == ["Kept"]
    [error] = result.errors
    assert error.where == "item 2"
    assert __import__("re").search(reason, error.reason)


def test_a_bomb_in_an_import_is_refused_with_its_message():
    bomb = picture((20000, 20000), "PNG", mode="1")
    result = parse_json(json.dumps([{**QUESTION, "image": {"data": data_url(bomb, "image/png"), "alt": "Big"}}]))
    assert result.questions == [] and "too large to open safely" in result.errors[0].reason


@pytest.mark.django_db
def test_a_picture_uploaded_in_the_editor_is_stored_shown_and_kept_on_the_next_save():
    client = Client()
    upload = SimpleUploadedFile("photo.jpg", picture((2000, 1500), exif=True), content_type="image/jpeg")
    block = {"text": "Which city?", "option_0": "Paris", "option_1": "Rome", "correct": "1"}
    data = editor_data("Cities", [{**block, "image_alt": "A round arena"}])
    data["q-0-image"] = upload
    response = client.post(reverse("quiz:round_new"), data)
    assert response.status_code == 302
    question = Question.objects.get()
    assert question.image_alt == "A round arena" and question.image_name.endswith(".jpg")
    stored = Image.open(io.BytesIO(images.image_bytes(question.image_name)))
    assert stored.size == (1600, 1200) and len(stored.getexif()) == 0

    round_ = Round.objects.get()
    page = client.get(reverse("quiz:round_edit", args=[round_.pk])).content.decode()
    assert f'src="/rounds/images/{question.image_name}"' in page and 'alt="A round arena"' in page
    # Saved again unchanged (the file input empty, the stored name sent back): the same question, same picture.
    again = editor_data("Cities", [{**block, "image_alt": "A round arena", "image_name": question.image_name}])
    assert client.post(reverse("quiz:round_edit", args=[round_.pk]), again).status_code == 302
    assert list(Round.objects.get().questions.all()) == [question]


@pytest.mark.django_db
def test_the_editor_refuses_a_picture_without_alt_text_or_a_non_picture_and_loses_nothing():
    client = Client()
    block = {"text": "Which city?", "option_0": "Paris", "option_1": "Rome", "correct": "1"}
    data = editor_data("Cities", [block, {**block, "text": "Second", "image_alt": "Text"}])
    data["q-0-image"] = SimpleUploadedFile("photo.png", picture((300, 200), "PNG"), content_type="image/png")
    data["q-1-image"] = SimpleUploadedFile("notes.png", b"not a picture", content_type="image/png")
    page = client.post(reverse("quiz:round_new"), data).content.decode()
    assert not Round.objects.exists()
    assert "the picture needs an alt text" in page
    assert "not a picture Quizgate can read (PNG, JPEG, WebP or GIF)" in page
    # The good upload is kept for the form sent back: the host adds the alt text, not the file again.
    kept = [name for name in images.image_storage().listdir("")[1]]
    assert len(kept) == 1 and f'value="{kept[0]}"' in page


@pytest.mark.django_db
def test_a_picture_is_served_with_a_year_long_cache_and_an_unknown_one_is_404():
    [question] = parse_json(json.dumps([{**QUESTION, "image": {"data": data_url(picture()), "alt": "A"}}])).questions
    name = images.image_store(question.image)
    response = Client().get(reverse("quiz:question_image", args=[name]))
    assert response.status_code == 200 and response["Content-Type"] == "image/jpeg"
    assert response["Cache-Control"] == "public, max-age=31536000, immutable"
    assert response.content == question.image.content
    again = Client().get(reverse("quiz:question_image", args=[name]), HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304
    assert Client().get(reverse("quiz:question_image", args=["0" * 64 + ".png"])).status_code == 404
    assert Client().get("/rounds/images/..%2Fsettings.py").status_code == 404


@pytest.mark.django_db
def test_a_checked_question_with_a_picture_says_it_was_checked_without_it():
    from django.template.loader import render_to_string

    mark = CheckMark(
        mark="passed", reason="", message="", score=0.9, threshold=0.5, probabilities={}, backend="b", model_id="m"
    )
    with translation.override("en"):
        assert mark_label("passed") == "Passed the checker"
        html = render_to_string("quiz/_check_mark.html", {"mark": mark, "picture": "a.png"})
        assert "checked without its picture" in html
        assert "checked without its picture" not in render_to_string("quiz/_check_mark.html", {"mark": mark})
    with translation.override("de"):
        assert "ohne sein Bild geprüft" in render_to_string("quiz/_check_mark.html", {"mark": mark, "picture": "a"})
    with translation.override("es"):
        assert "revisada sin su imagen" in render_to_string("quiz/_check_mark.html", {"mark": mark, "picture": "a"})


@pytest.mark.django_db(transaction=True)
def test_a_deleted_question_takes_its_file_and_an_unheld_picture_goes_in_the_daily_purge():
    [data] = parse_json(json.dumps([{**QUESTION, "image": {"data": data_url(picture()), "alt": "A"}}])).questions
    round_ = round_create_for_host(title="Cities", questions=[data, data], owner_key="k")
    first, second = Question.objects.filter(rounds=round_).order_by("pk")
    storage = images.image_storage()
    round_.entries.filter(question=first).delete()
    first.delete()
    assert storage.exists(data.image.name)  # the other question still shows it
    round_.delete()
    assert orphan_images_purge() == 0  # a day's grace
    assert orphan_images_purge(now=timezone.now() + timedelta(days=2)) == 1
    assert not storage.exists(data.image.name)
    second.refresh_from_db()
    assert second.image_name == "" and second.image_alt == ""


def _photo(format: str) -> bytes:
    """A photo with detail (noise) and a camera's EXIF: a JPEG or WebP of it changes each time it is encoded."""
    image = Image.effect_noise((640, 480), 80).convert("RGB")
    exif = Image.Exif()
    exif[0x010F] = "PhoneMaker"
    buffer = io.BytesIO()
    image.save(buffer, format=format, exif=exif.tobytes())
    return buffer.getvalue()


def _elsewhere(settings, tmp_path) -> None:
    """Another server: its own, empty storage of pictures."""
    settings.STORAGES = {
        **settings.STORAGES,
        "question_images": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "elsewhere")},
        },
    }


@pytest.mark.django_db
@pytest.mark.parametrize(("format", "kind"), [("JPEG", "image/jpeg"), ("PNG", "image/png"), ("WEBP", "image/webp")])
def test_export_then_import_keeps_the_stored_bytes_here_and_on_another_server(format, kind, settings, tmp_path):
    item = {**QUESTION, "image": {"data": data_url(_photo(format), kind), "alt": "Noise"}}
    round_ = round_create_for_host(title="Noise", questions=parse_json(json.dumps([item])).questions, owner_key="k")
    stored = Question.objects.get(rounds=round_).as_data()
    kept = images.image_bytes(stored.image.name)
    assert b"PhoneMaker" not in kept  # the first import cleaned it
    exported = export_json(title="Noise", questions=[stored])
    for server in ("here", "elsewhere"):
        if server == "elsewhere":
            _elsewhere(settings, tmp_path)
        for _trip in range(2):
            again = parse_json(exported)
            assert again.errors == [] and again.questions[0].image.name == stored.image.name, server
            assert again.questions[0].image.content == kept, server
            exported = export_json(title="Noise", questions=again.questions)


def test_a_clean_looking_file_with_anything_after_its_end_or_a_comment_is_written_anew():
    clean, _ = images.image_process(_photo("JPEG"))
    assert images.image_process(clean)[0] == clean
    assert images.image_process(clean + b"hidden payload")[0] != clean + b"hidden payload"
    commented = io.BytesIO()
    Image.open(io.BytesIO(clean)).save(commented, format="JPEG", comment=b"Secret Person")
    assert b"Secret Person" not in images.image_process(commented.getvalue())[0]
