"""The one error type the engine raises for bad input: it always names the field."""

MAX_FIELD_CHARS = 200
MAX_MESSAGE_CHARS = 500


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, marked, so an error never echoes unbounded input."""
    return text if len(text) <= limit else f"{text[: limit - 15]}… ({len(text):,} chars)"


class ValidationError(ValueError):
    """Bad input, reported as ``field: problem`` so every surface can show it in one line.

    Messages quote what was sent (``got '-1'``); both parts are clipped, so a hostile document
    cannot make an error body larger than a few hundred characters per problem.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = clip(field, MAX_FIELD_CHARS)
        self.message = clip(message, MAX_MESSAGE_CHARS)
        super().__init__(f"{self.field}: {self.message}" if self.field else self.message)

    def under(self, prefix: str) -> "ValidationError":
        """The same error with its field path placed under ``prefix`` (for nested documents)."""
        field = f"{prefix}.{self.field}" if self.field else prefix
        return ValidationError(field, self.message)
