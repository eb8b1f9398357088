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
