"""mockd as a library: mock servers inside a Python process and a pytest plugin.

``from mockd import MockServer`` runs the mockd engine (the data plane: every protocol,
tables, chaos) in a background thread on a free loopback port, without Django; the pytest
plugin (``mockd.pytest_plugin``) gives tests a fresh or reset server per test.
"""
