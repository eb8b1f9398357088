"""Django settings for the admin side of mockd.

The data plane never reads these (ARCHITECTURE seam 2). Values come from the ``MOCKD_*``
environment the runner sets before ``django.setup()``.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

from mockd_project.paths import default_data_dir, ensure_private_dir, write_private_file

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("MOCKD_DATA_DIR") or default_data_dir())


def _secret_key() -> str:
    """``$MOCKD_SECRET_KEY``, else ``<data dir>/secret-key`` (created 0600 on first use, the
    data directory 0700 if it is new), so Django-admin sessions are not signed with a key
    everybody knows."""
    if os.environ.get("MOCKD_SECRET_KEY"):
        return os.environ["MOCKD_SECRET_KEY"]
    path = DATA_DIR / "secret-key"
    try:
        existing = path.read_text(encoding="utf-8").strip()
    except OSError:
        existing = ""
    if existing:
        return existing
    key = secrets.token_urlsafe(50)
    try:
        ensure_private_dir(DATA_DIR)
        write_private_file(path, key + "\n")
    except OSError:
        pass  # a read-only data directory: the key then lives for this process only
    return key


SECRET_KEY = _secret_key()
DEBUG = False
# The admin gateway checks Host before Django sees a request (mocks.engine.hosts: loopback
# names, IP addresses, --allowed-host), so Django itself accepts any.
ALLOWED_HOSTS = ["*"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    # Before staticfiles: the first app to define a management command wins, and mocks'
    # `runserver` refuses to serve the admin API without its gateway (API key, origin and
    # Host checks); the server is `manage.py runmocks` / `mockd start`.
    "mocks",
    "django.contrib.staticfiles",
    "django_prometheus",
    "ninja",
    "tables",
    "oidc",
    "proxy",
    "recordings",
    "chaos",
]

# django-prometheus' two middlewares wrap the others: the first and the last of the chain.
MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

ROOT_URLCONF = "mockd_project.urls"

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

#: ``--no-persist`` keeps every definition in a shared in-memory SQLite database that lives as
#: long as the process (behavior notes §15).
PERSIST = os.environ.get("MOCKD_NO_PERSIST", "") not in ("1", "true", "yes")

if PERSIST:
    DATABASES = {
        "default": {
            "ENGINE": "django_prometheus.db.backends.sqlite3",
            "NAME": os.environ.get("MOCKD_DATABASE") or str(DATA_DIR / "mockd.sqlite3"),
            # WAL: admin reads do not wait for writes; each change is one durable commit
            # (survives kill -9: the data is in the OS once the commit returns).
            # IMMEDIATE: a change takes the write lock when its transaction begins, so two
            # writers (an admin change, the first-start superuser thread) queue on the busy
            # timeout instead of failing with "database is locked" on a lock upgrade.
            "OPTIONS": {"init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                        "timeout": 10, "transaction_mode": "IMMEDIATE"},
        }
    }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django_prometheus.db.backends.sqlite3",
            "NAME": "file:mockd-memory?mode=memory&cache=shared",
            "OPTIONS": {"timeout": 10, "transaction_mode": "IMMEDIATE"},
        }
    }

#: django-prometheus' latency and query-duration buckets: the admin metrics' buckets (0.001 ...
#: 10 s, as ``mocks.engine.requestlog.DURATION_BUCKETS``), so that
#: ``mockd_admin_request_duration_seconds`` can be summed from its per-view histogram.
PROMETHEUS_LATENCY_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
                              float("inf"))

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
TIME_ZONE = "UTC"
STATIC_URL = "static/"
#: The dashboard's scripts, styles and vendored libraries (``static/``; no CDN).
STATICFILES_DIRS = [BASE_DIR / "static"]
APPEND_SLASH = False
#: Behavior notes §3: the admin port answers with this referrer policy.
SECURE_REFERRER_POLICY = "strict-origin-when-cross-origin"
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("MOCKD_LOG_LEVEL", "WARNING")},
    # Every 4xx of the admin API is an answer, not a server problem: keep them out of the log.
    "loggers": {"django.request": {"level": "ERROR"}},
}
