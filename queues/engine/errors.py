"""The one error type the engine raises for bad input: it always names the field."""


class ValidationError(ValueError):
    """Bad input, reported as ``field: problem`` so every surface can show it in one line."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)

    def under(self, prefix: str) -> "ValidationError":
        """The same error with its field path placed under ``prefix`` (for nested documents)."""
        field = f"{prefix}.{self.field}" if self.field else prefix
        return ValidationError(field, self.message)
