"""A registered model's checkpoint is a runs.Checkpoint (the model moved apps, its table
did not: runs.0006), so only the state changes; the database's foreign key is the same."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("model_registry", "0001_initial"),
        ("runs", "0006_checkpoint_from_telemetry"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="registeredmodel",
                    name="checkpoint",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="models",
                        to="runs.checkpoint",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
