from typing import Any

from django.db import migrations, models

VERDICTS = ("good", "bad")


def keep_each_authors_latest_verdict(apps: Any, schema_editor: Any) -> None:
    """Samples labelled both "good" and "bad" by one user (allowed before this migration):
    keep the label given last, so the new constraint holds."""
    SampleLabel = apps.get_model("telemetry", "SampleLabel")
    seen: set[tuple[int, int]] = set()
    stale: list[int] = []
    rows = (
        SampleLabel.objects.filter(label__in=VERDICTS)
        .order_by("sample_id", "author_id", "-created_at", "-id")
        .values_list("id", "sample_id", "author_id")
    )
    for pk, sample, author in rows.iterator():
        if (sample, author) in seen:
            stale.append(pk)
        else:
            seen.add((sample, author))
    SampleLabel.objects.filter(pk__in=stale).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("telemetry", "0006_sample_reward_extra"),
    ]

    operations = [
        migrations.RunPython(keep_each_authors_latest_verdict, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="samplelabel",
            constraint=models.UniqueConstraint(
                condition=models.Q(("label__in", VERDICTS)),
                fields=("sample", "author"),
                name="one_verdict_per_author",
            ),
        ),
    ]
