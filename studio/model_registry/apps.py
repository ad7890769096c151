from django.apps import AppConfig


class ModelRegistryConfig(AppConfig):
    name = "studio.model_registry"
    label = "model_registry"
    verbose_name = "Models"
    default_auto_field = "django.db.models.BigAutoField"
