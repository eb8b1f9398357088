"""Builders of OpenAPI documents with many operations, for the import progress tests.

``openapi_document(n)`` has ``n`` operations (a GET and a POST per path, each with an
example body and a described query parameter), sized so that a few thousand operations
make an import that takes a noticeable time without being a benchmark.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def openapi_document(operations: int) -> dict[str, Any]:
    """An OpenAPI 3.0 document with ``operations`` operations on ``/items{N}``."""
    paths: dict[str, Any] = {}
    for index in range(operations):
        path = f"/items{index // 2}"
        method = "get" if index % 2 == 0 else "post"
        paths.setdefault(path, {})[method] = {
            "operationId": f"{method}Items{index // 2}",
            "summary": f"{method.upper()} items number {index // 2}",
            "parameters": [{"name": "filter", "in": "query",
                            "description": "Narrow the answer down. " * 4,
                            "schema": {"type": "string"}}],
            "responses": {"200": {"description": "OK", "content": {"application/json": {
                "example": {"id": index, "name": f"item {index}", "tags": ["a", "b", "c"],
                            "description": "An item of the generated document. " * 3}}}}}}
    return {"openapi": "3.0.3", "info": {"title": "Generated", "version": "1"},
            "paths": paths}


def write_openapi(path: Path, operations: int) -> Path:
    """:func:`openapi_document` written to ``path`` as JSON."""
    path.write_text(json.dumps(openapi_document(operations)))
    return path
