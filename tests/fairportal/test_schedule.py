"""The beat schedule follows the configuration."""

from django.conf import settings

from fairportal.schedule import beat_schedule


def test_given_sampling_interval_then_usage_sample_runs_at_that_period():
    schedule = beat_schedule(sampling_interval_seconds=120, admission_pass_seconds=3, cluster_tick_seconds=4)
    assert schedule["usage-sample"]["schedule"] == 120.0
    assert schedule["admission-passes"]["schedule"] == 3.0
    assert schedule["admission-passes"]["options"]["expires"] == 3.0


def test_given_settings_then_schedule_is_derived_from_fair_sharing_policy():
    entry = settings.CELERY_BEAT_SCHEDULE["usage-sample"]
    assert entry["schedule"] == float(settings.FAIR_SHARING.usage_sampling_interval_seconds)
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert tasks == {
        "queues.schedule_admission_passes",
        "queues.sample_usage",
        "queues.sync_cluster",
        "queues.prune_usage_series",
        "budgets.reconcile_budgets",
        "queues.prune_idempotency_keys",
        "fairportal.reap_stuck_whatif_runs",
        "fairportal.prune_whatif_runs",
        "core.sweep_webhooks",  # pending webhook deliveries whose message the broker lost
        "core.heartbeat",  # the control worker's heartbeat /readyz reads (settings: HEARTBEAT_INTERVAL)
    }
    assert settings.CELERY_BEAT_SCHEDULE["heartbeat"]["schedule"] == float(settings.HEARTBEAT_INTERVAL_SECONDS)
    assert settings.CELERY_BEAT_SCHEDULE["budgets"]["schedule"] == float(settings.BUDGET_ACCOUNTING_SECONDS)
