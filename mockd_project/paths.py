"""Default file locations (behavior notes §15 "Data dir")."""
from __future__ import annotations

import os
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
    when it cannot be created (behavior notes §2: secrets live 0600 in a 0700 directory)."""
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(path, 0o700)
    return path
