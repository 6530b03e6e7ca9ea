"""``manage.py sample_usage``: take one usage sample now (what the beat task does)."""

from typing import Any

from django.core.management.base import BaseCommand

from queues.services import usage


class Command(BaseCommand):
    help = "Sample admitted usage of every queue level and decay it (KEP-4136)."

    def handle(self, *args: Any, **options: Any) -> None:
        result = usage.sample_usage()
        if result.sampled:
            self.stdout.write(f"sampled {result.rows} series rows at {result.at.isoformat()}")
        else:
            self.stdout.write("another sample is running; skipped")
