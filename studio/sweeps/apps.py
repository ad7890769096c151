"""The sweeps app: a search over a run's config and inputs whose trials are ordinary runs
(docs/sweeps.md). Optuna samples and prunes; the database is the record, so a sweep
survives the restart of any process (studio.sweeps.driver)."""

from django.apps import AppConfig


class SweepsConfig(AppConfig):
    name = "studio.sweeps"
    label = "sweeps"
    verbose_name = "Sweeps"
