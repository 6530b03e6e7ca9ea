"""Idempotency keys of workload submissions: a retried submit never creates a second workload."""

from django.conf import settings
from django.db import models


class IdempotencyKey(models.Model):
    """A client's ``Idempotency-Key`` header and what the first request with it created.

    Keys are per user, so two clients cannot collide. The row is written in the same transaction
    as the workload: a submission that fails leaves no key behind and may be retried with it.
    ``request_hash`` (SHA-256 of the canonical JSON body) tells a retry from a different request
    that reuses the key by mistake. Rows older than ``IDEMPOTENCY_KEY_RETENTION`` are pruned.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    request_hash = models.CharField(max_length=64)
    workload = models.ForeignKey(
        "queues.Workload",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Set in the transaction that claimed the key; empty only until it commits",
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)  # pruned by age

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="idempotency_key_unique_per_user")]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.key}"
