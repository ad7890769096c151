"""Django settings, read from the environment (12-factor).

Two modes, chosen by ``RLSTUDIO_ENV``:
- ``development`` (default): a secret key is generated once and kept in ``var/``;
  the database and broker default to the embedded stack that ``rlstudio up`` starts.
- ``production``: ``SECRET_KEY``, ``DATABASE_URL``, ``REDIS_URL`` and ``ALLOWED_HOSTS``
  must be set, and every ``check --deploy`` hardening setting is on.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from studio.paths import REPO_ROOT, var_dir
from studio.platform.generated_secrets import (
    embedded_database_url,
    embedded_redis_url,
    read_or_create_secret_key,
)

ENV = os.environ.get("RLSTUDIO_ENV", "development")
if ENV not in ("development", "production"):
    raise ImproperlyConfigured(
        f"RLSTUDIO_ENV={ENV!r} is not a mode; use 'development' or 'production'."
    )
PRODUCTION = ENV == "production"

# Ports of the embedded stack, also used by `rlstudio up`
# (see studio/platform/services.py and docs/operations.md).
EMBEDDED_POSTGRES_PORT = int(os.environ.get("RLSTUDIO_POSTGRES_PORT", "54329"))
EMBEDDED_REDIS_PORT = int(os.environ.get("RLSTUDIO_REDIS_PORT", "63799"))
EMBEDDED_RAY_DASHBOARD_PORT = int(os.environ.get("RLSTUDIO_RAY_DASHBOARD_PORT", "8265"))
# Ray head GCS port; `rlstudio up` also uses the next 7 ports for the head's other servers.
EMBEDDED_RAY_PORT = int(os.environ.get("RLSTUDIO_RAY_PORT", "63800"))


def _required(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise ImproperlyConfigured(f"{name} must be set when RLSTUDIO_ENV=production.")
    return value


if PRODUCTION:
    SECRET_KEY = _required("SECRET_KEY")
    DATABASE_URL = _required("DATABASE_URL")
    REDIS_URL = _required("REDIS_URL")
    ALLOWED_HOSTS = [h.strip() for h in _required("ALLOWED_HOSTS").split(",") if h.strip()]
    DEBUG = False
else:
    # A per-checkout key generated once, so sessions survive restarts.
    SECRET_KEY = os.environ.get("SECRET_KEY") or read_or_create_secret_key(var_dir())
    # The embedded stack's, with the passwords `rlstudio up` generated (var/secrets/).
    DATABASE_URL = os.environ.get("DATABASE_URL") or embedded_database_url(
        var_dir(), EMBEDDED_POSTGRES_PORT
    )
    REDIS_URL = os.environ.get("REDIS_URL") or embedded_redis_url(var_dir(), EMBEDDED_REDIS_PORT)
    ALLOWED_HOSTS = os.environ.get("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver").split(
        ","
    )
    DEBUG = os.environ.get("DEBUG", "0") == "1"

# Ray: the Jobs API / dashboard address. Empty means "not configured".
RAY_ADDRESS = os.environ.get(
    "RAY_ADDRESS", "" if PRODUCTION else f"http://127.0.0.1:{EMBEDDED_RAY_DASHBOARD_PORT}"
)

# Runs on Ray (docs/operations.md, "Runs on Ray"). The studio's base URL as the cluster
# reaches it: trainers report there and fetch their datasets from it.
RLSTUDIO_URL = os.environ.get("RLSTUDIO_URL", "http://127.0.0.1:8000")
# Ray job ids are `<prefix>-run-<run id>-a<attempt>`; give every studio sharing a cluster
# its own prefix, or one studio's run 7 would be taken for another's.
RLSTUDIO_RAY_JOB_PREFIX = os.environ.get("RLSTUDIO_RAY_JOB_PREFIX", "rls")
# The Python (with the trainer installed) and the folder a run's job starts in, on the
# cluster's machines. The defaults suit the embedded local head: this venv and checkout.
RLSTUDIO_TRAINER_PYTHON = os.environ.get("RLSTUDIO_TRAINER_PYTHON", sys.executable)
RLSTUDIO_TRAINER_WORKDIR = os.environ.get("RLSTUDIO_TRAINER_WORKDIR", str(REPO_ROOT))
# Each run checkpoints into <root>/run-<id>; a resumed attempt continues from there. The
# trainers write it and the studio serves it, so on a cluster it is storage both mount at
# this same absolute path (docs/deploy.md). Object-store URLs are refused: the trainer
# would write a local folder named after the URL on whichever node it ran.
RLSTUDIO_CHECKPOINT_ROOT = os.environ.get(
    "RLSTUDIO_CHECKPOINT_ROOT", str(var_dir() / "checkpoints")
)
if "://" in RLSTUDIO_CHECKPOINT_ROOT or not Path(RLSTUDIO_CHECKPOINT_ROOT).is_absolute():
    raise ImproperlyConfigured(
        f"RLSTUDIO_CHECKPOINT_ROOT={RLSTUDIO_CHECKPOINT_ROOT!r} must be an absolute "
        "filesystem path that the Ray nodes and the studio share (e.g. /checkpoints on an "
        "NFS volume or a mounted bucket); URLs and relative paths are not supported."
    )
# A job's one-time bootstrap secret goes into a file in its own folder under the checkpoint
# root, readable by the trainer account alone; the job carries only the file's path
# (studio.runs.handoff). "1" puts the secret itself in the job's environment instead, for a
# cluster that shares no filesystem with the studio: anyone who can list Ray's jobs can
# then redeem it before the trainer does (docs/security.md, not defended).
RLSTUDIO_BOOTSTRAP_VIA_ENV = os.environ.get("RLSTUDIO_BOOTSTRAP_VIA_ENV", "0") == "1"
# How often Celery beat runs reconcile_runs; then the timeout of one request to Ray.
RLSTUDIO_RECONCILE_INTERVAL_S = float(os.environ.get("RLSTUDIO_RECONCILE_INTERVAL_S", "3"))
RLSTUDIO_RAY_TIMEOUT_S = float(os.environ.get("RLSTUDIO_RAY_TIMEOUT_S", "10"))
# A starting attempt Ray does not have is submitted again (same id) after the grace,
# and the run fails once the deadline passes without Ray accepting it.
RLSTUDIO_LAUNCH_GRACE_S = float(os.environ.get("RLSTUDIO_LAUNCH_GRACE_S", "20"))
RLSTUDIO_LAUNCH_DEADLINE_S = float(os.environ.get("RLSTUDIO_LAUNCH_DEADLINE_S", "600"))
# A job still alive this long after its run ended (the trainer reported the end) is stopped.
RLSTUDIO_ORPHAN_GRACE_S = float(os.environ.get("RLSTUDIO_ORPHAN_GRACE_S", "60"))
# How long cancel_run waits for Ray to confirm a stopped job before leaving it to reconcile.
RLSTUDIO_CANCEL_WAIT_S = float(os.environ.get("RLSTUDIO_CANCEL_WAIT_S", "8"))
# A control task delivered this many times (its worker died each time) is dropped.
RLSTUDIO_MAX_TASK_DELIVERIES = int(os.environ.get("RLSTUDIO_MAX_TASK_DELIVERIES", "3"))

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI / Redoc assets served locally, never from a CDN
    "django_filters",
    "django.contrib.postgres",
    "studio.core.apps.CoreConfig",
    "studio.projects.apps.ProjectsConfig",
    "studio.datasets.apps.DatasetsConfig",
    "studio.rewards.apps.RewardsConfig",
    "studio.runs.apps.RunsConfig",
    "studio.telemetry.apps.TelemetryConfig",
    "studio.model_registry.apps.ModelRegistryConfig",
    "studio.evaluations.apps.EvaluationsConfig",
    "studio.sweeps.apps.SweepsConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Before WhiteNoise, so static files and the SPA's pages carry the policy too.
    "studio.core.security.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # A sign-in refused by the login limits, in views outside DRF (the admin's login).
    "studio.core.sign_in.LoginLimitMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "studio.urls"
ASGI_APPLICATION = "studio.asgi.application"
WSGI_APPLICATION = "studio.wsgi.application"

FRONTEND_DIST = REPO_ROOT / "frontend" / "dist"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [FRONTEND_DIST],
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

DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
DATABASES["default"]["OPTIONS"] = {"connect_timeout": 5}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The studio's cache, shared by every web process: Redis, under a key prefix of its own
# (the Celery broker, stream slots and run queue share the database; clearing the cache
# deletes only its keys). studio/core/cache.py.
CACHES = {
    "default": {
        "BACKEND": "studio.core.cache.PrefixedRedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "rlstudio:cache",
        "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
    }
}

# Every password sign-in (the API's session login, the admin's) passes the login limits
# in this backend (studio/core/sign_in.py, studio/core/login_limits.py): sign-in attempts
# per client address (DRF's rate syntax), wrong passwords per account.
AUTHENTICATION_BACKENDS = ["studio.core.sign_in.LimitedModelBackend"]
# Notifications (studio.projects.notify): hosts on private addresses a project's webhook
# may still reach (comma separated: the operator's choice), each post's time limit, and
# the mail server members' emails go through (empty: no email is sent).
RLSTUDIO_WEBHOOK_ALLOWED_HOSTS = os.environ.get("RLSTUDIO_WEBHOOK_ALLOWED_HOSTS", "").split(",")
RLSTUDIO_WEBHOOK_TIMEOUT_S = float(os.environ.get("RLSTUDIO_WEBHOOK_TIMEOUT_S", "5"))
EMAIL_HOST = os.environ.get("RLSTUDIO_EMAIL_HOST", "")
EMAIL_PORT = int(os.environ.get("RLSTUDIO_EMAIL_PORT", "25"))
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = os.environ.get("RLSTUDIO_EMAIL_FROM", "rl-studio@localhost")
RLSTUDIO_LOGIN_RATE = os.environ.get("RLSTUDIO_LOGIN_RATE", "10/min")
# The client's address is REMOTE_ADDR, or with RLSTUDIO_TRUSTED_PROXIES=N the address N
# proxies in front of the studio put in X-Forwarded-For: never a header a client sets for
# itself (it would pick its own limit's key).
RLSTUDIO_TRUSTED_PROXIES = int(os.environ.get("RLSTUDIO_TRUSTED_PROXIES", "0"))

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", var_dir() / "staticfiles"))
STATICFILES_DIRS = [d for d in [FRONTEND_DIST / "assets"] if d.exists()]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# The built frontend is served from its dist folder at the site root (index.html, assets/).
WHITENOISE_ROOT = FRONTEND_DIST if FRONTEND_DIST.exists() else None
# Uploaded dataset files (normalised parquet) live here; never served as static files.
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", var_dir() / "media"))

# Dataset uploads larger than this are refused with 413, checked from Content-Length
# before the body is read and again while it streams to a temporary file.
RLSTUDIO_MAX_UPLOAD_BYTES = int(os.environ.get("RLSTUDIO_MAX_UPLOAD_BYTES", str(512 * 1024**2)))
# Uploads that decode to more than this (a parquet file's declared uncompressed size, a
# text file's size) become versions in the background (`workers.import_dataset`): the
# API answers 202 and the dataset's `imports` show the progress. Small, so the web
# process never holds a large decoded table.
RLSTUDIO_ASYNC_IMPORT_BYTES = int(os.environ.get("RLSTUDIO_ASYNC_IMPORT_BYTES", str(8 * 1024**2)))
# Bounds on what one dataset import may decode (studio/datasets/limits.py), checked
# from the parquet footer before decoding and again while streaming.
RLSTUDIO_IMPORT_MAX_DECODED_BYTES = int(
    os.environ.get("RLSTUDIO_IMPORT_MAX_DECODED_BYTES", str(256 * 1024**2))
)
RLSTUDIO_IMPORT_MAX_ROWS = int(os.environ.get("RLSTUDIO_IMPORT_MAX_ROWS", "1000000"))
RLSTUDIO_IMPORT_MAX_CELL_CHARS = int(os.environ.get("RLSTUDIO_IMPORT_MAX_CELL_CHARS", "262144"))
# Under the import task's hard time limit (270 s), so a slow file fails with this message.
RLSTUDIO_IMPORT_MAX_SECONDS = float(os.environ.get("RLSTUDIO_IMPORT_MAX_SECONDS", "240"))
# The most one page of a dataset version's rows (a preview, a diff) may hold, counted as
# decoded data and as the JSON sent (studio/datasets/pages.py); a longer page is cut.
RLSTUDIO_PREVIEW_MAX_BYTES = int(os.environ.get("RLSTUDIO_PREVIEW_MAX_BYTES", str(4 * 1024**2)))
# The run queue's fair share (studio/runs/fair_share.py). Running jobs (runs and
# evaluations starting, running or cancelling, and live playground model servers) one
# project, and one user across their projects, may hold at once; the rest wait without
# holding up anyone else's. 0: no cap. A queued run passed over this many times (other
# runs took what it waited for) reserves resources until it fits (0: at once).
RLSTUDIO_PROJECT_MAX_RUNNING_JOBS = int(os.environ.get("RLSTUDIO_PROJECT_MAX_RUNNING_JOBS", "4"))
RLSTUDIO_USER_MAX_RUNNING_JOBS = int(os.environ.get("RLSTUDIO_USER_MAX_RUNNING_JOBS", "8"))
RLSTUDIO_QUEUE_RESERVE_AFTER_PASSES = int(
    os.environ.get("RLSTUDIO_QUEUE_RESERVE_AFTER_PASSES", "3")
)
# The disk one project's runs, datasets and hub models may take, in GiB (0: no quota);
# at or over it the project's new runs are refused until runs are deleted
# (studio/runs/quota.py).
RLSTUDIO_PROJECT_STORAGE_QUOTA_GB = float(os.environ.get("RLSTUDIO_PROJECT_STORAGE_QUOTA_GB", "0"))
# Projects one user may create through the API (0: no limit).
RLSTUDIO_USER_MAX_PROJECTS = int(os.environ.get("RLSTUDIO_USER_MAX_PROJECTS", "20"))
# Live streams (SSE) one user may hold open at once, across every web process.
RLSTUDIO_SSE_MAX_STREAMS_PER_USER = int(os.environ.get("RLSTUDIO_SSE_MAX_STREAMS_PER_USER", "12"))
# Reward test-runs (docs/rewards.md): wall-clock budget for scoring the rows of one
# test-run, in seconds; rows that no longer fit are reported as skipped.
RLSTUDIO_REWARD_TEST_BUDGET_S = float(os.environ.get("RLSTUDIO_REWARD_TEST_BUDGET_S", "30"))
# Wall-clock limit of sampling a test-run's completions (`python -m trainer sample`).
RLSTUDIO_REWARD_TEST_SAMPLE_LIMIT_S = float(
    os.environ.get("RLSTUDIO_REWARD_TEST_SAMPLE_LIMIT_S", "120")
)
# The offline demo model test-runs sample from (built by seed_demo / make-demo-model).
RLSTUDIO_DEMO_MODEL_DIR = Path(
    os.environ.get("RLSTUDIO_DEMO_MODEL_DIR", str(var_dir() / "demo-model"))
)
# Folders (separated by the OS path separator) whose model folders projects may add as
# models; a request picks one by its id, never by path (studio.model_registry.locations).
RLSTUDIO_MODEL_ROOTS = [
    p for p in os.environ.get("RLSTUDIO_MODEL_ROOTS", "").split(os.pathsep) if p.strip()
]
# The most a hub model download may fetch (studio.model_registry.hub), bytes.
RLSTUDIO_HUB_MAX_BYTES = int(os.environ.get("RLSTUDIO_HUB_MAX_BYTES", str(20 * 1024**3)))
# The chat playground (docs/evaluate.md): a model server (a Ray job per project and
# model) is released after this many seconds without a request; it reserves this share
# of a CPU on the cluster (fractional, so a warm model never keeps a run from starting)
# and decodes on this many threads; a server silent for longer than the start timeout
# while starting is taken for dead and started again.
RLSTUDIO_PLAYGROUND_IDLE_SECONDS = float(os.environ.get("RLSTUDIO_PLAYGROUND_IDLE_SECONDS", "600"))
RLSTUDIO_PLAYGROUND_CPUS = float(os.environ.get("RLSTUDIO_PLAYGROUND_CPUS", "0.5"))
RLSTUDIO_PLAYGROUND_THREADS = int(os.environ.get("RLSTUDIO_PLAYGROUND_THREADS", "1"))
RLSTUDIO_PLAYGROUND_START_TIMEOUT_S = float(
    os.environ.get("RLSTUDIO_PLAYGROUND_START_TIMEOUT_S", "180")
)
# The longest reply one request may ask for, tokens.
RLSTUDIO_PLAYGROUND_MAX_NEW_TOKENS = int(
    os.environ.get("RLSTUDIO_PLAYGROUND_MAX_NEW_TOKENS", "1024")
)
# Refuse to run user reward code when a sandbox protection is missing on this host
# (always by default; set RLSTUDIO_SANDBOX_REQUIRE_FULL_ISOLATION=0 to allow less).
RLSTUDIO_SANDBOX_REQUIRE_FULL_ISOLATION = (
    os.environ.get("RLSTUDIO_SANDBOX_REQUIRE_FULL_ISOLATION", "1") == "1"
)

# Live streams (Server-Sent Events, docs/telemetry.md): a comment line after this many
# idle seconds keeps proxies from closing the stream; at most this many streams per web
# process (each holds a Redis connection), each recycled after this many seconds (the
# client reconnects with Last-Event-ID and loses nothing).
RLSTUDIO_SSE_HEARTBEAT_S = float(os.environ.get("RLSTUDIO_SSE_HEARTBEAT_S", "15"))
RLSTUDIO_SSE_MAX_STREAMS = int(os.environ.get("RLSTUDIO_SSE_MAX_STREAMS", "500"))
RLSTUDIO_SSE_MAX_STREAM_S = float(os.environ.get("RLSTUDIO_SSE_MAX_STREAM_S", "3600"))

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "studio.api.common.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",  # enforces CSRF
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "studio.api.common.pagination.StandardPagination",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    # The API reads JSON; an upload endpoint names multipart itself (datasets' versions
    # and columns). Any other body type is a 415. Deep nesting is a 400, not a server error
    # (studio/api/common/parsers.py).
    "DEFAULT_PARSER_CLASSES": ["studio.api.common.parsers.JSONParser"],
    "TEST_REQUEST_DEFAULT_FORMAT": "json",  # DRF's test client, as the API reads
    "EXCEPTION_HANDLER": "studio.api.common.errors.api_exception_handler",
    # A DRF throttle finds the client's address as the login limits do.
    "NUM_PROXIES": RLSTUDIO_TRUSTED_PROXIES,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "RL Studio API",
    "DESCRIPTION": "Projects, datasets, reward functions, runs, metrics and rollout samples.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "studio.runs.models.RunStatus",
        "RewardTestRunStatusEnum": "studio.rewards.models.RewardTestRun.Status",
        "RoleEnum": "studio.projects.models.Role",  # a project role; turns have TurnRole
        "TokenScopeEnum": "studio.projects.models.TokenScope",
        "InvitationStatusEnum": "studio.projects.models.InvitationStatus",
        "TurnRoleEnum": "studio.telemetry.ingest.records.TURN_ROLES",
        "RunValidationEnum": "studio.runs.models.RUN_VALIDATION",  # as stored
        "ValidationEnum": "studio.references.kinds.validation.VALIDATION_CHOICES",  # as requested
        "RunKindEnum": "studio.runs.models.RunKind",
        "NotificationEventEnum": "studio.projects.models.NotificationEvent",
        "EvaluatedModelKindEnum": "studio.evaluations.serializers.EVALUATED_KINDS",
        "BuiltinRewardEnum": "trainer.rewards.builtins.BUILTIN_NAMES",
        "SweepStatusEnum": "studio.sweeps.models.SweepStatus",
        "TrialStateEnum": "studio.sweeps.models.TrialState",
        "StartupPhaseEnum": "trainer.reporting.startup.PHASES",
    },
}

CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}

if PRODUCTION:
    SECURE_SSL_REDIRECT = os.environ.get("SECURE_SSL_REDIRECT", "1") == "1"
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    # Served over plain HTTP inside the cluster, never redirected: health probes, and the
    # trainers' ingest and dataset requests to RLSTUDIO_URL (docs/deploy.md).
    SECURE_REDIRECT_EXEMPT = [r"^api/health$", r"^api/ingest/"]
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    CSRF_TRUSTED_ORIGINS = [
        o for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
    ]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
# CSRF refusals of /api/ views in the API's error format (studio/core/security.py).
CSRF_FAILURE_VIEW = "studio.core.security.csrf_failure"
