"""fairportal settings: everything that differs between machines comes from the environment."""

from __future__ import annotations

import ipaddress
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from core.directory_settings import DirectorySettingsError, sign_in_settings
from core.fairsharing_config import FairSharingConfigError, load_policy
from core.private_files import ensure_private_file
from fairportal.schedule import MAX_CONTROL_PROCESSES, beat_schedule, task_routes, whatif_annotations
from fairportal.secret_key import SecretKeyError, read_secret_key
from fairshare.durations import parse_duration
from fairshare.errors import ValidationError as ConfigValueError

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


def env_rate(name: str, default: str) -> str | None:
    """A DRF throttle rate (``120/min``, ``5000/hour``) or ``off``, named in the error."""
    raw = os.environ.get(name, default).strip()
    if raw.lower() in {"off", "none", ""}:
        return None
    count, _, period = raw.partition("/")
    if not count.isdigit() or int(count) < 1 or not period or period[0] not in "smhd":
        raise ImproperlyConfigured(f"{name}={raw!r}: expected requests/period such as 120/min or 5000/hour, or off")
    return raw


# Safe by default: no debug pages (they show settings and the URLconf to anyone), loopback only.
DEBUG = env_bool("DEBUG", False)
try:
    SECRET_KEY = read_secret_key(os.environ, debug=DEBUG)
except SecretKeyError as error:
    raise ImproperlyConfigured(str(error)) from None
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")
# The address the web server listens on (gunicorn reads it too): /metrics is open without a
# token only when this is a loopback address.
BIND_ADDRESS = os.environ.get("BIND_ADDRESS", "127.0.0.1").strip()
try:
    BIND_IS_LOOPBACK = BIND_ADDRESS == "localhost" or ipaddress.ip_address(BIND_ADDRESS.strip("[]")).is_loopback
except ValueError:
    raise ImproperlyConfigured(
        f"BIND_ADDRESS={BIND_ADDRESS!r}: expected an IP address such as 127.0.0.1 or 0.0.0.0"
    ) from None

# Served over HTTPS (TLS here or at a proxy): secure cookies, redirect to https, HSTS.
HTTPS = env_bool("HTTPS", False)
SECURE_SSL_REDIRECT = HTTPS
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000) if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
if env_bool("SECURE_PROXY_SSL_HEADER", False):  # a proxy that terminates TLS sets X-Forwarded-Proto
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
X_FRAME_OPTIONS = "DENY"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "core",
    "rest_framework",
    "knox",
    "axes",
    "django_filters",
    "django_tables2",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "queues",
    "budgets",
    "playground",
]

MIDDLEWARE = [
    "core.request_id.RequestIdMiddleware",  # first: every later log line carries the request id
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",  # Content-Security-Policy on every response (CONTENT_SECURITY_POLICY)
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last: answers a locked-out sign-in with 429.html
]

# No inline script or style in any page: scripts are static files, widths drawn from data are
# set through the DOM (static/js/widths.js). Everything is served from this origin. One
# documented exception, for Plotly (it draws SVG with style attributes such as
# 'font-weight:bold' and adds its own fixed stylesheet): style attributes set by script are
# allowed (style-src-attr), and <style> elements only when their text is Plotly's, by hash
# (a Plotly upgrade changes the hash; the browser tests fail on any violation).
# Scripts get no exception: no inline script, no eval.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "style-src-elem": [
            "'self'",
            "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='",  # an empty <style>
            "'sha256-ji27qzEtxXZW+7dun6UwjHXJ18e6WAin1VvNtkzIE/o='",  # plotly.js 4.1.1's own stylesheet
        ],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

ROOT_URLCONF = "fairportal.urls"
WSGI_APPLICATION = "fairportal.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            # Every template may write {{ moment|when }} (one time format, core.timefmt) and
            # {% term "key" %} (glossary hover help, core.glossary) without loading them.
            "builtins": ["core.templatetags.when", "core.templatetags.glossary"],
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
    if str(DATABASES["default"]["NAME"]) not in {"", ":memory:"}:
        # It holds session keys: made 0600 before SQLite creates it with the umask's 0644.
        ensure_private_file(Path(DATABASES["default"]["NAME"]))
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Sign-in with the site's directory (docs/sign-in.md): LDAP when LDAP_SERVER_URI is set, OpenID
# Connect when OIDC_ISSUER is set, directory groups -> roles by DIRECTORY_GROUP_MAP, local
# passwords as LOCAL_LOGIN allows (true | false | admins). Sets AUTHENTICATION_BACKENDS.
try:
    _SIGN_IN = sign_in_settings(os.environ)
