"""``manage.py check_usage_counters [--repair]``: compare the admitted-usage counters with the rows."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from queues.services import usage_counters

_SHOWN = 20  # differences printed; the count says how many there are


class Command(BaseCommand):
    help = (
        "Recompute the admitted-usage counters from the admitted workloads' resource rows and compare "
        "(exit status 1 on a difference); --repair rewrites them from the rows."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--repair", action="store_true", help="rewrite the counters from the rows")

    def handle(self, *args: Any, **options: Any) -> None:
        differences = usage_counters.check(repair=options["repair"])
        for difference in differences[:_SHOWN]:
            self.stdout.write(
                f"LocalQueue {difference.local_queue_id}, ClusterQueue {difference.cluster_queue_id}, "
                f"{difference.resource}: rows say {difference.expected[0]} in {difference.expected[1]} workloads, "
                f"counter says {difference.stored[0]} in {difference.stored[1]}"
            )
        if not differences:
            self.stdout.write("usage counters match the admitted workloads")
        elif options["repair"]:
            self.stdout.write(f"repaired {len(differences)} counters")
        else:
            raise CommandError(f"{len(differences)} counters differ from the rows; run with --repair to rewrite them")
