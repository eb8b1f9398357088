"""``mockd proxy`` is a client command module: importing it (and showing its help) loads click
and the admin client only, never Django, cryptography or the proxy server (the CA code is
imported by ``proxy ca generate`` when it runs).

Source: ARCHITECTURE "Protocol handlers" (a client command answers at once);
tests/unit/test_cli_imports.py (the same rule for the other client commands).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
from mockd_project.cli import main
try:
    main.main(args=["proxy", "start", "--help"], prog_name="mockd", standalone_mode=False)
except SystemExit:
    pass
print("MODULES", " ".join(sys.modules))
"""

FORBIDDEN = ("django", "ninja", "pydantic", "cryptography", "proxy.server", "proxy.ca",
             "proxy.manager", "h11", "wsproto", "recordings.store", "mocks.engine")


def test_proxy_cli_help_loads_no_django_cryptography_or_proxy_server(tmp_path):
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          cwd=ROOT, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert "--upstream-ca" in done.stdout
    line = next(line for line in done.stdout.splitlines() if line.startswith("MODULES "))
    loaded = set(line.split()[1:])
    assert "proxy.cli" in loaded
    assert sorted(name for name in loaded for prefix in FORBIDDEN
                  if name == prefix or name.startswith(prefix + ".")) == []