except DirectorySettingsError as error:
    raise ImproperlyConfigured(str(error)) from None
AUTHENTICATION_BACKENDS: list[str] = _SIGN_IN.pop("AUTHENTICATION_BACKENDS")
LOCAL_LOGIN: str = _SIGN_IN.pop("LOCAL_LOGIN")
DIRECTORY_GROUP_MAP = _SIGN_IN.pop("DIRECTORY_GROUP_MAP")
LDAP_ENABLED: bool = _SIGN_IN.pop("LDAP_ENABLED")
OIDC_ISSUER: str = _SIGN_IN.pop("OIDC_ISSUER")
globals().update(_SIGN_IN)  # AUTH_LDAP_* (django-auth-ldap) and OIDC_* (mozilla-django-oidc)

# Sign-in brute force (web login and Django admin alike): django-axes counts failures per
# username and address in the database (so across web workers) and locks that pair out.
AXES_ENABLED = env_bool("LOGIN_THROTTLE", True)
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(seconds=env_seconds("LOGIN_LOCKOUT_PERIOD", "15m"))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_LOCKOUT_TEMPLATE = "429.html"
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False

# Caches: per process unless CACHE_URL names a shared Redis (then API throttling counts across
# web workers, and the dashboard's shared figures are computed once for all of them).
CACHE_URL = os.environ.get("CACHE_URL", "").strip()
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
    if CACHE_URL
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", "") or VAR_DIR / "staticfiles")  # the image: collected at build
# WhiteNoise serves static files from gunicorn: gzip-compressed and with content hashes
# in their names (cached for a year) once ``collectstatic`` ran, which ``make run`` does
# (core.storage). With DEBUG (development and the test suite) files are served straight
# from static/.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "core.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
WHITENOISE_KEEP_ONLY_HASHED_FILES = not DEBUG  # templates name static files through {% static %}: hashed

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "queues:home"
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

# Which cluster runs the admitted workloads (registry: queues.backends.REGISTRY).
CLUSTER_BACKENDS = ("simulated", "external", "slurm")
CLUSTER_BACKEND = os.environ.get("CLUSTER_BACKEND", "simulated").strip()
if CLUSTER_BACKEND not in CLUSTER_BACKENDS:
    raise ImproperlyConfigured(f"CLUSTER_BACKEND={CLUSTER_BACKEND!r}: must be one of {', '.join(CLUSTER_BACKENDS)}")


def env_mapping(name: str, default: str) -> dict[str, str]:
    """``key=value,key=value`` from the environment, named in the error."""
    mapping: dict[str, str] = {}
    for item in env_list(name, default):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ImproperlyConfigured(f"{name}: expected key=value pairs separated by commas, got {item[:40]!r}")
        mapping[key.strip()] = value.strip()
    return mapping


# Slurm backend: client tools on PATH (or SLURM_BIN_DIR) with SLURM_CONF naming the cluster.
SLURM_BIN_DIR = os.environ.get("SLURM_BIN_DIR", "").strip()
SLURM_COMMAND_TIMEOUT_SECONDS = env_seconds("SLURM_COMMAND_TIMEOUT", "20s")
SLURM_FLAVOR_PARTITIONS = env_mapping("SLURM_FLAVOR_PARTITIONS", "")
SLURM_ACCOUNT_QUEUES = env_mapping("SLURM_ACCOUNT_QUEUES", "")
SLURM_RESOURCES = env_mapping("SLURM_RESOURCES", "cpu=cpu,mem=memory,gres/gpu=nvidia.com/gpu")
SLURM_SUBMIT_OUTPUT = os.environ.get("SLURM_SUBMIT_OUTPUT", "/dev/null").strip() or "/dev/null"
# How the worker talks to Slurm: its command-line tools (cli) or slurmrestd with a JWT (rest).
SLURM_TRANSPORT = os.environ.get("SLURM_TRANSPORT", "cli").strip().lower() or "cli"
if SLURM_TRANSPORT not in {"cli", "rest"}:
    raise ImproperlyConfigured(f"SLURM_TRANSPORT={SLURM_TRANSPORT[:20]!r}: expected cli or rest")
