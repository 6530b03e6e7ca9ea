"""Kueue's Configuration: admissionFairSharing is compared with the running settings and the
report names the environment variables to set (settings come from the environment)."""

from __future__ import annotations

import pytest

from fairshare.policy import FairSharingPolicy
from queues.interop.kueue.apply import import_manifests
from queues.interop.kueue.report import ImportFailed
from tests.queues.interop.conftest import manifest

pytestmark = pytest.mark.django_db


def test_given_kueue_configuration_when_imported_then_differences_name_the_environment_variables(settings):
    settings.FAIR_SHARING = FairSharingPolicy.from_mapping({"usageHalfLifeTime": "1h", "usageSamplingInterval": "5m"})

    report = import_manifests(manifest("configuration-v1beta2.yaml"), dry_run=False)

    [configuration] = report.configurations
    assert [d.as_dict() for d in configuration.differences] == [
        {"key": "usageHalfLifeTime", "running": "1h", "imported": "7d", "env": "USAGE_HALF_LIFE_TIME=7d"},
        {
            "key": "resourceWeights",
            "running": {},
            "imported": {"cpu": 1.0, "nvidia.com/gpu": 10.0},
            "env": "RESOURCE_WEIGHTS=cpu=1,nvidia.com/gpu=10",
        },
    ]
    assert configuration.matching == ["usageSamplingInterval"]
    assert configuration.ignored == ["namespace", "manageJobsWithoutQueueName", "fairSharing"]
    assert "      USAGE_HALF_LIFE_TIME=7d" in report.lines()
    assert settings.FAIR_SHARING.usage_half_life_seconds == 3600  # reported, never applied


def test_given_configuration_with_reset_period_when_imported_then_the_kep_field_is_mapped(settings):
    settings.FAIR_SHARING = FairSharingPolicy()
    text = """
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
admissionFairSharing:
  usageHalfLifeTime: 1h
  resetInactivityPeriod: 72h
  preemptionPolicy: Off
"""
    [configuration] = import_manifests(text, dry_run=True).configurations

    assert [d.env for d in configuration.differences] == ["RESET_INACTIVITY_PERIOD=3d"]
    assert configuration.ignored == ["admissionFairSharing.preemptionPolicy"]


def test_given_zero_half_life_when_imported_then_rejected_naming_the_field():
    text = """
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
admissionFairSharing: {usageHalfLifeTime: 0s}
"""
    with pytest.raises(ImportFailed) as failure:
        import_manifests(text, dry_run=False)

    assert [str(p) for p in failure.value.report.problems] == [
        "document 1 (Configuration): admissionFairSharing.usageHalfLifeTime: must be greater than 0s "
        "(a half-life of 0 would erase all usage at every sample)"
    ]
