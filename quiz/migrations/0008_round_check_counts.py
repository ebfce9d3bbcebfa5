"""A round's "check my questions" result is kept as counts, put into words in the reader's language, instead of
one English sentence (check_note). The notes written so far are read back into counts: they were all made by
quiz.checking.round_check_summary, in one fixed form."""

import re

from django.db import migrations, models

PARTS = {
    "doubtful": re.compile(r"(\d+) doubtful kept by the host"),
    "unverified": re.compile(r"(\d+) unverified"),
    "unchecked": re.compile(r"(\d+) not checked"),
}


def notes_to_counts(apps, schema_editor):
    Round = apps.get_model("quiz", "Round")
    for round_ in Round.objects.exclude(check_note=""):
        counts = {key: int(m.group(1)) if (m := pattern.search(round_.check_note)) else 0 for key, pattern in PARTS.items()}
        total = re.search(r"all (\d+) passed", round_.check_note)
        counts["total"] = int(total.group(1)) if total else round_.entries.count() or sum(counts.values())
        round_.check_counts = counts
        round_.save(update_fields=["check_counts"])


class Migration(migrations.Migration):
    dependencies = [("quiz", "0007_pack_round_language")]

    operations = [
        migrations.AddField(model_name="round", name="check_counts", field=models.JSONField(blank=True, default=dict)),
        migrations.RunPython(notes_to_counts, migrations.RunPython.noop),
        migrations.RemoveField(model_name="round", name="check_note"),
    ]
