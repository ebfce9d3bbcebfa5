"""The import page with real files: what came in is saved, what could not is named with its reason."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from quiz.audit import question_audit
from quiz.models import Round
from tests.quiz.importers.conftest import FILES

pytestmark = pytest.mark.django_db


def questions_of(round_: Round) -> list:
    return list(round_.questions.order_by("entries__position"))


def test_moodle_file_upload_saves_the_playable_and_names_the_rest(client):
    upload = SimpleUploadedFile(
        "capitals.xml", (FILES / "moodle_sample.xml").read_bytes(), content_type="application/xml"
    )
    response = client.post("/rounds/import/", {"title": "", "file": upload})
    html = response.content.decode()
    assert response.status_code == 200
    assert "Read as Moodle XML." in html
    assert "Imported 6 questions" in html
    assert "<td>Question 8</td><td>“Match the capitals”: a matching question cannot be played here</td>" in html
    round_ = Round.objects.get()
    assert round_.title == "Capitals"  # its category names it
    saved = questions_of(round_)
    assert [q.kind for q in saved] == ["single", "multi", "true_false", "typed", "number", "slide"]
    assert saved[0].image_alt == "The flag of Australia" and saved[0].image_name.endswith(".png")
    # Each question's audit says where it came from.
    assert {q.imported_from for q in saved} == {"Moodle XML: capitals.xml"}
    assert question_audit(saved[0])["origin"]["imported_from"] == "Moodle XML: capitals.xml"


def test_kahoot_upload_keeps_each_question_time(client, kahoot_file):
    upload = SimpleUploadedFile("kahoot.xlsx", kahoot_file, content_type="application/octet-stream")
    html = client.post("/rounds/import/", {"title": "Kahoot quiz", "file": upload}).content.decode()
    assert "Read as Kahoot! spreadsheet." in html
    assert "Imported 4 questions" in html
    assert "<td>Row 12</td>" in html
    saved = questions_of(Round.objects.get(title="Kahoot quiz"))
    assert [q.seconds for q in saved] == [20, 30, 10, 5]


def test_pasted_gift_and_a_bomb_upload(client):
    pasted = "::Sky::The sky is blue.{T}\n\n::Sum::2 + 2 = ?{=4 ~5}\n"
    html = client.post("/rounds/import/", {"title": "Pasted", "text": pasted}).content.decode()
    assert "Read as GIFT." in html and "Imported 2 questions" in html
    bomb = b'<?xml version="1.0"?><!DOCTYPE q [<!ENTITY a "aaaa">]><quiz>&a;</quiz>'
    upload = SimpleUploadedFile("bomb.xml", bomb, content_type="application/xml")
    html = client.post("/rounds/import/", {"title": "Bomb", "file": upload}).content.decode()
    assert "declares entities or a document type" in html
    assert "nothing was saved" in html
    assert list(Round.objects.values_list("title", flat=True)) == ["Pasted"]


def test_export_downloads_in_other_formats_and_imports_back(client, kahoot_file):
    upload = SimpleUploadedFile("kahoot.xlsx", kahoot_file, content_type="application/octet-stream")
    client.post("/rounds/import/", {"title": "Kahoot quiz", "file": upload})
    round_ = Round.objects.get()
    for fmt, extension in (("gift", "gift.txt"), ("moodle", "moodle.xml"), ("kahoot", "kahoot.xlsx")):
        response = client.get(f"/rounds/{round_.pk}/export/{fmt}/")
        assert response.status_code == 200
        assert f'filename="kahoot-quiz-{round_.pk}.{extension}"' in response["Content-Disposition"]
        back = client.post(
            "/rounds/import/",
            {"title": f"Back from {fmt}", "file": SimpleUploadedFile(f"back.{extension}", response.content)},
        )
        assert "Imported 4 questions" in back.content.decode()
    assert client.get(f"/rounds/{round_.pk}/export/docx/").status_code == 404
    # Another browser (another owner) cannot export the round.
    assert Client().get(f"/rounds/{round_.pk}/export/gift/").status_code == 404
