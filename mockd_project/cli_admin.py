"""``mockd admin key`` and ``mockd admin password``: the admin secrets of a server, on demand.

A server never writes its secrets to a log: started in the background or with its output
redirected, it names the files holding them instead (:func:`mockd_project.auth.shows_secrets`).
These commands read those files for the user:

* ``mockd admin key [--data-dir D]`` prints the admin API key of the running server (the
  PID file names its data directory), else of ``D``, else of the default data directory;
* ``mockd admin password [--data-dir D] [--reset]`` prints the Django admin login (user name
  and password, kept 0600 in ``<data dir>/django-admin-password``); ``--reset`` gives the
  superuser a new password, stored in the database and in that file.

Both print the secret on stdout, so ``KEY=$(mockd admin key)`` works; errors are one line
``Error: ...`` with exit 1.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

import click

from mockd_project.auth import api_key_path
from mockd_project.cli_client import ClientError, running_server, shown_path
from mockd_project.paths import default_data_dir, write_private_file

#: User name of the superuser mockd creates on first start.
DJANGO_ADMIN_USER = "admin"


def _data_dir(explicit: str | None) -> tuple[Path, dict | None]:
    """``--data-dir``, else the running server's (PID file), else the default data
    directory; with the PID file's document when it was used."""
    if explicit:
        return Path(explicit).expanduser().absolute(), None
    _, document, _ = running_server()
    if document is not None and document.get("dataDir"):
        return Path(document["dataDir"]), document
    return default_data_dir(), None


@click.group("admin")
def admin_group() -> None:
    """The admin API key and the Django admin login of a server."""


@admin_group.command("key")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="Data directory (default: the running server's, else "
                   "$MOCKD_DATA_DIR or ~/.local/share/mockd).")
def admin_key(data_dir: str | None) -> None:
    """Print the admin API key (of the running server, or of the data directory).

    Use it as ``curl -H "X-API-Key: $(mockd admin key)" ...``.
    """
    folder, document = _data_dir(data_dir)
    source = ((document or {}).get("apiKey") or {}).get("source")
    if source == "none":
        raise ClientError("the running server was started with --no-auth: it needs no key")
    if source == "MOCKD_API_KEY":
        key = os.environ.get("MOCKD_API_KEY", "").strip()
        if not key:
            raise ClientError("the running server takes its key from MOCKD_API_KEY, which is "
                              "not set here")
        click.echo(key)
        return
    path = api_key_path(folder)
    key = _read_secret(path)
    if not key:
        raise ClientError(f"no admin API key in {shown_path(path)}: no server has started "
                          f"with this data directory yet; pass the server's --data-dir")
    click.echo(key)


def reset_django_admin_password(data_dir: Path) -> tuple[str, str]:
    """Give the Django admin's superuser of ``data_dir`` a new random password, in the
    database and in ``<data dir>/django-admin-password`` (0600); create the superuser
    ``admin`` when there is none. Returns ``(user name, password)``.

    Sets Django up for ``data_dir`` with the runner's helpers (and migrates its database), so
    it may run only once per process. Raises
    :class:`mockd_project.runner.StartupFailure` when Django cannot be set up for it.
    """
    from mockd_project.daemon import ADMIN_PASSWORD_FILE_NAME, use_cheap_password_hasher_in_tests
    from mockd_project.runner import RunOptions, setup_admin_database

    folder = setup_admin_database(RunOptions(data_dir=str(data_dir)))
    use_cheap_password_hasher_in_tests()
    from django.contrib.auth import get_user_model

    password = secrets.token_urlsafe(12)
    users = get_user_model()
    user = (users.objects.filter(is_superuser=True, username=DJANGO_ADMIN_USER).first()
            or users.objects.filter(is_superuser=True).order_by("id").first())
    if user is None:
        user = users.objects.create_superuser(DJANGO_ADMIN_USER, "", password)
    else:
        user.set_password(password)
        user.save(update_fields=["password"])
    write_private_file(folder / ADMIN_PASSWORD_FILE_NAME, password + "\n")
    return user.get_username(), password


@admin_group.command("password")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="Data directory (default: the running server's, else "
                   "$MOCKD_DATA_DIR or ~/.local/share/mockd).")
@click.option("--reset", is_flag=True,
              help="Set a new password (stored in the database and in the data directory).")
def admin_password(data_dir: str | None, reset: bool) -> None:
    """Print (or --reset) the Django admin login at http://localhost:4290/admin/."""
    from mockd_project.daemon import ADMIN_PASSWORD_FILE_NAME

    folder, document = _data_dir(data_dir)
    path = folder / ADMIN_PASSWORD_FILE_NAME
    if reset:
        if document is not None and document.get("persist") is False:
            raise ClientError("the running server keeps its data in memory (--no-persist); "
                              "its Django admin login lives only in that process")
        from mockd_project.runner import StartupFailure

        try:
            user, password = reset_django_admin_password(folder)
        except StartupFailure as failure:
            raise ClientError(failure.message) from None
        click.echo(f"User:     {user}")
        click.echo(f"Password: {password}")
        click.echo(f"(new password stored in {shown_path(path)})")
        return
    password = _read_secret(path)
    if not password:
        raise ClientError(f"no Django admin password in {shown_path(path)}: no server has "
                          f"started with this data directory yet (pass the server's "
                          f"--data-dir), or set one with 'mockd admin password --reset'")
    click.echo(f"User:     {DJANGO_ADMIN_USER}")
    click.echo(f"Password: {password}")
    click.echo(f"(from {shown_path(path)}; if it was changed at /admin/password_change/ "
               f"since, set a new one with 'mockd admin password --reset')")


def _read_secret(path: Path) -> str:
    """The stripped text of a secret file; ``""`` when it does not exist. Raises
    :class:`ClientError` naming the file when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return ""
    except OSError as error:
        raise ClientError(f"cannot read {shown_path(path)}: {error.strerror or error}") \
            from None
