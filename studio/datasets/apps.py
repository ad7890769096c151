from django.apps import AppConfig


class DatasetsConfig(AppConfig):
    name = "studio.datasets"
    label = "datasets"
