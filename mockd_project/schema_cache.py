"""A migrated, empty admin database kept once per schema, copied into new data dirs.

Django's ``migrate`` on a fresh SQLite file applies every migration of the installed apps
(about 0.5 s of CPU at each first start). The first start with a given schema saves the freshly
migrated database (before anything else is written to it) as a template; later first starts
with the same schema copy the template and ``migrate`` only confirms that nothing is left to
apply. The template's name is a hash of the Django version and the content of every migration
file of the installed apps, so a changed migration never reuses an old template.

Where: ``$MOCKD_SCHEMA_CACHE``, else ``$XDG_CACHE_HOME/mockd``, else ``~/.cache/mockd``
(created 0700; templates 0600). An unusable cache folder only costs the full migration.
Not used for ``--no-persist`` (in-memory database) or ``MOCKD_DATABASE`` files.
"""
from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import tempfile
from pathlib import Path

log = logging.getLogger("mockd.schema")


def cache_folder() -> Path:
    """The folder of schema templates (see the module docstring)."""
    explicit = os.environ.get("MOCKD_SCHEMA_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "mockd"


def schema_key() -> str:
    """Hash of the Django version and every migration file of the installed apps."""
    import django
    from django.apps import apps

    digest = hashlib.sha256(django.get_version().encode())
    for config in sorted(apps.get_app_configs(), key=lambda app: app.label):
        folder = Path(config.path) / "migrations"
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.py")):
            digest.update(f"{config.label}/{path.name}".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


def template_path() -> Path:
    """This schema's template file (it may not exist yet)."""
    return cache_folder() / f"admin-schema-{schema_key()}.sqlite3"


def seed_from_template(database: Path) -> Path | None:
    """Before ``migrate`` of a database file that does not exist yet: copy this schema's
    template to it when there is one (0600). Returns the template path to save after
    ``migrate`` when there is none (or None when the template was used or the cache cannot
    be used)."""
    return seed(database)[1]


def seed(database: Path) -> tuple[bool, Path | None]:
    """:func:`seed_from_template`, telling also whether the template was copied:
    ``(copied, template to save after migrate or None)``. A copied template is this schema's
    fully migrated database (its name hashes every migration file), so ``migrate`` has
    nothing to apply to it."""
    try:
        template = template_path()
        if template.is_file():
            # Written whole under a temporary name, then linked into place: a start killed
            # half-way leaves no truncated database that every later start would refuse.
            fd, temporary = tempfile.mkstemp(prefix=".mockd-schema-", dir=database.parent)
            try:
                with os.fdopen(fd, "wb") as target:
                    target.write(template.read_bytes())
                    target.flush()
                    os.fsync(target.fileno())
                os.link(temporary, database)  # fails when the database exists
            finally:
                os.unlink(temporary)
            return True, None
        return False, template
    except OSError as error:
        log.debug("schema template not used: %s", error)
        return False, None


def save_template(database: Path, template: Path) -> None:
    """After ``migrate`` of a new database: store a consistent copy of it as ``template``
    (SQLite's backup API, then an atomic rename; a concurrent first start wins or loses the
    rename harmlessly)."""
    try:
        template.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".schema-", dir=template.parent)
        os.close(fd)
        os.chmod(temporary, 0o600)
        source = sqlite3.connect(str(database))
        target = sqlite3.connect(temporary)
        try:
            source.backup(target)
        finally:
            target.close()
            source.close()
        os.replace(temporary, template)
    except (OSError, sqlite3.Error) as error:
        log.debug("schema template not saved: %s", error)
