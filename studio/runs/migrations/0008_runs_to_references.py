"""Every run stored before runs referenced resources, brought to references or kept as a
provenance record (studio.references.stored_runs).

The work is the studio's own code (the dataset ingest, model records, the registry of
input kinds), which reads the models as they are in the code, not as this migration's
state: a fresh database, or one with no such run, never reaches it (the check below reads
the historical model). A database holding such runs is to be migrated by a studio whose
models match the schema up to this migration, which the release that ships it does.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import migrations
from django.db.models import Q

logger = logging.getLogger(__name__)


def to_references(apps: Any, schema_editor: Any) -> None:
    historical = apps.get_model("runs", "Run")
    stored = historical.objects.filter(
        Q(model__isnull=True) | Q(validation="config"), provenance__isnull=True
    )
    if not stored.exists():
        return
    from studio.references.stored_runs import upgrade_stored_runs

    # The code's Run may have columns later migrations add: read the ones there are now.
    outcome = upgrade_stored_runs([f.name for f in historical._meta.concrete_fields])
    logger.warning(
        "Runs stored before references: %d given references, %d kept as provenance (%s).",
        len(outcome["references"]),
        len(outcome["provenance"]),
        ", ".join(map(str, outcome["provenance"])) or "none",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0007_run_provenance"),
        ("datasets", "0002_dataset_import"),
        ("model_registry", "0003_role_adapter"),
        ("projects", "0003_notifications"),
        ("rewards", "0002_reward_test_runs"),
        ("telemetry", "0009_sample_source_row"),
    ]

    # Nothing to undo: the references are what the run was made of.
    operations = [migrations.RunPython(to_references, migrations.RunPython.noop)]
