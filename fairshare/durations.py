"""Durations as written in scenario files and settings: ``90s``, ``5m``, ``2h``, ``7d``, ``1h30m``."""

from __future__ import annotations

import math
import re

from fairshare.errors import ValidationError

_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d|w)", re.ASCII)
_NUMBER = re.compile(r"[0-9]+(\.[0-9]+)?", re.ASCII)
MAX_DURATION_TEXT = 32
MAX_SECONDS = 100 * 365 * 86400  # a century: any longer is a typo, and would overflow the clocks


def parse_duration(value: object, field: str = "duration", *, allow_negative: bool = False) -> int:
    """Whole seconds for ``value`` (a duration string or a number of seconds)."""
    if isinstance(value, bool) or value is None:
        raise ValidationError(field, f"expected a duration such as 90s, 5m, 2h or 7d, got {value!r}")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise ValidationError(field, f"{value!r} is not a finite duration")
        seconds = float(value)
    else:
        text = str(value).strip()
        if len(text) > MAX_DURATION_TEXT:
            raise ValidationError(field, f"a duration has at most {MAX_DURATION_TEXT} characters, got {len(text)}")
        sign = -1.0 if text.startswith("-") else 1.0
        body = text.lstrip("+-")
        if not body:
            raise ValidationError(field, "expected a duration such as 90s, 5m, 2h or 7d, got an empty string")
        if _NUMBER.fullmatch(body):
            seconds = sign * float(body)
        else:
            pos, total = 0, 0.0
            for match in _PART.finditer(body):
                if match.start() != pos:
                    break
                total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
                pos = match.end()
            if pos != len(body) or pos == 0:
                raise ValidationError(field, f"{text!r} is not a duration (use e.g. 90s, 5m, 2h, 7d or 1h30m)")
            seconds = sign * total
    if seconds < 0 and not allow_negative:
        raise ValidationError(field, f"must not be negative, got {value!r}")
    if abs(seconds) > MAX_SECONDS:
        raise ValidationError(field, f"is out of range: at most {MAX_SECONDS // 86400}d")
    return round(seconds)


def format_duration(seconds: int | float) -> str:
    """The shortest ``1d2h3m4s`` form of ``seconds`` (``0s`` for zero)."""
    total = round(seconds)
    if total == 0:
        return "0s"
    sign = "-" if total < 0 else ""
    total = abs(total)
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if total >= size:
            parts.append(f"{total // size}{unit}")
            total %= size
    return sign + "".join(parts)
