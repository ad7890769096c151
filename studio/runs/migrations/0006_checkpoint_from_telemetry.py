"""Checkpoint moves from the telemetry app to the runs app: the model's state only. Its
table (`telemetry_checkpoint`, kept through Meta.db_table), rows, ids and constraints stay
as they are, so the foreign keys pointing at it (rewards' test-runs, registered models)
stay valid; those apps' next migrations re-point their state at runs.Checkpoint and
telemetry.0010 drops the old model from telemetry's state."""

from typing import Any

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


def move_content_type(apps: Any, schema_editor: Any) -> None:
    # Admin log entries and permissions name the model by its content type: keep them.
    content_type = apps.get_model("contenttypes", "ContentType")
    if not content_type.objects.filter(app_label="runs", model="checkpoint").exists():
        content_type.objects.filter(app_label="telemetry", model="checkpoint").update(
            app_label="runs"
        )


def restore_content_type(apps: Any, schema_editor: Any) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    if not content_type.objects.filter(app_label="telemetry", model="checkpoint").exists():
        content_type.objects.filter(app_label="runs", model="checkpoint").update(
            app_label="telemetry"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("runs", "0005_run_queue_passes"),
        ("telemetry", "0009_sample_source_row"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Checkpoint",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("attempt", models.PositiveIntegerField()),
                        ("step", models.PositiveIntegerField()),
                        ("uri", models.CharField(max_length=500)),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                        (
                            "run",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="checkpoints",
                                to="runs.run",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "telemetry_checkpoint",
                        "ordering": ["run", "step"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("run", "attempt", "step"), name="checkpoint_once"
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(move_content_type, restore_content_type),
    ]
