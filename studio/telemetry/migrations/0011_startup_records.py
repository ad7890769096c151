from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("telemetry", "0010_checkpoint_to_runs"),
    ]

    operations = [
        migrations.AlterField(
            model_name="ingestedrecord",
            name="kind",
            field=models.CharField(
                choices=[
                    ("status", "Status"),
                    ("metrics", "Metrics"),
                    ("samples", "Samples"),
                    ("log", "Log"),
                    ("checkpoint", "Checkpoint"),
                    ("startup", "Startup phases"),
                ],
                max_length=16,
            ),
        ),
    ]
