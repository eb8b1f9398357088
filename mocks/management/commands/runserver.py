"""``python manage.py runserver`` refused: it would serve the admin API without its gateway.

Django's development server (and ``django.contrib.staticfiles``' version of it, which this
command replaces because ``mocks`` comes before ``staticfiles`` in ``INSTALLED_APPS``) serves
the bare Django application: no API key, no origin or ``Host`` checks, no rate limit. Writes
and deletes would reach the real store of the data directory. The admin port is served only
by ``python manage.py runmocks`` / ``mockd start``, through
:func:`mockd_project.middleware.build_admin_application`.

Source: SPEC "Authentication"; docs/security.md "The admin port: API key, origins and Host".
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError

#: Exit status of the refusal (a usage error, as click's).
EXIT_REFUSED = 2

REFUSAL = ("mockd does not run under 'manage.py runserver': Django's development server would "
           "serve the admin API without its API key, origin and Host checks. Start the server "
           "with 'python manage.py runmocks' (or 'mockd start'); both take --port, "
           "--admin-port and --host, and 'python manage.py runmocks --help' lists the rest.")


class Command(BaseCommand):
    """Refuses to run (exit 2, :data:`REFUSAL` on stderr) whatever its arguments."""

    help = "Refused: use 'python manage.py runmocks' (the same command as 'mockd start')."
    requires_system_checks: list[str] = []

    def run_from_argv(self, argv: list[str]) -> None:
        """``manage.py runserver [anything]``: print :data:`REFUSAL` and exit 2, before any
        argument is parsed (Django's own options such as ``--noreload`` are not known here)."""
        sys.stderr.write(f"CommandError: {REFUSAL}\n")
        sys.exit(EXIT_REFUSED)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Accept anything, so ``call_command("runserver", ...)`` reaches :meth:`handle`."""
        parser.add_argument("args", nargs=argparse.REMAINDER)

    def handle(self, *args: Any, **options: Any) -> None:
        """Raises :class:`CommandError` (exit status 2) with :data:`REFUSAL`."""
        raise CommandError(REFUSAL, returncode=EXIT_REFUSED)
