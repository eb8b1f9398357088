"""``python manage.py runmocks``: ``mockd start`` under another name.

``manage.py`` runs it before Django reads its settings (see ``manage.py``). Reached through
``django-admin`` or ``call_command`` instead, Django is already set up; the runner then refuses
a ``--data-dir`` other than the one the settings name rather than serve the wrong folder.
"""
from __future__ import annotations

from mockd_project.management import AliasCommand


class Command(AliasCommand):
    help = "Start the mock server and the admin API (the same command as 'mockd start')."
    alias = "runmocks"
