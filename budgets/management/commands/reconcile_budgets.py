"""``manage.py reconcile_budgets``: one accounting cycle now (what the beat task does)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from budgets import services
from budgets.models import Budget
from budgets.status import format_hours


class Command(BaseCommand):
    help = "Charge every budget's ledger, enforce holds and record alerts (KEP-28 budgets)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--budget", help="only this budget (by name)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["budget"]:
            budget = Budget.objects.filter(name=options["budget"]).first()
            if budget is None:
                self.stderr.write(f"--budget: no budget named {options['budget']!r}")
                raise SystemExit(2)
            found = services.reconcile_budget(budget.pk)
            results = [found] if found else []
        else:
            results = services.reconcile_all_budgets()
        for result in results:
            status = result.status
            if status is None:  # the budget was deleted meanwhile
                continue
            used = f"{format_hours(status.used_hours)} of {format_hours(status.allocated_hours)} {status.unit}"
            self.stdout.write(
                f"{result.budget}: {used} ({status.percent:g}%), {result.lines} new ledger lines, hold {result.hold}"
                + (f", events {', '.join(result.events)}" if result.events else "")
            )