SLURM_PARALLEL_CALLS = env_int("SLURM_PARALLEL_CALLS", 4, minimum=1)
if SLURM_PARALLEL_CALLS > 16:
    raise ImproperlyConfigured(f"SLURM_PARALLEL_CALLS: at most 16, got {SLURM_PARALLEL_CALLS}")
SLURM_REST_URL = os.environ.get("SLURM_REST_URL", "").strip()
SLURM_REST_USER = os.environ.get("SLURM_REST_USER", "").strip()
SLURM_REST_VERSION = os.environ.get("SLURM_REST_VERSION", "").strip()
# The token itself (SLURM_JWT) is read from the environment by the rest transport, never kept in
# settings (where a debug page or a settings dump could show it); a file is re-read on change.
SLURM_JWT_FILE = os.environ.get("SLURM_JWT_FILE", "").strip()
if SLURM_TRANSPORT == "rest" and not SLURM_REST_URL:
    raise ImproperlyConfigured("SLURM_REST_URL: required with SLURM_TRANSPORT=rest (e.g. http://slurmrestd:6820)")
if SLURM_TRANSPORT == "rest" and bool(os.environ.get("SLURM_JWT", "").strip()) == bool(SLURM_JWT_FILE):
    raise ImproperlyConfigured("SLURM_JWT or SLURM_JWT_FILE: set exactly one with SLURM_TRANSPORT=rest")
# While the cluster does not answer, syncs and admission passes wait: first this long, doubling.
CLUSTER_BACKOFF_SECONDS = env_seconds("CLUSTER_BACKOFF", "5s")
CLUSTER_BACKOFF_MAX_SECONDS = env_seconds("CLUSTER_BACKOFF_MAX", "5m")

# The admission pass explains this many waiting workloads per ClusterQueue one by one; the later
# ones that wait for quota are explained by reference to the queue's head (queues/models/reason.py).
ADMISSION_EXPLAINED_PER_QUEUE = env_int("ADMISSION_EXPLAINED_PER_QUEUE", 50, minimum=1)

# Fair sharing (KEP-4136 / KAI knobs), validated now so a bad value never reaches the loop.
try:
    FAIR_SHARING = load_policy(os.environ)
except FairSharingConfigError as error:
    raise ImproperlyConfigured(f"invalid fair-sharing configuration: {error}") from None

# Prometheus: /metrics requires "Authorization: Bearer $METRICS_TOKEN"; without a token it is
# open only when the server is bound to loopback (BIND_ADDRESS), else refused. PROMETHEUS_URL
# is the server TimeAware may read historical usage from (empty: the built-in usage series).
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
# false: /metrics leaves out samples naming tenants (namespace, LocalQueue, budget labels).
METRICS_TENANT_LABELS = env_bool("METRICS_TENANT_LABELS", True)
PROMETHEUS_URL = os.environ.get("PROMETHEUS_URL", "").strip().rstrip("/")
# Control loop periods and the usage time series' retention.
ADMISSION_PASS_INTERVAL_SECONDS = env_seconds("ADMISSION_PASS_INTERVAL", "5s")
CLUSTER_TICK_SECONDS = env_seconds("CLUSTER_TICK_INTERVAL", "5s")
USAGE_SERIES_RAW_RETENTION_SECONDS = env_seconds("USAGE_SERIES_RAW_RETENTION", "2d")
USAGE_SERIES_RETENTION_SECONDS = env_seconds("USAGE_SERIES_RETENTION", "30d")
# Time budgets: accounting + enforcement + alerts cycle, burn-rate window, webhook delivery.
BUDGET_ACCOUNTING_SECONDS = env_seconds("BUDGET_ACCOUNTING_INTERVAL", "1m")
BUDGET_BURN_RATE_WINDOW_SECONDS = env_seconds("BUDGET_BURN_RATE_WINDOW", "6h")
BUDGET_WEBHOOK_TIMEOUT_SECONDS = env_seconds("BUDGET_WEBHOOK_TIMEOUT", "5s")
BUDGET_WEBHOOK_BACKOFF_SECONDS = env_seconds("BUDGET_WEBHOOK_BACKOFF", "2s")
BUDGET_WEBHOOK_MAX_RETRIES = env_int("BUDGET_WEBHOOK_MAX_RETRIES", 6)


