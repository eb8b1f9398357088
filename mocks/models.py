"""Persisted definitions of the mocks app: workspaces and mocks (ARCHITECTURE seam 6).

Rows are written only by :mod:`mocks.control`, inside a transaction, and the same service
pushes the result to the engine. Indexed columns carry what lists filter on; the protocol
configuration (the value of the mock's ``http``/``grpc``/... key) is kept as JSON in
:attr:`Mock.config`, exactly as validated by :mod:`mocks.config`.

Source: SPEC "Mock", "Admin-side records" (Workspace); behavior notes §1 "Workspaces", §12.
"""
from __future__ import annotations

from django.db import models

#: Id of the default workspace (SPEC "Mock": "default workspace id is `local`").
DEFAULT_WORKSPACE_ID = "local"


class Workspace(models.Model):
    """A named set of mocks served under a base path (behavior notes §12).

    ``id`` is ``local`` for the default workspace, ``ws_<16 hex>`` for the others.
    """

    id = models.CharField(primary_key=True, max_length=64)
    name = models.CharField(max_length=200, unique=True)
    type = models.CharField(max_length=32, default="local")
    description = models.TextField(blank=True, default="")
    base_path = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"


class Mock(models.Model):
    """One mock definition of any type.

    Attributes (beyond the SPEC fields): ``position`` is the creation/file order used as the
    final precedence tie-breaker; ``path`` and ``method`` are copied out of the protocol
    configuration for listing and search; ``config`` holds the protocol object.
    """

    id = models.CharField(primary_key=True, max_length=200)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="mocks",
                                  default=DEFAULT_WORKSPACE_ID)
    type = models.CharField(max_length=16, db_index=True)
    name = models.CharField(max_length=500, blank=True, default="")
    description = models.TextField(blank=True, default="")
    enabled = models.BooleanField(default=True, db_index=True)
    path = models.CharField(max_length=2000, blank=True, default="", db_index=True)
    method = models.CharField(max_length=16, blank=True, default="")
    parent_id = models.CharField(max_length=200, blank=True, default="", db_index=True)
    meta_sort_key = models.FloatField(null=True, blank=True)
    position = models.BigIntegerField(default=0, db_index=True)
    config = models.JSONField(default=dict)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["position", "created_at"]

    def __str__(self) -> str:
        label = self.name or self.path or self.id
        return f"{self.type} mock {label}"


class Folder(models.Model):
    """A folder that groups mocks in the dashboard (behavior notes §1 "Other routes").

    Mocks reference a folder by their ``parent_id``; a folder may sit in another folder of
    the same workspace (``parent_id``, empty at the root). Written only by
    :mod:`mocks.control.folders`. ``id`` is ``fld_<16 hex>``.
    """

    id = models.CharField(primary_key=True, max_length=64)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="folders",
                                  default=DEFAULT_WORKSPACE_ID)
    name = models.CharField(max_length=200)
    parent_id = models.CharField(max_length=64, blank=True, default="", db_index=True)
    meta_sort_key = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"folder {self.name} ({self.id})"


class Preference(models.Model):
    """A JSON document of dashboard preferences, stored under ``key`` (one row,
    ``dashboard``; behavior notes §1 "Other routes"). Written only by
    :mod:`mocks.control.preferences`."""

    key = models.CharField(primary_key=True, max_length=64)
    value = models.JSONField(default=dict)
    updated_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"preferences {self.key}"
