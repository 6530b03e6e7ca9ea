"""``manage.py admission_pass [--unit KEY]``: run admission passes now (what the beat task does)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from queues.admission import load, passes


class Command(BaseCommand):
    help = "Run the admission pass on every admission unit (or one) and print what it decided."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--unit", help="e.g. cohort:org or clusterQueue:cpu-batch (default: all)")

    def handle(self, *args: Any, **options: Any) -> None:
        units = [unit.key for unit in load.admission_units()]
        if options["unit"]:
            if options["unit"] not in units:
                raise CommandError(f"--unit: unknown admission unit {options['unit']!r} (known: {', '.join(units)})")
            units = [options["unit"]]
        for key in units:
            result = passes.run_admission_pass(key)
            self.stdout.write(
                f"{key}: admitted {len(result.admitted)}, evicted {len(result.evicted)}, "
                f"pending {result.pending} ({result.seconds * 1000:.0f} ms)"
            )
