"""The text each quantity is exported as: as the manifest wrote it, or the shortest exact form.

Pure Python (no Django). ``kueue_notation`` (on Cohorts, ClusterQueues and LocalQueues) keeps
the text an import read, keyed by ``specs.notation_key``; a text is used only while it still
parses to the stored amount, so an edit made elsewhere (UI, API) wins over a stale text.
"""

from __future__ import annotations

from decimal import Decimal

from fairshare.errors import ValidationError as EngineValidationError
from fairshare.quantities import format_quantity, parse_millis, parse_quantity_decimal


def decimal_text(value: Decimal) -> str:
    """``Decimal('2.5000')`` -> ``'2.5'``, ``Decimal('10')`` -> ``'10'`` (never an exponent)."""
    return format(value.normalize(), "f")


def quantity_notation(millis: int, resource: str, written: str | None = None) -> str:
    """``millis`` of ``resource`` as Kubernetes text: as it was ``written`` (``800Gi``, ``4``,
    ``500m``, ``10G``) when that text still parses to ``millis``; otherwise the shortest exact form
    in either suffix family, the resource's own on a tie (``858993459200`` -> ``800Gi`` whatever
    the resource, ``10737418240`` memory -> ``10Gi``, ``10000000000`` GPUs memory -> ``10G``)."""
    if written is not None:
        try:
            if parse_millis(written) == millis:
                return written
        except EngineValidationError:
            pass  # a stored text that no longer parses: the amount decides
    own = format_quantity(millis, resource)
    candidates = (own, format_quantity(millis, "memory"), format_quantity(millis, "cpu"))
    return min(candidates, key=len)  # min keeps the first of equal lengths: the resource's own


def weight_notation(weight: Decimal, written: str | None = None) -> str:
    """A fairSharing weight as it was ``written`` (``500m``, ``0.5``, ``"1"``) when that text still
    equals ``weight``; otherwise plain decimal text."""
    if written is not None:
        try:
            if parse_quantity_decimal(written, allow_negative=True) == weight:
                return written
        except EngineValidationError:
            pass
    return decimal_text(weight)
