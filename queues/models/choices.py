"""Enumerations shared by models, forms, the API and the snapshot (values follow Kueue's API)."""

from django.db import models

from fairshare import types as engine


class AdmissionMode(models.TextChoices):
    """The engine's admission modes (``fairshare.types``, their one definition) with labels."""

    NO_FAIR_SHARING = engine.NO_FAIR_SHARING, "No admission fair sharing"
    USAGE_BASED = engine.USAGE_BASED, "Usage-based (Kueue AFS)"
    DOMINANT_RESOURCE_SHARE = engine.DOMINANT_RESOURCE_SHARE, "Dominant resource share"
    TIME_AWARE = engine.TIME_AWARE, "Time-aware (KAI)"


class QueueingStrategy(models.TextChoices):
    STRICT_FIFO = "StrictFIFO", "StrictFIFO"
    BEST_EFFORT_FIFO = "BestEffortFIFO", "BestEffortFIFO"


class StopPolicy(models.TextChoices):
    NONE = "None", "None"
    HOLD = "Hold", "Hold"
    HOLD_AND_DRAIN = "HoldAndDrain", "HoldAndDrain"


class StopLevel(models.TextChoices):
    """Who set a LocalQueue's stop; only that level or a higher one may change or lift it."""

    EDITOR = "editor", "Tenant editor"
    ADMIN = "admin", "Admin"


class WithinClusterQueuePreemption(models.TextChoices):
    NEVER = "Never", "Never"
    LOWER_PRIORITY = "LowerPriority", "LowerPriority"
    LOWER_OR_NEWER_EQUAL_PRIORITY = "LowerOrNewerEqualPriority", "LowerOrNewerEqualPriority"
    EXCEED_WEIGHT = "ExceedWeight", "ExceedWeight (KEP-752: from LocalQueues above their weight's share)"


class WithinNamespacePreemption(models.TextChoices):
    """``preemption.withinNamespace``: may a workload over its namespace's hard quota evict the
    namespace's own admitted workloads, and which."""

    NEVER = "Never", "Never"
    LOWER_PRIORITY = "LowerPriority", "LowerPriority"
    LOWER_OR_NEWER_EQUAL_PRIORITY = "LowerOrNewerEqualPriority", "LowerOrNewerEqualPriority"


class ReclaimWithinCohort(models.TextChoices):
    NEVER = "Never", "Never"
    LOWER_PRIORITY = "LowerPriority", "LowerPriority"
    ANY = "Any", "Any"


class WorkloadState(models.TextChoices):
    PENDING = "Pending", "Pending"
    ADMITTED = "Admitted", "Admitted"
    FINISHED = "Finished", "Finished"
    FAILED = "Failed", "Failed"
    CANCELLED = "Cancelled", "Cancelled"


ACTIVE_STATES = (WorkloadState.PENDING, WorkloadState.ADMITTED)
TERMINAL_STATES = (WorkloadState.FINISHED, WorkloadState.FAILED, WorkloadState.CANCELLED)
