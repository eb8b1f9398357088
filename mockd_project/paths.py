"""Default file locations and safe writes of private files (behavior notes §2 "secrets live
0600 in a 0700 directory", §15 "Data dir", §16 engine token).

Every secret mockd writes (the admin API key, the engine token, Django's secret key, the
Django-admin password, the generated TLS key) goes through :func:`write_private_file`: a new
file created with ``O_EXCL | O_NOFOLLOW`` under a random name in the target's folder, then
renamed over the target. A symbolic link planted at the target or at a guessable temporary
name is never followed, so nobody can make mockd overwrite another file through it.
"""
from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path


def default_data_dir() -> Path:
    """``$MOCKD_DATA_DIR``, else ``$XDG_DATA_HOME/mockd``, else ``~/.local/share/mockd``."""
    if os.environ.get("MOCKD_DATA_DIR"):
        return Path(os.environ["MOCKD_DATA_DIR"]).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg:
        return Path(xdg) / "mockd"
    return Path.home() / ".local" / "share" / "mockd"


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and its parents) if missing, the folder itself with mode 0700 whatever
    the umask; an existing folder keeps its mode. Returns ``path``. Raises :class:`OSError`
    when it cannot be created (behavior notes §2: secrets live 0600 in a 0700 directory).

    For a folder the user chose (the data directory). A folder in a place every user can
    write to (``/tmp``) needs :func:`ensure_owned_private_dir` instead."""
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(path, 0o700)
    return path


class UnsafeDirectoryError(OSError):
    """A folder mockd would keep a secret in is not private to the current user.

    Attributes:
        path: the folder.
        problem: what is wrong, as a sentence fragment (``is a symbolic link``, ``belongs to
            uid 1001, not to uid 1000``, ``is open to other users (mode 0777)``).
    """

    def __init__(self, path: Path, problem: str):
        super().__init__(f"{path} {problem}")
        self.path = path
        self.problem = problem


def private_dir_problem(path: Path) -> str | None:
    """Why ``path`` is not a safe home for secrets, or None when it is: it must be a real
    directory (not a symbolic link), owned by the current user, with no permission for the
    group or others (``mode & 0o077 == 0``). Looked at with ``lstat``, so a link is never
    followed. Raises :class:`OSError` when ``path`` cannot be examined (missing included)."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return "is not a directory"
    if info.st_uid != os.getuid():
        return f"belongs to uid {info.st_uid}, not to uid {os.getuid()}"
    if info.st_mode & 0o077:
        return f"is open to other users (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def ensure_owned_private_dir(path: Path) -> Path:
    """Create the folder ``path`` with mode 0700 (its parents as needed) and check that it is
    private to the current user (:func:`private_dir_problem`); one found there already is
    checked the same way and never changed. Returns ``path``.

    Raises :class:`UnsafeDirectoryError` when the folder is a symbolic link, not a directory,
    another user's, or open to the group or others (another local user may have made it
    first, in ``/tmp``); :class:`OSError` when it cannot be created.
    Source: behavior notes §16 (engine token); docs/security.md "The engine-control port".
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(path, 0o700)  # the umask can only narrow this
    except FileExistsError:
        pass
    problem = private_dir_problem(path)
    if problem is not None:
        raise UnsafeDirectoryError(path, problem)
    return path


def write_private_file(path: Path, content: str | bytes, mode: int = 0o600) -> None:
    """Replace ``path`` with ``content`` (text is written UTF-8) atomically, the file mode
    ``mode`` (default 0600) whatever the umask.

    The content goes to a new file under a random name in the same folder, opened with
    ``O_CREAT | O_EXCL | O_NOFOLLOW``, which is then renamed over ``path``: a symbolic link at
    ``path`` is replaced, never followed, and a half-written file is never seen (the content
    is flushed to disk, ``fsync``, before the rename). Raises
    :class:`OSError` (the temporary file is removed).
    """
    data = content.encode("utf-8") if isinstance(content, str) else content
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0))
    descriptor = os.open(temporary, flags, mode)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            # On disk before it takes the name: after a power loss the file holds the old
            # content or the new one, never an empty one (keys, certificates, the pid file).
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def read_private_file(path: Path) -> str:
    """The text of the private file ``path``, stripped (``""`` when it is missing). A symbolic
    link is not followed and anything but a regular file is refused (:class:`OSError`); a
    file readable by others is narrowed to 0600. Raises :class:`OSError` when it cannot be
    read."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return ""
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if info.st_mode & 0o077 and info.st_uid == os.getuid():
            os.fchmod(handle.fileno(), 0o600)
        return handle.read().decode("utf-8").strip()
