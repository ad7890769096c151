from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0006_checkpoint_from_telemetry"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="provenance",
            field=models.JSONField(blank=True, default=None, null=True),
        ),
        # The choices a run's validation may hold once runs_to_references has mapped the
        # stored "config" values (no SQL: choices and a Python default live in Django).
        migrations.AlterField(
            model_name="run",
            name="validation",
            field=models.CharField(
                choices=[
                    ("held_out", "Held-out rows of the training version"),
                    ("dataset_version", "Another dataset version"),
                    ("none", "No validation"),
                ],
                default="held_out",
                max_length=16,
            ),
        ),
    ]
