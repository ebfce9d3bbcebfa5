"""The word index of the questions (quiz/questions/search_index.py): a GIN index on PostgreSQL, an FTS5 table kept in step by
triggers on SQLite."""

from django.db import migrations


def install(apps, schema_editor):
    from quiz.questions.search_index import search_index_install

    search_index_install(schema_editor.connection)


def drop(apps, schema_editor):
    from quiz.questions.search_index import search_index_drop

    search_index_drop(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("quiz", "0016_generation_job_takeovers"),
    ]

    operations = [migrations.RunPython(install, drop)]
