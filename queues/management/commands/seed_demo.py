"""``manage.py seed_demo``: load the demo cluster (idempotent)."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from fairshare.durations import parse_duration
from fairshare.errors import ValidationError
from queues.demo import KEPT_PASSWORD, seed_demo


class Command(BaseCommand):
    help = "Load a realistic demo cluster: flavors, cohorts, queues, teams, budgets, users, workloads."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--if-empty", action="store_true", help="Do nothing when any ClusterQueue exists")
        parser.add_argument(
            "--history",
            default="0s",
            help="spread arrivals over this past span (e.g. 6h) and replay the control loop over it",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from queues.models import ClusterQueue

        if options["if_empty"] and ClusterQueue.objects.exists():
            self.stdout.write("Database already holds a cluster; demo not loaded.")
            return
        try:
            history = parse_duration(options["history"], "--history")
        except ValidationError as error:
            raise CommandError(str(error)) from None
        report = seed_demo(history_seconds=history)
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo ready: {report.local_queues} LocalQueues, {report.total_workloads} workloads "
                f"({report.created_workloads} new)."
            )
        )
        self.stdout.write("Demo logins: " + ", ".join(f"{user} / {password}" for user, password in report.logins))
        if any(password != KEPT_PASSWORD for _, password in report.logins) and not settings.DEBUG:
            self.stdout.write("These passwords are shown once; `make changepassword USER=<name>` sets another.")