def env_networks(name: str) -> list[str]:
    """CIDRs (``10.20.0.0/16, fd00::/64``) from the environment, named in the error."""
    networks = []
    for item in env_list(name, "")[:64]:
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            raise ImproperlyConfigured(f"{name}: {item[:60]!r} is not a network such as 10.20.0.0/16") from None
    return networks


# Webhooks reach public addresses only; these networks too (internal receivers), e.g. 10.20.0.0/16.
WEBHOOK_ALLOWED_NETWORKS = env_networks("WEBHOOK_ALLOWED_NETWORKS")
# Idempotency-Key rows of workload submissions are kept this long, then pruned (hourly).
IDEMPOTENCY_KEY_RETENTION_SECONDS = env_seconds("IDEMPOTENCY_KEY_RETENTION", "1d")
# The what-if lane (playground.services.lane): playground runs (simulations API runs among them) have their own queue and
# worker, time limits, a per-user cap, a reaper for stuck runs and a retention period.
WHATIF_SOFT_TIME_LIMIT_SECONDS = env_seconds("WHATIF_SOFT_TIME_LIMIT", "10m")
WHATIF_TIME_LIMIT_SECONDS = env_seconds("WHATIF_TIME_LIMIT", f"{WHATIF_SOFT_TIME_LIMIT_SECONDS + 60}s")
if WHATIF_TIME_LIMIT_SECONDS <= WHATIF_SOFT_TIME_LIMIT_SECONDS:
    raise ImproperlyConfigured("WHATIF_TIME_LIMIT: must be longer than WHATIF_SOFT_TIME_LIMIT")
WHATIF_MAX_ACTIVE_PER_USER = env_int("WHATIF_MAX_ACTIVE_PER_USER", 3, minimum=1)
WHATIF_QUEUED_TIMEOUT_SECONDS = env_seconds("WHATIF_QUEUED_TIMEOUT", "1h")
WHATIF_RESULT_RETENTION_SECONDS = env_seconds("WHATIF_RESULT_RETENTION", "30d")
# Per-user storage quotas of the what-if lane (every scenario source, runs, their results).
WHATIF_MAX_SCENARIOS_PER_USER = env_int("WHATIF_MAX_SCENARIOS_PER_USER", 200, minimum=1)
WHATIF_MAX_RUNS_PER_USER = env_int("WHATIF_MAX_RUNS_PER_USER", 500, minimum=1)
WHATIF_MAX_STORED_BYTES_PER_USER = env_int("WHATIF_MAX_STORED_BYTES_PER_USER", 200 * 1024 * 1024, minimum=1)
# Scenarios with no run left are deleted this long after they were stored, whatever their source.
WHATIF_SCENARIO_RETENTION_SECONDS = env_seconds("WHATIF_SCENARIO_RETENTION", "30d")
# The control loop's worker processes (the Procfile's `worker`: fairportal.control_workers), one
# per shard queue control.0 .. control.N-1; every unit's admission pass goes to the same one, so
# its snapshot reuse stays warm. The same value in every process: senders route by it.
CONTROL_LOOP_PROCESSES = env_int("CONTROL_LOOP_PROCESSES", 2, minimum=1)
if CONTROL_LOOP_PROCESSES > MAX_CONTROL_PROCESSES:
    raise ImproperlyConfigured(f"CONTROL_LOOP_PROCESSES: must be at most {MAX_CONTROL_PROCESSES}")
CELERY_TASK_ROUTES = task_routes()
CELERY_TASK_ANNOTATIONS = whatif_annotations(WHATIF_SOFT_TIME_LIMIT_SECONDS, WHATIF_TIME_LIMIT_SECONDS)
CELERY_BEAT_SCHEDULE = beat_schedule(
    sampling_interval_seconds=FAIR_SHARING.usage_sampling_interval_seconds,
    admission_pass_seconds=ADMISSION_PASS_INTERVAL_SECONDS,
    cluster_tick_seconds=CLUSTER_TICK_SECONDS,
    budget_seconds=BUDGET_ACCOUNTING_SECONDS,
)

