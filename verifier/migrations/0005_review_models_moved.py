# Review, Flag, PremiseGroup, PremiseMember and ReviewItem now belong to the review app (review/0001_initial),
# which keeps their tables: here they leave the verifier's state only; no table is dropped.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("verifier", "0004_verdict_requested_model_id"),
        ("review", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="PremiseMember"),
                migrations.DeleteModel(name="PremiseGroup"),
                migrations.DeleteModel(name="Review"),
                migrations.DeleteModel(name="Flag"),
                migrations.DeleteModel(name="ReviewItem"),
            ],
            database_operations=[],
        ),
    ]
