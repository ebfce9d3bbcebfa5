from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("lobby", "0015_player_blocked"),
    ]

    operations = [
        migrations.AddField(
            model_name="room",
            name="friendly_names",
            field=models.BooleanField(default=False),
        ),
    ]
