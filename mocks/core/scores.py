"""Points per matcher condition and the path-specificity ranks.

Source: behavior notes §5. Points rank *near misses* (match percentages); the winner among mocks
that fully match is chosen by :func:`mocks.engine.matching.precedence_key`, which uses
:data:`PATH_SPECIFICITY`, never the summed points.
"""
from __future__ import annotations

METHOD = 10
PATH_EXACT = 15
PATH_PATTERN = 14
PATH_TEMPLATE = 12
PATH_GLOB = 10
HEADER = 10
QUERY_PARAM = 5
#: Each ``matcher.clientCert`` key (the HTTPS client certificate), weighed like a header.
CLIENT_CERT = 10
BODY_EQUALS = 25
BODY_PATTERN = 22
BODY_CONTAINS = 20
BODY_JSON_PATH = 15
#: ``http.scenario.requiredState`` (a condition of its own).
SCENARIO_STATE = 10

# Path specificity, higher wins (behavior notes §5 rule 1):
# exact `path` > `pathPattern` > `path` with `{param}` > `path` with `*` or `{name:.*}` > none.
SPECIFICITY_EXACT = 4
SPECIFICITY_PATTERN = 3
SPECIFICITY_TEMPLATE = 2
SPECIFICITY_GLOB = 1
SPECIFICITY_NONE = 0
