"""The control plane's services: what the admin API, the Django admin and the CLI's config
commands call to change what mockd serves (ARCHITECTURE "Layout": ``mocks/control/``).

* :mod:`~mocks.control.errors`: the admin error type :class:`~mocks.control.errors.AdminError`
  (``{error, message}`` with a status); Django-free;
* :mod:`~mocks.control.documents`: stored mocks as API documents, posted bodies validated
  against the one config schema, ids, timestamps and slugs;
* :mod:`~mocks.control.commit`: :func:`~mocks.control.commit.commit_change`, the one
  transaction per change and telling the engine before it commits;
* :mod:`~mocks.control.mock_changes`, :mod:`~mocks.control.workspaces` and
  :mod:`~mocks.control.configuration`: mocks, workspaces and whole configs (export, import);
* :mod:`~mocks.control.folders` and :mod:`~mocks.control.preferences`: the dashboard's
  folders of mocks and its preferences object;
* :mod:`~mocks.control.port_sharing`: a gRPC or MQTT mock posted for a port its workspace
  already serves joins that port's mock (the protocols' merges call it);
* :mod:`~mocks.control.mock_templates`: the built-in mock templates;
* :mod:`~mocks.control.config_schema`: the published JSON Schema of the config file.

Who may call it: the admin side (``mocks/api.py``, protocol folders' ``api.py`` and
``port_sharing.py``, ``mocks/admin.py``, ``tables/``' services and the CLI). The engine never
imports it (an import-linter contract says so). Changes run in Django's request threads, each
inside one database transaction; the engine hears of them through ``EngineControl`` on
commit, never by shared dicts.
"""
