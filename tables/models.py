"""Persisted definitions of tables, extend bindings and custom operations (seam 6).

Only definitions live here (name, seed data, wiring); runtime items are owned by the engine
and reset to seed data on restart. Each row keeps its config object as JSON exactly as given
in the config file (``tables[i]``, ``extend[i]``, ``customOperations[i]``,
``statefulResources[i]``); the stateful-tables issue gives these shapes their own schema.
Rows are written only by :mod:`mocks.control.configuration` (config import and start with ``-c``).

Source: SPEC "Table", "Extend binding", "Custom operation"; ARCHITECTURE seam 6.
"""
from __future__ import annotations

from django.db import models


class Table(models.Model):
    """A table definition: ``config`` is the ``tables[i]`` object (or a legacy
    ``statefulResources[i]`` object when ``kind`` is ``statefulResource``)."""

    KIND_TABLE = "table"
    KIND_STATEFUL_RESOURCE = "statefulResource"

    workspace = models.ForeignKey("mocks.Workspace", on_delete=models.CASCADE,
                                  related_name="tables", default="local")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=32, default=KIND_TABLE)
    position = models.BigIntegerField(default=0)
    config = models.JSONField(default=dict)

    class Meta:
        ordering = ["position", "id"]
        constraints = [models.UniqueConstraint(fields=["workspace", "kind", "name"],
                                               name="unique_table_name_per_workspace")]

    def __str__(self) -> str:
        return self.name


class Binding(models.Model):
    """An extend binding: ``config`` is the ``extend[i]`` object (mock, table, action)."""

    workspace = models.ForeignKey("mocks.Workspace", on_delete=models.CASCADE,
                                  related_name="bindings", default="local")
    position = models.BigIntegerField(default=0)
    config = models.JSONField(default=dict)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return f"{self.config.get('mock')} -> {self.config.get('table')}"


class CustomOperation(models.Model):
    """A custom operation: ``config`` is the ``customOperations[i]`` object."""

    workspace = models.ForeignKey("mocks.Workspace", on_delete=models.CASCADE,
                                  related_name="custom_operations", default="local")
    name = models.CharField(max_length=200)
    position = models.BigIntegerField(default=0)
    config = models.JSONField(default=dict)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.name
