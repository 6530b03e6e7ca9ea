"""One way to write a moment on every page: 24-hour clock, the zone always named.

``2026-11-28 15:04 UTC`` (``when``), ``2026-11-28 15:04:05 UTC`` (``when(..., seconds=True)``), in the
site's ``TIME_ZONE`` (Django's current time zone). Templates use the ``when`` filter
(``core.templatetags.when``); JavaScript that writes times (``static/js/time.js``) formats the same
way from the zone base.html puts on ``<html data-time-zone>``. Never a 12-hour clock, never a bare
time without its zone.
"""

from __future__ import annotations

from datetime import date, datetime

from django.utils import timezone

DATE_TIME = "%Y-%m-%d %H:%M"
DATE_TIME_SECONDS = "%Y-%m-%d %H:%M:%S"


def when(value: datetime | date | None, seconds: bool = False) -> str:
    """``2026-11-28 15:04 UTC``; '' for None. Aware datetimes are shown in the current time zone;
    naive ones are taken to be in it already; a date alone is ``2026-11-28``."""
    if value is None or value == "":
        return ""
    if not isinstance(value, datetime):
        return value.strftime("%Y-%m-%d") if isinstance(value, date) else str(value)
    if timezone.is_aware(value):
        value = timezone.localtime(value)
    else:
        value = timezone.make_aware(value)
    return f"{value.strftime(DATE_TIME_SECONDS if seconds else DATE_TIME)} {value.tzname()}"
