"""Django admin bases shared by the apps: rows the control loop or an audit trail writes."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest


class WrittenElsewhereAdmin(admin.ModelAdmin):
    """Rows something else writes (the control loop, the cluster sync): shown, deletable, never
    added or edited here."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyAdmin(WrittenElsewhereAdmin):
    """Append-only records (audit trails, ledgers): not even deleted here."""

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
