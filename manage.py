#!/usr/bin/env python
"""Django's command-line utility for mockd (``python manage.py runmocks`` starts the server).

``runmocks`` and ``runengine`` are ``mockd start`` and ``mockd engine`` under another name.
They are dispatched before Django reads its settings: the settings take the data directory
from ``MOCKD_DATA_DIR`` when they are imported, and the runner sets that variable from
``--data-dir`` only once it has parsed the command line.
"""
import os
import sys


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("runmocks", "runengine"):
        from mockd_project.cli import run_management_alias

        run_management_alias(sys.argv[1], sys.argv[2:], sys.argv[0])
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mockd_project.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
