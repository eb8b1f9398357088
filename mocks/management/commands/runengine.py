"""``python manage.py runengine -c FILE``: ``mockd engine`` under another name (for CI scripts).

``manage.py`` runs it before Django reads its settings (see ``manage.py``).
"""
from __future__ import annotations

from mockd_project.management import AliasCommand


class Command(AliasCommand):
    help = "Headless engine: data plane only (the same command as 'mockd engine')."
    alias = "runengine"
