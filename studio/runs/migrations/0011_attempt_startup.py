from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0010_run_archive_and_storage"),
    ]

    operations = [
        migrations.AddField(
            model_name="runattempt",
            name="startup",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
