"""HTTP import and export of Kueue manifests (staff only).

``POST /api/v1/kueue/import`` takes multi-document YAML (``application/yaml`` or ``text/plain``
body, or JSON ``{"manifests": "...", "dryRun": true}``); ``?dryRun=true`` shows the diff without
saving. An import that would delete or re-parent something admitted work depends on is refused
(400, ``refused: true``, the ``disruptions`` listed) unless ``confirmDisruptive=true``. Errors
name this API's parameters, never the command's flags. ``GET /api/v1/kueue/export?apiVersion=v1beta1`` returns YAML (or JSON with
``Accept: application/json``), export warnings as leading ``#`` comments. Authentication and
permissions are explicit here so they do not depend on the API's defaults: session or token,
staff users only.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from knox.auth import TokenAuthentication
from rest_framework import serializers
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.parsers import LimitedJSONParser, LimitedTextParser
from core.models import Surface
from fairshare.safe_yaml import DEFAULT_MAX_BYTES as MAX_MANIFEST_BYTES
from queues.interop.kueue.apply import import_manifests
from queues.interop.kueue.export import export_manifests
from queues.interop.kueue.report import ImportFailed, ImportRefused
from queues.interop.kueue.specs import API_TERMS, API_VERSIONS, DEFAULT_EXPORT_VERSION

YAML_MEDIA_TYPE = "application/yaml"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


class BadFlag(ValueError):
    """A boolean parameter (dryRun, skipUnsupported, confirmDisruptive) that is neither true nor false."""


def _flag(value: Any, name: str = "dryRun") -> bool:
    if isinstance(value, bool):
        return value
    text = value.strip().lower() if isinstance(value, str) else None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise BadFlag(f"{name}: expected true or false")


KUEUE_IMPORT_JSON = inline_serializer(
    "KueueImportRequest",
    fields={
        "manifests": serializers.CharField(help_text="The YAML text of the manifests"),
        "dryRun": serializers.BooleanField(required=False, default=False),
        "skipUnsupported": serializers.BooleanField(required=False, default=False),
        "confirmDisruptive": serializers.BooleanField(
            required=False,
            default=False,
            help_text="apply even when it deletes or re-parents something admitted work depends on",
        ),
        "namespace": serializers.CharField(
            required=False, max_length=63, help_text="namespace of LocalQueues without metadata.namespace"
        ),
    },
)


class StaffOnlyView(APIView):
    authentication_classes = [SessionAuthentication, TokenAuthentication]
    permission_classes = [IsAdminUser]


class KueueImportView(StaffOnlyView):
    parser_classes = [LimitedJSONParser, LimitedTextParser]
    max_body_bytes = MAX_MANIFEST_BYTES

    @extend_schema(
        summary="Import Kueue manifests (dry run or apply)",
        request={YAML_MEDIA_TYPE: OpenApiTypes.STR, "application/json": KUEUE_IMPORT_JSON},
        parameters=[
            OpenApiParameter("dryRun", OpenApiTypes.BOOL, description="show the diff, save nothing"),
            OpenApiParameter(
                "skipUnsupported",
                OpenApiTypes.BOOL,
                description="skip (and list) documents of kinds fairportal does not model "
                "(Topology, AdmissionCheck, ...)",
            ),
            OpenApiParameter(
                "namespace", OpenApiTypes.STR, description="namespace of LocalQueues without metadata.namespace"
            ),
            OpenApiParameter(
                "confirmDisruptive",
                OpenApiTypes.BOOL,
                description="apply even when the import deletes quota or re-parents a cohort or ClusterQueue that "
                "admitted work depends on (without it such an import is refused with 400 and the list)",
            ),
        ],
        responses={200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
    )
    def post(self, request: Request) -> Response:
        try:
            return self._import(request)
        except BadFlag as error:
            return Response({"errors": [str(error)]}, status=400)

    def _import(self, request: Request) -> Response:
        data = request.data
        dry_run = _flag(request.query_params.get("dryRun", ""))
        skip = _flag(request.query_params.get("skipUnsupported", ""), "skipUnsupported")
        confirm = _flag(request.query_params.get("confirmDisruptive", ""), "confirmDisruptive")
        namespace = request.query_params.get("namespace", "")
        if isinstance(data, dict):
            text = data.get("manifests")
            for name in ("dryRun", "skipUnsupported", "confirmDisruptive"):
                if not isinstance(data.get(name, False), bool):
                    raise BadFlag(f"{name}: expected true or false")
            dry_run = dry_run or data.get("dryRun", False)
            skip = skip or data.get("skipUnsupported", False)
            confirm = confirm or data.get("confirmDisruptive", False)
            namespace = data.get("namespace") or namespace
            if not isinstance(text, str):
                return Response({"errors": ["manifests: required, the YAML text of the manifests"]}, status=400)
        elif isinstance(data, str) and not request.content_type.startswith("application/json"):
            text = data
        else:  # JSON null, a list, a number, a string: not what this endpoint takes
            return Response(
                {"errors": ['body: expected YAML text or a JSON object {"manifests": "...", "dryRun": false}']},
                status=400,
            )
        if not text.strip():
            return Response({"errors": ["body: empty; send the YAML text of Kueue manifests"]}, status=400)
        if not isinstance(namespace, str) or len(namespace) > 63:
            return Response({"errors": ["namespace: expected a namespace name of at most 63 characters"]}, status=400)
        try:
            report = import_manifests(
                text,
                dry_run=dry_run,
                actor=request.user,
                surface=Surface.API,
                skip_unsupported=skip,
                namespace=namespace or None,
                confirm_disruptive=confirm,
                terms=API_TERMS,
            )
        except ImportFailed as failure:
            return Response(failure.report.as_dict(), status=400)
        except ImportRefused as refusal:
            body = refusal.report.as_dict()
            count = len(refusal.report.dependent_disruptions)
            body["errors"] = [
                f"confirmDisruptive: {count} deletion(s) or re-parenting(s) that admitted work depends on "
                "(listed in disruptions); nothing was saved. Send confirmDisruptive=true to apply them, or "
                "dryRun=true to preview"
            ]
            return Response(body, status=400)
        if not report.objects and not report.configurations:
            return Response({"errors": ["body: no Kubernetes objects in the manifests"]}, status=400)
        return Response(report.as_dict())


class KueueExportView(StaffOnlyView):
    @extend_schema(
        summary="Export the policy as Kueue manifests",
        parameters=[OpenApiParameter("apiVersion", OpenApiTypes.STR, enum=list(API_VERSIONS))],
        responses={
            (200, YAML_MEDIA_TYPE): OpenApiTypes.STR,
            (200, "application/json"): OpenApiTypes.OBJECT,
            (400, "application/json"): OpenApiTypes.OBJECT,
        },
    )
    def get(self, request: Request) -> Response | HttpResponse:
        api_version = request.query_params.get("apiVersion", DEFAULT_EXPORT_VERSION)
        if api_version not in API_VERSIONS:
            return Response(
                {"errors": [f"apiVersion: must be one of {', '.join(API_VERSIONS)}, got {api_version!r}"]}, status=400
            )
        result = export_manifests(api_version)
        if "application/json" in request.headers.get("Accept", ""):
            return Response({"documents": result.documents, "warnings": result.warnings})
        comments = "".join(f"# warning: {' '.join(warning.split())}\n" for warning in result.warnings)
        return HttpResponse(comments + result.to_yaml(), content_type=f"{YAML_MEDIA_TYPE}; charset=utf-8")
