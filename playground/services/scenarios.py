"""Creating scenarios: from a preset, an uploaded file or document, or today's cluster; and the
scenario of a single simulation posted to ``/api/v1/simulations/``.

Every playground path ends in ``_store``, which validates the document with the engine's loader (plus the
playground's limits) before anything is written: a bad file is a ``ValidationError`` naming the
field and leaves no row behind.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.access import Access
from fairshare.errors import ValidationError
from playground import documents
from playground.live_export import LiveOptions, export_live_state
from playground.models import Scenario
from playground.presets import get_preset
from playground.services import lane
from playground.services.simulations import Prepared


def _store(document: dict[str, Any], *, owner: Any, source: str, **fields: Any) -> Scenario:
    """``owner`` is a user or a user's id."""
    scenario = documents.validate(document)
    with transaction.atomic():
        lane.check_storage(owner, scenario_bytes=lane.document_bytes(document))  # raises StorageQuotaExceeded
        return Scenario.objects.create(
            name=str(document.get("name") or scenario.name)[:200],
            description=str(document.get("description") or "")[:2000],
            source=source,
            owner_id=getattr(owner, "pk", owner),
            document=document,
            workload_count=documents.workload_count(scenario),
            **fields,
        )


def create_from_preset(slug: str, *, owner: Any) -> Scenario:
    preset = get_preset(slug)
    if preset is None:
        raise ValidationError("preset", f"unknown preset {slug!r}")
    return _store(preset.document(), owner=owner, source=Scenario.Source.PRESET, preset=slug)


def create_from_text(content: str | bytes, *, owner: Any, filename: str = "") -> Scenario:
    """An uploaded YAML or JSON file; errors name ``document`` or the scenario field."""
    return create_from_document(documents.read_text(content, filename), owner=owner)


def create_from_document(document: Any, *, owner: Any) -> Scenario:
    if not isinstance(document, dict):
        raise ValidationError("document", "a scenario must be a mapping at the top level")
    return _store(document, owner=owner, source=Scenario.Source.UPLOAD)


def create_from_live(access: Access, *, options: LiveOptions, now: datetime | None = None) -> Scenario:
    """Today's cluster as the user may see it: everything for admins; for a tenant, other
    namespaces renamed (see ``live_export``). Users who are neither see nothing live."""
    if not access.can_use_playground:
        raise ValidationError("source", "only admins and tenants can start from today's cluster")
    moment = now or timezone.now()
    visible = None if access.is_admin else set(access.namespace_ids)
    document = export_live_state(now=moment, options=options, visible_namespaces=visible)
    return _store(
        document,
        owner=access.user_id,
        source=Scenario.Source.LIVE,
        live_as_of=moment,
        live_options=options.to_dict(),
        redacted=visible is not None,
    )


def create_from_simulation(prepared: Prepared, *, owner: Any) -> Scenario:
    """The scenario of a background ``/api/v1/simulations/`` run (source ``api``), stored as
    ``services.simulations.prepare`` checked it (that endpoint's caps, not the playground's), under
    the owner's storage quota. Call inside the transaction that starts its run."""
    lane.check_storage(owner, scenario_bytes=lane.document_bytes(prepared.document))
    return Scenario.objects.create(
        name=prepared.scenario.name[:200],
        source=Scenario.Source.API,
        owner=owner,
        document=prepared.document,
        workload_count=prepared.workload_count,
    )
