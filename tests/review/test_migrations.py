"""A database made by the code before the review side moved out of the verifier migrates forward with nothing lost.

Runs on the suite's database: SQLite by default, PostgreSQL when DATABASE_URL is set.
"""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from review.models import Flag, FlagKind, PremiseCheck, PremiseGroup, PremiseMember, Review, ReviewItem, ReviewLabel
from review.selectors import review_queue
from verifier.models import Verdict


def before_the_move():
    """Every app at its latest migration, except the verifier before the move and no review app yet."""
    others = [node for node in latest() if node[0] not in ("verifier", "review")]
    return [*others, ("verifier", "0004_verdict_requested_model_id"), ("review", None)]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state([node for node in targets if node[1] is not None]).apps


def latest():
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


@pytest.fixture
def old_database():
    old = migrate(before_the_move())
    yield old
    migrate(latest())


def fill(old) -> dict:
    Question = old.get_model("quiz", "Question")
    Round = old.get_model("quiz", "Round")
    RoundQuestion = old.get_model("quiz", "RoundQuestion")
    User = old.get_model("auth", "User")
    Permission = old.get_model("auth", "Permission")
    ContentTypeThen = old.get_model("contenttypes", "ContentType")
    question, mate = (
        Question.objects.create(text=text, options=["3", "4"], correct_index=1, provenance="model", model_id="m-1")
        for text in ("What is 2 + 2?", "What is 2 + 3?")
    )
    round_ = Round.objects.create(title="Sums", provenance="model")
    RoundQuestion.objects.create(round=round_, question=question, position=0)
    RoundQuestion.objects.create(round=round_, question=mate, position=1)
    reviewer = User.objects.create(username="rita", is_staff=True)
    old.get_model("verifier", "Verdict").objects.create(
        question=question, backend="llm", model_id="m-1", threshold=0.8, outcome="dropped", score=0.2
    )
    review = old.get_model("verifier", "Review").objects.create(
        question=question, label="defective", note="4 is right, the marked 3 is not", reviewer=reviewer
    )
    flag = old.get_model("verifier", "Flag").objects.create(
        question=question, kind="reported", room_code="ABCD", detail={"text": "wrong"}
    )
    group = old.get_model("verifier", "PremiseGroup").objects.create(
        origin=question, round=round_, trigger="dropped", terms=["2"]
    )
    member = old.get_model("verifier", "PremiseMember").objects.create(
        group=group, question=mate, shared=["2"], status="doubtful", marked_probability=0.4
    )
    # The reviewer's right to label, as an operator granted it in the admin before the move.
    verifier_review = ContentTypeThen.objects.get_or_create(app_label="verifier", model="review")[0]
    reviewer.user_permissions.add(
        Permission.objects.get_or_create(codename="add_review", content_type=verifier_review, name="Can add review")[0]
    )
    return {
        "question": question.pk,
        "mate": mate.pk,
        "round": round_.pk,
        "reviewer": reviewer.pk,
        "review": review.pk,
        "flag": flag.pk,
        "group": group.pk,
        "member": member.pk,
        "review_type": verifier_review.pk,
    }


@pytest.mark.django_db(transaction=True)
def test_an_old_database_migrates_forward_with_every_row(old_database):
    ids = fill(old_database)

    migrate(latest())

    review = Review.objects.get(pk=ids["review"])
    assert (review.question_id, review.label, review.reviewer_id) == (
        ids["question"],
        ReviewLabel.DEFECTIVE,
        ids["reviewer"],
    )
    assert review.note == "4 is right, the marked 3 is not"
    flag = Flag.objects.get(pk=ids["flag"])
    assert (flag.question_id, flag.kind, flag.room_code, flag.detail) == (
        ids["question"],
        FlagKind.REPORTED,
        "ABCD",
        {"text": "wrong"},
    )
    group = PremiseGroup.objects.get(pk=ids["group"])
    assert (group.origin_id, group.round_id, group.terms) == (ids["question"], ids["round"], ["2"])
    member = PremiseMember.objects.get(pk=ids["member"])
    assert (member.group_id, member.question_id, member.status) == (ids["group"], ids["mate"], PremiseCheck.DOUBTFUL)
    assert Verdict.objects.get(question_id=ids["question"]).outcome == "dropped"
    # The relations from the question still reach the moved rows, and the queue shows it.
    queued = ReviewItem.objects.get(pk=ids["question"])
    assert list(queued.reviews.values_list("pk", flat=True)) == [ids["review"]]
    assert [item.pk for item in review_queue()] == [ids["question"]]
    # The content type moved with its model (same row), so the permission granted before the move still counts.
    ContentType.objects.clear_cache()
    assert ContentType.objects.get_for_model(Review).pk == ids["review_type"]
    reviewer = get_user_model().objects.get(pk=ids["reviewer"])
    assert reviewer.has_perm("review.add_review")


@pytest.mark.django_db(transaction=True)
def test_the_tables_keep_their_names():
    tables = set(connection.introspection.table_names())
    assert {"verifier_review", "verifier_flag", "verifier_premisegroup", "verifier_premisemember"} <= tables
    # No moved model got a new table: the only review_ table is the one the review app made itself afterwards.
    assert {table for table in tables if table.startswith("review_")} == {"review_checkerevalrun"}
    assert [model._meta.db_table for model in (Review, Flag, PremiseGroup, PremiseMember)] == [
        "verifier_review",
        "verifier_flag",
        "verifier_premisegroup",
        "verifier_premisemember",
    ]