# REST API (/api/v1/): token or session auth, JSON only, roles in core.access, errors as JSON.
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "core.api.schema.ValidatedAutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "knox.auth.TokenAuthentication",  # first: anonymous calls get 401, not 403
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.LimitedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "core.api.filters.StrictOrderingFilter",  # an unknown ?ordering= term is a 400
    ],
    "DEFAULT_PAGINATION_CLASS": "core.api.pagination.StandardPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "core.api.exceptions.api_exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["core.throttling.UserRateThrottle", "core.throttling.AnonRateThrottle"],
    "COERCE_DECIMAL_TO_STRING": False,  # weights and hours as JSON numbers
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}
# Requests per signed-in user and per anonymous address (read at each request: see
# core.throttling); "off" disables one.
API_THROTTLE_RATES = {
    "user": env_rate("API_THROTTLE_USER", "1200/min"),
    "anon": env_rate("API_THROTTLE_ANON", "60/min"),
}
# A PUT, PATCH or DELETE of a policy object without If-Match: 428 when true, unconditional when
# false (the default, as before ETags existed; see core.api.etags).
API_REQUIRE_IF_MATCH = env_bool("API_REQUIRE_IF_MATCH", False)
# API tokens (django-rest-knox): only a hash is stored; each expires after API_TOKEN_TTL.
REST_KNOX = {"TOKEN_TTL": timedelta(seconds=env_seconds("API_TOKEN_TTL", "90d")), "AUTO_REFRESH": False}

SPECTACULAR_SETTINGS = {
    "TITLE": "fairportal API",
    "DESCRIPTION": "Fair-share control plane for shared batch and GPU clusters. Authenticate with "
    "`Authorization: Token <key>` (`manage.py create_api_token <user>`) or a session.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.api.schema.add_error_responses",
        "core.api.schema.empty_query_means_absent",
        "core.api.schema.add_conditional_requirements",
    ],
    "ENUM_NAME_OVERRIDES": {
        "AdmissionModeEnum": "queues.models.choices.AdmissionMode",
        "StopPolicyEnum": "queues.models.choices.StopPolicy",
        "WorkloadStateEnum": "queues.models.choices.WorkloadState",
        "PolicyChangeActionEnum": "core.models.audit.PolicyChange.Action",
        "BudgetActionEnum": "budgets.models.Budget.Action",
        "ScenarioSourceEnum": "playground.models.Scenario.Source",
        "ScenarioCreateSourceEnum": ["preset", "live", "document"],
        "StatusEnum": "playground.models.Run.Status",  # keeps its name beside the webhook deliveries' status
        "WebhookDeliveryStatusEnum": "core.models.webhooks.WebhookDelivery.Status",
        "WebhookDeliverySourceEnum": "core.models.webhooks.WebhookDelivery.Source",
        "WebhookEndpointScopeEnum": "core.models.webhooks.WebhookEndpoint.Scope",
    },
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Logs: one line a record on stderr, as text (`make run`) or JSON (LOG_FORMAT=json), each with the
# request id (X-Request-ID, carried into the tasks a request sends: core.log_context).
LOG_FORMAT = os.environ.get("LOG_FORMAT", "text").strip().lower() or "text"
if LOG_FORMAT not in {"text", "json"}:
    raise ImproperlyConfigured(f"LOG_FORMAT={LOG_FORMAT!r}: expected text or json")
# One line per request on the fairportal.request logger (the access log, with the request id).
REQUEST_LOG = env_bool("REQUEST_LOG", LOG_FORMAT == "json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "core.log_context.RequestIdFilter"}},
    "formatters": {
        "text": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
        "json": {"()": "core.log_context.JsonFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["request_id"], "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
# Workers log through LOGGING above (same format, request ids), not Celery's own handler.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# /healthz and /readyz (core.health): READYZ_TOKEN (default METRICS_TOKEN) as for /metrics; the
# control loop's heartbeat (core.heartbeat, sent by beat) must be younger than the maximum age.
READYZ_TOKEN = os.environ.get("READYZ_TOKEN", "") or METRICS_TOKEN
HEARTBEAT_INTERVAL_SECONDS = env_seconds("HEARTBEAT_INTERVAL", "10s")
READYZ_HEARTBEAT_MAX_AGE_SECONDS = env_seconds("READYZ_HEARTBEAT_MAX_AGE", "60s")
READYZ_BROKER_TIMEOUT_SECONDS = env_seconds("READYZ_BROKER_TIMEOUT", "2s")
CELERY_BEAT_SCHEDULE["heartbeat"] = {
    "task": "core.heartbeat",
    "schedule": float(HEARTBEAT_INTERVAL_SECONDS),
    "options": {"expires": float(HEARTBEAT_INTERVAL_SECONDS)},
}
# Probes are answered over plain HTTP too (HTTPS=true redirects everything else).
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]

EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "fairportal@localhost")
