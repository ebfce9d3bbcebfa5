# The review side's models moved here from the verifier app. Their tables stay where they are (verifier_review,
# verifier_flag, verifier_premisegroup, verifier_premisemember): this migration only tells Django's state that
# review owns them now, and moves their content types (so the admin permissions granted on them survive).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MOVED = ["review", "flag", "premisegroup", "premisemember", "reviewitem"]


def content_types_to_review(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    for model in MOVED:
        if ContentType.objects.using(db).filter(app_label="review", model=model).exists():
            continue
        ContentType.objects.using(db).filter(app_label="verifier", model=model).update(app_label="review")


def content_types_to_verifier(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    for model in MOVED:
        if ContentType.objects.using(db).filter(app_label="verifier", model=model).exists():
            continue
        ContentType.objects.using(db).filter(app_label="review", model=model).update(app_label="verifier")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("quiz", "0004_question_served_model_id"),
        ("verifier", "0004_verdict_requested_model_id"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    state_operations = [
        migrations.CreateModel(
            name="ReviewItem",
            fields=[],
            options={
                "verbose_name": "question to review",
                "verbose_name_plural": "review queue",
                "proxy": True,
                "indexes": [],
                "constraints": [],
            },
            bases=("quiz.question",),
        ),
        migrations.CreateModel(
            name="Flag",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("reported", "Reported by a player"),
                            ("crowd", "The crowd disagrees"),
                            ("premise", "Shares a premise with a defective question"),
                        ],
                        max_length=10,
                    ),
                ),
                ("room_code", models.CharField(blank=True, db_index=True, max_length=8)),
                ("detail", models.JSONField(blank=True, default=dict)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "question",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="flags", to="quiz.question"
                    ),
                ),
            ],
            options={
                "db_table": "verifier_flag",
                "ordering": ["-created_at", "-id"],
                "indexes": [models.Index(fields=["question", "kind"], name="flag_question_kind")],
            },
        ),
        migrations.CreateModel(
            name="Review",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("label", models.CharField(choices=[("correct", "Correct"), ("defective", "Defective")], max_length=10)),
                ("note", models.CharField(blank=True, max_length=500)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "fixed_as",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="fixed_from",
                        to="quiz.question",
                    ),
                ),
                (
                    "question",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="reviews", to="quiz.question"
                    ),
                ),
                (
                    "reviewer",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "db_table": "verifier_review",
                "ordering": ["-created_at", "-id"],
                "indexes": [models.Index(fields=["question", "-created_at"], name="review_question_recent")],
            },
        ),
        migrations.CreateModel(
            name="PremiseGroup",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "trigger",
                    models.CharField(
                        choices=[("dropped", "Dropped by the gate"), ("defective", "Labelled defective")],
                        max_length=10,
                    ),
                ),
                ("terms", models.JSONField(blank=True, default=list)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("checked_at", models.DateTimeField(blank=True, null=True)),
                (
                    "origin",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="premise_groups", to="quiz.question"
                    ),
                ),
                (
                    "round",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="quiz.round",
                    ),
                ),
            ],
            options={
                "db_table": "verifier_premisegroup",
                "ordering": ["-created_at", "-id"],
                "constraints": [
                    models.UniqueConstraint(fields=("origin", "round"), name="premise_group_origin_round")
                ],
            },
        ),
        migrations.CreateModel(
            name="PremiseMember",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("shared", models.JSONField(blank=True, default=list)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Waiting for the blind re-check"),
                            ("agrees", "The blind checker agrees"),
                            ("doubtful", "Below the threshold blind"),
                            ("disagrees", "The checker chose another option"),
                            ("unverified", "The blind re-check failed"),
                            ("unchecked", "Not re-checked (no blind check)"),
                        ],
                        default="pending",
                        max_length=10,
                    ),
                ),
                ("blind_probabilities", models.JSONField(blank=True, default=dict)),
                ("marked_probability", models.FloatField(blank=True, null=True)),
                ("checker_chose", models.CharField(blank=True, max_length=2)),
                ("threshold", models.FloatField(blank=True, null=True)),
                ("reason", models.CharField(blank=True, max_length=40)),
                ("message", models.CharField(blank=True, max_length=300)),
                ("checked_at", models.DateTimeField(blank=True, null=True)),
                (
                    "group",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="members", to="review.premisegroup"
                    ),
                ),
                (
                    "question",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="premise_memberships",
                        to="quiz.question",
                    ),
                ),
            ],
            options={
                "db_table": "verifier_premisemember",
                "ordering": ["group", "id"],
                "constraints": [models.UniqueConstraint(fields=("group", "question"), name="premise_member_unique")],
            },
        ),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=state_operations, database_operations=[]),
        migrations.RunPython(content_types_to_review, content_types_to_verifier),
    ]
