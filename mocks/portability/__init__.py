"""Ways in and out of mockd: importers (OpenAPI, Postman, HAR, WireMock, Mockoon, WSDL, cURL,
native) and exporters (native, OpenAPI, Postman, Insomnia), behind one registry each.

Every importer returns the same :class:`~.importers.result.ImportResult` (mocks, tables,
warnings), detected by :func:`~.importers.detect_format`; exporters start from the native
collection. Who may call it: the config loader (``imports:`` entries), the CLI and the admin
API. Django-free.
"""
