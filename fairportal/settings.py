"""fairportal settings: everything that differs between machines comes from the environment."""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from fairportal.fairsharing_config import FairSharingConfigError, load_policy
from fairportal.schedule import beat_schedule
from queues.engine.durations import parse_duration
from queues.engine.errors import ValidationError as ConfigValueError

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("FAIRPORTAL_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r}: expected true or false")


def env_seconds(name: str, default: str) -> int:
    """A positive duration (``5s``, ``2d``) from the environment, named in the error."""
    raw = os.environ.get(name, default)
    try:
        seconds = parse_duration(raw, name)
    except ConfigValueError as error:
        raise ImproperlyConfigured(str(error)) from None
    if seconds <= 0:
        raise ImproperlyConfigured(f"{name}: must be greater than 0s, got {raw!r}")
    return seconds


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    """A whole number from the environment, named in the error."""
    raw = os.environ.get(name, str(default)).strip()
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r}: expected a whole number") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name}: must be at least {minimum}, got {value}")
    return value


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", True)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is false")
    SECRET_KEY = "dev-only-insecure-key-change-me"  # noqa: S105 - development default only
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "queues",
    "budgets",
    "playground",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "fairportal.urls"
WSGI_APPLICATION = "fairportal.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Database: SQLite under var/ by default (zero setup); PostgreSQL in CI and production.
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'fairportal.sqlite3'}"),
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "0")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # One writer at a time, taken at BEGIN: two admission passes can never interleave.
    DATABASES["default"].setdefault("OPTIONS", {}).update({"transaction_mode": "IMMEDIATE", "timeout": 20})
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Celery on Redis: the database is the source of truth, the broker only carries messages.
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", REDIS_URL)
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", REDIS_URL)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TIMEZONE = TIME_ZONE
# A broker outage must not hang a request that enqueues a task: fail fast, beat catches up.
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}
CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2, "socket_timeout": 5}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1

# Which cluster runs the admitted workloads: the built-in simulation or external executors.
CLUSTER_BACKENDS = ("simulated", "external")
CLUSTER_BACKEND = os.environ.get("CLUSTER_BACKEND", "simulated").strip()
if CLUSTER_BACKEND not in CLUSTER_BACKENDS:
    raise ImproperlyConfigured(
        f"CLUSTER_BACKEND={CLUSTER_BACKEND!r}: must be one of {', '.join(CLUSTER_BACKENDS)}"
    )

# Fair sharing (KEP-4136 / KAI knobs), validated now so a bad value never reaches the loop.
try:
    FAIR_SHARING = load_policy(os.environ)
except FairSharingConfigError as error:
    raise ImproperlyConfigured(f"invalid fair-sharing configuration: {error}") from None

# Prometheus: /metrics requires "Authorization: Bearer $METRICS_TOKEN" when set; PROMETHEUS_URL
# is the server TimeAware may read historical usage from (empty: the built-in usage series).
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
PROMETHEUS_URL = os.environ.get("PROMETHEUS_URL", "").strip().rstrip("/")
# Control loop periods and the usage time series' retention.
ADMISSION_PASS_INTERVAL_SECONDS = env_seconds("ADMISSION_PASS_INTERVAL", "5s")
CLUSTER_TICK_SECONDS = env_seconds("CLUSTER_TICK_INTERVAL", "5s")
USAGE_SERIES_RAW_RETENTION_SECONDS = env_seconds("USAGE_SERIES_RAW_RETENTION", "2d")
USAGE_SERIES_RETENTION_SECONDS = env_seconds("USAGE_SERIES_RETENTION", "30d")
# Time budgets: accounting + enforcement + alerts cycle, burn-rate window, webhook delivery.
BUDGET_ACCOUNTING_SECONDS = env_seconds("BUDGET_ACCOUNTING_INTERVAL", "1m")
BUDGET_BURN_RATE_WINDOW_SECONDS = env_seconds("BUDGET_BURN_RATE_WINDOW", "1h")
BUDGET_WEBHOOK_TIMEOUT_SECONDS = env_seconds("BUDGET_WEBHOOK_TIMEOUT", "5s")
BUDGET_WEBHOOK_BACKOFF_SECONDS = env_seconds("BUDGET_WEBHOOK_BACKOFF", "2s")
BUDGET_WEBHOOK_MAX_RETRIES = env_int("BUDGET_WEBHOOK_MAX_RETRIES", 6)
CELERY_BEAT_SCHEDULE = beat_schedule(
    sampling_interval_seconds=FAIR_SHARING.usage_sampling_interval_seconds,
    admission_pass_seconds=ADMISSION_PASS_INTERVAL_SECONDS,
    cluster_tick_seconds=CLUSTER_TICK_SECONDS,
    budget_seconds=BUDGET_ACCOUNTING_SECONDS,
)

# The API's task (large what-if simulations) lives beside the API, outside autodiscovery.
CELERY_IMPORTS = ("queues.api.tasks",)

# REST API (/api/v1/): token or session auth, JSON only, roles in queues.tenancy, errors as JSON.
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",  # first: anonymous calls get 401, not 403
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["queues.api.parsers.LimitedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_PAGINATION_CLASS": "queues.api.pagination.StandardPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "queues.api.exceptions.api_exception_handler",
    "COERCE_DECIMAL_TO_STRING": False,  # weights and hours as JSON numbers
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "fairportal API",
    "DESCRIPTION": "Fair-share control plane for shared batch and GPU clusters. Authenticate with "
    "`Authorization: Token <key>` (`manage.py drf_create_token <user>`) or a session.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "queues.api.schema.add_error_responses",
    ],
    "ENUM_NAME_OVERRIDES": {
        "AdmissionModeEnum": "queues.models.choices.AdmissionMode",
        "StopPolicyEnum": "queues.models.choices.StopPolicy",
        "WorkloadStateEnum": "queues.models.choices.WorkloadState",
        "PolicyChangeActionEnum": "queues.models.audit.PolicyChange.Action",
        "BudgetActionEnum": "budgets.models.Budget.Action",
    },
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}

EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "fairportal@localhost")
