from django.apps import AppConfig


class RewardsConfig(AppConfig):
    name = "studio.rewards"
    label = "rewards"
