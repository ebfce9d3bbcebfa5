"""Labels as CSV, both ways: the graded set exported as CSV imports back as the same labelled set (and the same
sweep); a bad line is refused with its line number and the reason, the good lines are kept."""

import csv
import io
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from quiz.models import Question
from review.labelled_set import labelled_set_csv_export, labelled_set_csv_import, labelled_set_export
from review.models import Review
from verifier.models import Verdict

DATA = Path(__file__).parent / "data" / "labelled.json"

pytestmark = pytest.mark.django_db


def _forget_everything() -> None:
    Review.objects.all().delete()
    Verdict.objects.all().delete()
    Question.objects.all().delete()


def test_labels_round_trip_through_csv(tmp_path):
    call_command("sweep", "--import", str(DATA), stdout=StringIO(), stderr=StringIO())
    before = labelled_set_export()
    sweep_before = StringIO()
    call_command("sweep", "--json", stdout=sweep_before, stderr=StringIO())
    exported = tmp_path / "labels.csv"
    err = StringIO()
    call_command("sweep", "--export", str(exported), stdout=StringIO(), stderr=err)
    text = exported.read_bytes().decode("utf-8")
    assert text == labelled_set_csv_export()
    header = next(csv.reader(io.StringIO(text)))
    assert header[:2] == ["question", "option_a"] and "p_answer_correct" in header and header[-1] == "label"
    assert len(list(csv.reader(io.StringIO(text)))) == 1 + len(before) == 10

    _forget_everything()
    err = StringIO()
    call_command("sweep", "--import", str(exported), stdout=StringIO(), stderr=err)
    assert "imported 9 labelled question(s), skipped 0 already there, refused 0 line(s)" in err.getvalue()
    assert labelled_set_export() == before
    sweep_after = StringIO()
    call_command("sweep", "--json", stdout=sweep_after, stderr=StringIO())
    assert json.loads(sweep_after.getvalue()) == json.loads(sweep_before.getvalue())


def test_a_bad_line_is_refused_with_its_number_and_the_good_ones_kept():
    call_command("sweep", "--import", str(DATA), stdout=StringIO(), stderr=StringIO())
    rows = list(csv.reader(io.StringIO(labelled_set_csv_export())))
    header = rows[0]
    rows[3][header.index("label")] = "maybe"  # line 4 of the file
    rows[5][header.index("p_answer_correct")] = "1.7"  # line 6
    rows[7][header.index("correct")] = "Z"  # line 8
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    _forget_everything()

    result = labelled_set_csv_import(text=out.getvalue())
    assert [(error.line, error.reason) for error in result.errors] == [
        (4, "label must be one of correct, defective"),
        (6, "p_answer_correct: 1.7 is not a number from 0 to 1"),
        (8, "the correct option 'Z' is not a letter A-F or a number 1-6"),
    ]
    assert str(result.errors[0]) == "line 4: label must be one of correct, defective"
    assert (result.created, result.skipped) == (6, 0) and Review.objects.count() == 6


def test_a_csv_without_its_columns_is_refused_whole(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("question,option_a,option_b,correct\nQ?,a,b,A\n", encoding="utf-8")
    err = StringIO()
    with pytest.raises(CommandError, match="nothing could be imported"):
        call_command("sweep", "--import", str(path), stdout=StringIO(), stderr=err)
    assert "line 1: the header is missing the column(s) backend, model_id, label" in err.getvalue()
    assert not Review.objects.exists()


def test_the_sweep_page_downloads_and_imports_the_labels_csv(admin_client):
    call_command("sweep", "--import", str(DATA), stdout=StringIO(), stderr=StringIO())
    page = admin_client.get("/admin/verifier/threshold/sweep/").content.decode()
    assert "Download the labels as CSV" in page and 'name="labels"' in page
    response = admin_client.get("/admin/verifier/threshold/sweep/labels.csv")
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    text = response.content.decode("utf-8-sig")
    assert text == labelled_set_csv_export()
    rows = list(csv.reader(io.StringIO(text)))
    rows[2][rows[0].index("label")] = "maybe"  # line 3
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    _forget_everything()
    upload = SimpleUploadedFile("graded.csv", out.getvalue().encode(), content_type="text/csv")
    response = admin_client.post("/admin/verifier/threshold/sweep/labels/import/", {"labels": upload}, follow=True)
    page = response.content.decode()
    assert "Imported 8 labelled question(s), skipped 0 already there, refused 1 line(s)." in page
    assert "Refused line 3: label must be one of correct, defective" in page
    assert Review.objects.count() == 8


def test_importing_labels_needs_the_right_to_label(client, django_user_model):
    viewer = django_user_model.objects.create_user("viewer", password="pw", is_staff=True)
    from django.contrib.auth.models import Permission

    viewer.user_permissions.add(Permission.objects.get(codename="view_threshold"))
    client.force_login(viewer)
    assert client.get("/admin/verifier/threshold/sweep/labels.csv").status_code == 200
    upload = SimpleUploadedFile("graded.csv", b"question\n", content_type="text/csv")
    assert client.post("/admin/verifier/threshold/sweep/labels/import/", {"labels": upload}).status_code == 403
