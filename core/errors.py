"""Errors any app's services raise, that the kernel knows how to answer (``core.api.exceptions``)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS
from django.core.exceptions import ValidationError as DjangoValidationError


class FieldErrors(Exception):
    """Bad input, as ``{field: [messages]}``; nested rows as ``{"quotas": [{}, {"nominal": [...]}]}``.

    Django's ``ValidationError`` flattens nested dictionaries, so a write that validates an object
    together with its rows (a ClusterQueue and its quotas) reports through this instead.
    """

    def __init__(self, errors: dict[str, Any]) -> None:
        self.errors = errors
        super().__init__(errors)

    @staticmethod
    def messages(error: DjangoValidationError) -> dict[str, list[str]]:
        """A Django ``ValidationError`` as ``{field: [messages]}`` (``__all__`` kept as is)."""
        if hasattr(error, "error_dict"):
            return {name: list(messages) for name, messages in error.message_dict.items()}
        return {NON_FIELD_ERRORS: list(error.messages)}
