"""Checkpoint leaves telemetry's state (it is runs.Checkpoint: runs.0006); its table stays,
owned by the runs app, so nothing is dropped."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("telemetry", "0009_sample_source_row"),
        ("runs", "0006_checkpoint_from_telemetry"),
        ("rewards", "0003_test_run_checkpoint_in_runs"),
        ("model_registry", "0002_checkpoint_in_runs"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="Checkpoint")],
            database_operations=[],
        ),
    ]
