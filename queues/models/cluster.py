"""Cluster: one real (or simulated) cluster that runs admitted workloads, with its connection.

Several clusters behind one fairportal share one usage ledger: a ResourceFlavor belongs to one
cluster, so the flavor the admission pass assigns decides where a workload runs, and the
backend of that cluster (``queues.backends.backend_for``) is told to start or stop it.

Invariants:

- ``name`` is a DNS label (at most 63 characters), unique.
- Exactly one cluster is the installation's default, ``from_settings``: its backend is
  ``CLUSTER_BACKEND`` and its connection and maps are the ``SLURM_*`` settings, read at each
  use, so an install upgraded from the single-backend days keeps working unchanged (the data
  migration ``0019_default_cluster`` creates it and points every flavor, workload and job link at it).
  Its own backend and connection fields stay empty (a constraint checks it).
- Secrets are never stored: a REST cluster names where its token is, ``env:NAME`` (an
  environment variable of the worker) or ``file:/absolute/path`` (re-read when it changes).
- ``flavor_partitions`` maps flavor names to Slurm partitions, ``account_queues`` Slurm
  accounts to ``namespace/local-queue``; both bounded and validated (``clean``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models

from core.validators import validate_dns_label

BACKENDS = ("simulated", "external", "slurm")
MAX_MAP_ENTRIES = 200
PARTITION = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$"
QUEUE_KEY = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
_PARTITION = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
_ACCOUNT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
_QUEUE_KEY = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_SECRET_REF = re.compile(r"^(env:[A-Za-z_][A-Za-z0-9_]{0,127}|file:/[^\x00-\x1f]{1,400})$")
_URL = re.compile(r"^https?://[^\s/?#]+(/[^\s?#]*)?$")
_PATH = re.compile(r"^/[^\x00-\x1f]{0,399}$")
DEFAULT_NAME = "default"


class ClusterBackendKind(models.TextChoices):
    SIMULATED = "simulated", "simulated"
    EXTERNAL = "external", "external"
    SLURM = "slurm", "slurm"


class SlurmTransportKind(models.TextChoices):
    CLI = "cli", "cli (Slurm's client tools)"
    REST = "rest", "rest (slurmrestd with a JWT)"


# Regex validators: the API's schema carries their patterns, so it is as strict as the model.
validate_secret_ref = RegexValidator(
    _SECRET_REF,
    "expected env:VARIABLE_NAME or file:/absolute/path (where the token is; never the token itself)",
    code="invalid_secret_ref",
)
validate_absolute_path = RegexValidator(_PATH, "expected an absolute path (starting with /)", code="invalid_path")
validate_rest_url = RegexValidator(_URL, "expected http(s)://host[:port][/path]", code="invalid_url")
validate_user_name = RegexValidator(
    re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$"),
    "a user name of up to 64 letters, digits, '.', '_' or '-'",
    code="invalid_user",
)


def _check_map(value: Any, field: str, key_pattern: re.Pattern[str], value_pattern: re.Pattern[str]) -> str | None:
    """Why ``value`` is not a small string -> string map with these key/value shapes (None: it is)."""
    if not isinstance(value, Mapping):
        return f"{field}: expected an object of name -> value"
    if len(value) > MAX_MAP_ENTRIES:
        return f"{field}: at most {MAX_MAP_ENTRIES} entries, got {len(value)}"
    for key, item in value.items():
        if not isinstance(key, str) or not key_pattern.match(key):
            return f"{field}: {str(key)[:70]!r} is not a valid label name"
        if not isinstance(item, str) or not value_pattern.match(item):
            return f"{field}: the value of {key!r} ({str(item)[:70]!r}) is not valid"
    return None


_FLAVOR = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


class Cluster(models.Model):
    name = models.CharField(max_length=63, unique=True, validators=[validate_dns_label])
    description = models.CharField(max_length=200, blank=True)
    from_settings = models.BooleanField(
        default=False,
        editable=False,
        help_text="The installation's default cluster: backend CLUSTER_BACKEND, connection and maps from the SLURM_* "
        "settings",
    )
    backend = models.CharField(
        max_length=20,
        choices=ClusterBackendKind.choices,
        blank=True,
        help_text="simulated, external or slurm (empty only for the default cluster: CLUSTER_BACKEND)",
    )
    enabled = models.BooleanField(default=True, help_text="A disabled cluster is neither synced nor started on")
    slurm_transport = models.CharField(
        max_length=4, choices=SlurmTransportKind.choices, default=SlurmTransportKind.CLI, blank=True
    )
    slurm_bin_dir = models.CharField(
        max_length=400,
        blank=True,
        validators=[validate_absolute_path],
        help_text="cli: directory of squeue, sacct, scontrol, scancel, sbatch (empty: PATH)",
    )
    slurm_conf = models.CharField(
        max_length=400,
        blank=True,
        validators=[validate_absolute_path],
        help_text="cli: the cluster's slurm.conf (SLURM_CONF for its commands; empty: the worker's)",
    )
    rest_url = models.CharField(
        max_length=500, blank=True, validators=[validate_rest_url], help_text="rest: slurmrestd, http(s)://host:port"
    )
    rest_secret = models.CharField(
        max_length=410,
        blank=True,
        validators=[validate_secret_ref],
        help_text="rest: where the JWT is, env:VARIABLE or file:/path (the token itself is never stored)",
    )
    rest_user = models.CharField(
        max_length=64,
        blank=True,
        validators=[validate_user_name],
        help_text="rest: X-SLURM-USER-NAME (the user the token belongs to)",
    )
    flavor_partitions = models.JSONField(
        default=dict, blank=True, help_text='Flavor -> Slurm partition, e.g. {"a100": "gpu"}'
    )
    account_queues = models.JSONField(
        default=dict,
        blank=True,
        help_text='Slurm account -> namespace/local-queue its held jobs are imported into, e.g. {"physics": '
        '"team-physics/main"}',
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["from_settings"], condition=models.Q(from_settings=True), name="cluster_one_default"
            ),
            models.CheckConstraint(
                condition=models.Q(from_settings=True, backend="") | models.Q(backend__in=BACKENDS),
                name="cluster_backend_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        super().clean()
        errors: dict[str, str] = {}
        if self.from_settings:
            for field in ("backend", "slurm_bin_dir", "slurm_conf", "rest_url", "rest_secret", "rest_user"):
                if getattr(self, field):
                    errors[field] = "the default cluster takes this from the settings (CLUSTER_BACKEND, SLURM_*)"
            if self.flavor_partitions or self.account_queues:
                errors["flavor_partitions"] = (
                    "the default cluster takes its maps from SLURM_FLAVOR_PARTITIONS and SLURM_ACCOUNT_QUEUES"
                )
        elif not self.backend:
            errors["backend"] = "choose simulated, external or slurm"
        problem = _check_map(self.flavor_partitions, "flavor_partitions", _FLAVOR, _PARTITION)
        if problem:
            errors["flavor_partitions"] = problem
        problem = _check_map(self.account_queues, "account_queues", _ACCOUNT, _QUEUE_KEY)
        if problem:
            errors["account_queues"] = problem
        # A rest cluster without its URL or token reference is stored (the schema cannot say the
        # fields depend on each other) but cannot connect: its syncs back off naming the cluster
        # and the missing setting (``backends.slurm.backend.transport_for``).
        if errors:
            raise ValidationError(errors)

    @property
    def effective_backend(self) -> str:
        """The backend this cluster runs on (the default cluster's: ``CLUSTER_BACKEND`` now)."""
        if self.from_settings:
            from django.conf import settings

            return str(settings.CLUSTER_BACKEND)
        return self.backend


def default_cluster() -> Cluster:
    """The installation's default cluster (created on first use when a flush removed it)."""
    found = Cluster.objects.filter(from_settings=True).first()
    if found is not None:
        return found
    cluster, _ = Cluster.objects.get_or_create(
        from_settings=True, defaults={"name": _free_default_name(), "backend": ""}
    )
    return cluster


def _free_default_name() -> str:
    taken = set(Cluster.objects.filter(name__startswith=DEFAULT_NAME).values_list("name", flat=True))
    if DEFAULT_NAME not in taken:
        return DEFAULT_NAME
    return next(f"{DEFAULT_NAME}-{index}" for index in range(2, 1000) if f"{DEFAULT_NAME}-{index}" not in taken)


def default_cluster_id() -> int:
    """The field default of every ``cluster`` foreign key: the default cluster."""
    return default_cluster().pk
