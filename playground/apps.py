from django.apps import AppConfig


class PlaygroundConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "playground"
    verbose_name = "Policy playground"

    def ready(self) -> None:
        from playground.api import errors

        errors.register()
