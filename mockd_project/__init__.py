"""mockd: the Django project that assembles the mock server (settings, routing, CLI, runner)."""

__version__ = "0.1.0"
